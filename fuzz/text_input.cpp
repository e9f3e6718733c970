// Fuzz target: the small text inputs of a query (VCZ_FUZZ_TEXT names which): regions on the
// command line and in files (CHROM POS, CHROM BEG END, BED), sample lists and files,
// populations files, and genetic maps (plink .map, HapMap tables, one-region maps). Input: the
// text (for regions, a first byte chooses the form).

#include <sstream>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "stats/haplo_rows.hpp"
#include "vcz/text_file.hpp"
#include "vczstats/populations.hpp"
#include "vczstats/string_table.hpp"
#include "vczstats/vcz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vczstats;
  const std::string_view what = VCZ_FUZZ_TEXT;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    if (what == "regions") {
      if (text.empty()) return 0;
      const char form = text[0];
      text.remove_prefix(1);
      std::vector<vcz::Region> regions;
      if (form % 3 == 0)
        regions = vcz::parse_regions(text);
      else
        regions = vcz::parse_regions_text(text, "regions.txt", form % 3 == 2);
      for (const auto& r : regions)
        if (r.start < 1 || r.end < r.start) __builtin_trap();  // the parsers promise this
    } else if (what == "samples") {
      (void)vcz::split_list(text);
      // The tokeniser (vcz/text_file.hpp) against istream: each line's first word, '#' lines
      // skipped.
      const StringTable names = vcz::parse_samples_text(std::string(text));
      std::istringstream lines{std::string(text)};
      std::int64_t k = 0;
      for (std::string line, word; std::getline(lines, line);) {
        std::istringstream words(line);
        if (!(words >> word) || word.front() == '#') continue;
        if (k >= names.size() || names[k] != word) __builtin_trap();
        ++k;
      }
      if (k != names.size()) __builtin_trap();
    } else if (what == "populations") {
      const auto entries = vcz::parse_populations_text(std::string(text), "pops.txt");
      if (entries.samples.empty())
        __builtin_trap();  // an empty file is an error, not an empty list
    } else if (what == "genetic_map") {
      std::istringstream in{std::string(text)};
      const stats::haplo::GeneticMap map(in, "map.txt");
      // Interpolated positions follow the map's order: never decreasing along a contig.
      for (const char* contig : {"1", "chr1", "20"}) {
        try {
          double last = -1e300;
          for (const std::int64_t pos :
               {std::int64_t{-5}, std::int64_t{1}, std::int64_t{1000}, std::int64_t{1} << 40}) {
            const double cm = map.at(contig, pos);
            if (cm < last && !(cm != cm)) __builtin_trap();
            last = cm;
          }
        } catch (const Error&) {
        }
      }
    } else {
      __builtin_trap();
    }
  } catch (const Error&) {
  }
  return 0;
}
