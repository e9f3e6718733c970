// stream::PhasedReader::check_encoded, the phasing check of the GPU's device decode (from the
// call_genotype_phased flags alone, the block decoded on the host only when a flag is false),
// against check() on the host-decoded block: on every block of stores with unphased calls,
// missing alleles and haploid calls, both accept, or both reject with the same message.

#include <gtest/gtest.h>

#include <string>

#include "stream/genotype_reader.hpp"
#include "stream/phased_reader.hpp"
#include "test_util.hpp"
#include "vczstats/error.hpp"
#include "vczstats/query.hpp"

using namespace vcztest;

namespace {

/// The message of the FormatError @p f throws, or "" when it returns.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const vczstats::FormatError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PhasedReader, CheckEncodedDecidesAsTheCheckOfDecodedBlocks) {
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  struct Store {
    const char* args;
    bool some_pass, some_fail;  // blocks expected to pass / fail
  };
  const Store stores[] = {
      {"--phased 1", true, false},
      // unphased calls, half of them without two called alleles (missing, haploid): blocks
      // whose false flags are all on such calls pass after the host decode
      {"--phased 0.97 --missing 0.5 --mixed-ploidy 0.3", true, true},
      {"--phased 0.5", false, true},
  };
  int k = 0;
  for (const auto& st : stores) {
    const std::string stem = (dir / "p").string() + std::to_string(k++);
    const std::string vcf = stem + ".vcf.gz", s = stem + ".vcz";
    run_ok(python() + " " + tool("random_vcf.py") + " --seed 5 --samples 23 --variants 300 " +
           st.args + " --bgzip -o " + vcf);
    run_ok(python() + " " + tool("vcf2vcz.py") + " " + vcf + " " + s +
           " --variants-chunk-size 10 --samples-chunk-size 4");
    vczstats::QueryOptions o;
    o.store = s;
    const vczstats::Query q = vczstats::make_query(o);
    const vczstats::stream::GenotypeReader genotypes(q.store, q.samples, {});
    const vczstats::stream::PhasedReader phased(q.store, q.samples, genotypes);
    int pass = 0, fail = 0;
    for (const auto& unit : q.plan.units)
      for (std::size_t b = 0; b < genotypes.num_blocks(); ++b) {
        std::vector<std::byte> bytes;
        vczstats::stream::BlockBuffers decoded, scratch;
        const std::string want =
            error_of([&] { phased.check(unit, b, genotypes.read(unit, b, decoded), bytes); });
        const std::string got = error_of([&] { phased.check_encoded(unit, b, bytes, scratch); });
        EXPECT_EQ(got, want) << st.args << ": unit " << unit.begin << " block " << b;
        (want.empty() ? pass : fail) += 1;
      }
    EXPECT_EQ(pass > 0, st.some_pass) << st.args << ": " << pass << " blocks passed";
    EXPECT_EQ(fail > 0, st.some_fail) << st.args << ": " << fail << " blocks failed";
  }
}
