// Regions, sample selections and chunk plans: parsing rules, and the variants a plan selects
// against `bcftools query -r` on the VCF the store was made from.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "test_util.hpp"
#include "vczstats/error.hpp"
#include "vczstats/vcz.hpp"

using namespace vczstats;
using namespace vcztest;

TEST(VczRegions, ParsesBcftoolsSyntax) {
  auto r = vcz::parse_regions("chr1,chr2:100,chr3:5-10,chr4:7-");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].contig, "chr1");
  EXPECT_EQ(r[0].start, 1);
  EXPECT_EQ(r[0].end, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(r[1].start, 100);
  EXPECT_EQ(r[1].end, 100);  // chr:pos is one position, as in bcftools
  EXPECT_EQ(r[2].start, 5);
  EXPECT_EQ(r[2].end, 10);
  EXPECT_EQ(r[3].start, 7);
  EXPECT_EQ(r[3].end, std::numeric_limits<std::int64_t>::max());
  for (const char* bad : {"", "chr1:x", "chr1:10-5", "chr1:0-5", ":5-6", "chr1:5-6x"})
    EXPECT_THROW(vcz::parse_regions(bad), UsageError) << bad;
}

TEST(VczRegions, PlanSelectsWhatBcftoolsSelects) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  const auto vcf = (dir / "r.vcf.gz").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 8 --samples 3 --variants 800 --contigs 3 --indels 0.4 --max-ref-length 50 "
         "--mean-spacing 4 -o " +
         vcf);
  const auto store_path = (dir / "r.vcz").string();
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + vcf + " " + store_path +
         " --variants-chunk-size 37");
  auto store = vcz::VczStore::open(store_path);
  auto pos = zarr::Array::open(store.store_ptr(), "variant_position").read_all_as<std::int64_t>();
  auto contig = zarr::Array::open(store.store_ptr(), "variant_contig").read_all_as<std::int64_t>();
  const auto& ids = store.contig_ids();

  for (const std::string spec :
       {"chr1:100-300", "chr1:250", "chr2:1-1000,chr1:900-1200,chr2:500-2000", "chr3", "chr3:1500-",
        "chr1:1-100000000"}) {
    for (bool record : {true, false}) {
      auto plan = store.plan(vcz::parse_regions(spec),
                             record ? vcz::RegionOverlap::Record : vcz::RegionOverlap::Pos, 10);
      std::ostringstream ours;
      for (const auto& u : plan.units) {
        EXPECT_LE(u.size(), 10);
        EXPECT_EQ(u.begin / 37, u.chunk);
        EXPECT_EQ((u.end - 1) / 37, u.chunk);  // never spans two chunks
        for (std::int64_t v = u.begin; v < u.end; ++v)
          if (u.mask.empty() || u.mask[static_cast<std::size_t>(v - u.begin)])
            ours << ids[static_cast<std::size_t>(contig[static_cast<std::size_t>(v)])] << "\t"
                 << pos[static_cast<std::size_t>(v)] << "\n";
      }
      const std::string overlap = record ? "1" : "0";
      const auto theirs = run_ok("bcftools query --regions-overlap " + overlap + " -r " + spec +
                                 " -f '%CHROM\\t%POS\\n' " + vcf);
      // bcftools lists contigs in the order the regions name them; a plan goes in store order.
      auto sorted_lines = [](const std::string& text) {
        std::vector<std::string> v;
        std::istringstream in(text);
        for (std::string l; std::getline(in, l);) v.push_back(l);
        std::sort(v.begin(), v.end());
        return v;
      };
      EXPECT_EQ(sorted_lines(ours.str()), sorted_lines(theirs)) << spec << " overlap " << overlap;
    }
  }
  std::vector<std::string> missing;
  auto plan =
      store.plan(vcz::parse_regions("chrNone:1-10"), vcz::RegionOverlap::Record, 0, &missing);
  EXPECT_TRUE(plan.units.empty());
  EXPECT_EQ(missing, std::vector<std::string>{"chrNone"});
}

TEST(VczSamples, SelectionFollowsBcftoolsAndHidesEmptyIds) {
  TempDir dir;
  const auto vcf = (dir / "s.vcf.gz").string();
  run_ok(python() + " " + tool("random_vcf.py") + " --seed 9 --samples 6 --variants 20 -o " + vcf);
  const auto path = (dir / "s.vcz").string();
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + vcf + " " + path);
  // Hide the third sample the way VCF Zarr does: an empty sample_id.
  run_ok(python() + " -c \"import zarr; z = zarr.open('" + path +
         "'); ids = z['sample_id'][:]; ids[2] = ''; z['sample_id'][:] = ids\"");
  auto store = vcz::VczStore::open(path);
  const auto& ids = store.sample_ids();
  EXPECT_EQ(store.all_samples().indices, (std::vector<std::int64_t>{0, 1, 3, 4, 5}));
  EXPECT_EQ(store.select_samples({ids[5], ids[0]}).indices, (std::vector<std::int64_t>{0, 5}));
  EXPECT_EQ(store.select_samples({"^" + std::string(ids[0]), ids[4]}).indices,
            (std::vector<std::int64_t>{1, 3, 5}));
  EXPECT_THROW(store.select_samples({"nobody"}), UsageError);
  EXPECT_EQ(store.select_samples({"nobody", ids[1]}, true).indices, (std::vector<std::int64_t>{1}));
}

TEST(VczStore, PreSpecSgkitStoresListContigsInAnAttribute) {
  TempDir dir;
  const auto vcf = (dir / "k.vcf.gz").string();
  run_ok(python() + " " + tool("random_vcf.py") + " --seed 12 --samples 4 --variants 30 " +
         "--contigs 2 -o " + vcf);
  const auto path = (dir / "k.vcz").string();
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + vcf + " " + path);
  const auto before = vcz::VczStore::open(path).contig_ids();
  // Rewrite it the way sgkit < 0.6 laid stores out: no contig_id, a 'contigs' attribute.
  run_ok(python() + " -c \"import zarr, shutil; z = zarr.open('" + path +
         "'); z.attrs['contigs'] = list(z['contig_id'][:]); shutil.rmtree('" + path +
         "/contig_id')\"");
  auto store = vcz::VczStore::open(path);
  EXPECT_EQ(store.contig_ids(), before);
  auto plan = store.plan(vcz::parse_regions(before[1]), vcz::RegionOverlap::Record);
  EXPECT_GT(plan.selected_variants(), 0);
}
