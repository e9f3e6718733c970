// Region and sample-list parsing with bcftools' conventions.

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>

#include "vcz/text_file.hpp"
#include "vczstats/error.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::vcz {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Parse a positive decimal position; bcftools also accepts thousands separators inside files,
// but a ',' separates regions on the command line, so only digits are accepted here.
std::int64_t parse_position(std::string_view text, std::string_view whole) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0)
    throw UsageError("cannot parse region '" + std::string(whole) +
                     "': expected chr, chr:pos, chr:beg-end or chr:beg-");
  return v;
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
  std::string text;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    // A plain file is read whole into a buffer of its size (a million-line samples file is
    // tens of MB, which zlib would copy through its own buffer); gzip goes through zlib.
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path.string() + ": cannot open: " + std::strerror(errno));
    text.resize(static_cast<std::size_t>(std::filesystem::file_size(path, ec)));
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (ec || in.gcount() != static_cast<std::streamsize>(text.size()))
      throw IoError(path.string() + ": read error");
    if (!text.starts_with("\x1f\x8b")) return text;
    text.clear();
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw IoError(path.string() + ": cannot open: " + std::strerror(errno));
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw IoError(path.string() + ": read error");
  return text;
}

std::vector<std::string> split_list(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    auto next = s.find(sep, pos);
    if (next == std::string_view::npos) next = s.size();
    auto item = trim(s.substr(pos, next - pos));
    if (!item.empty()) out.emplace_back(item);
    pos = next + 1;
  }
  return out;
}

std::vector<Region> parse_regions(std::string_view spec) {
  std::vector<Region> regions;
  for (const auto& item : split_list(spec, ',')) {
    Region r;
    r.spec = item;
    // Contig names may themselves contain ':' (HLA alleles); the last ':' separates the range
    // here, and VczStore::plan() matches the whole spec against contig names first.
    auto colon = item.rfind(':');
    if (colon == std::string::npos) {
      r.contig = item;
    } else {
      r.contig = item.substr(0, colon);
      std::string_view range = std::string_view(item).substr(colon + 1);
      auto dash = range.find('-');
      if (dash == std::string_view::npos) {
        r.start = r.end = parse_position(range, item);
      } else {
        r.start = parse_position(range.substr(0, dash), item);
        auto end_text = range.substr(dash + 1);
        if (!end_text.empty()) r.end = parse_position(end_text, item);
      }
      if (r.start < 1)
        throw UsageError("cannot parse region '" + item + "': positions are 1-based");
      if (r.end < r.start) throw UsageError("region '" + item + "' ends before it starts");
    }
    if (r.contig.empty()) throw UsageError("cannot parse region '" + item + "': no contig");
    regions.push_back(std::move(r));
  }
  if (regions.empty()) throw UsageError("empty region list");
  return regions;
}

std::vector<Region> parse_regions_text(std::string_view text, const std::string& name, bool bed) {
  std::vector<Region> regions;
  for_each_line(text, [&](std::string_view line, std::int64_t lineno) {
    auto t = trim(line);
    if (t.empty() || t.front() == '#' || t.starts_with("track ") || t.starts_with("browser "))
      return;
    std::vector<std::string_view> cols;
    for (auto col = next_token(t); !col.empty(); col = next_token(t)) cols.push_back(col);
    auto bad = [&](const std::string& why) {
      return UsageError(name + ":" + std::to_string(lineno) + ": " + why);
    };
    if (cols.size() < 2) throw bad("expected CHROM POS or CHROM BEG END");
    // Whole decimal integers only: std::stoll read "1e5" as 1 and "14370abc" as 14370.
    auto position = [&](std::string_view col) {
      std::int64_t v = 0;
      auto [ptr, ec] = std::from_chars(col.data(), col.data() + col.size(), v);
      if (ec != std::errc() || ptr != col.data() + col.size())
        throw bad("positions must be whole numbers, found '" + std::string(col) + "'");
      return v;
    };
    Region r;
    r.contig = std::string(cols[0]);
    r.start = position(cols[1]);
    r.end = cols.size() >= 3 ? position(cols[2]) : r.start;
    // BED is 0-based, half-open; its start + 1 must not overflow.
    if (bed && (r.start < 0 || r.start == std::numeric_limits<std::int64_t>::max()))
      throw bad("invalid interval");
    if (bed) r.start += 1;
    if (r.start < 1 || r.end < r.start) throw bad("invalid interval");
    regions.push_back(std::move(r));
  });
  if (regions.empty()) throw UsageError(name + ": no regions in file");
  return regions;
}

std::vector<Region> read_regions_file(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  const bool bed = name.ends_with(".bed") || name.ends_with(".bed.gz");
  return parse_regions_text(read_text_file(path), path.string(), bed);
}

StringTable parse_samples_text(std::string text) {
  TokenPacker names(text, count_lines(text));
  for_each_line(text, [&](std::string_view line, std::int64_t) {
    const auto first = next_token(line);
    if (!first.empty() && first.front() != '#') names.add(first);
  });
  return names.finish();
}

StringTable read_samples_file(const std::filesystem::path& path) {
  return parse_samples_text(read_text_file(path));
}

}  // namespace vczstats::vcz
