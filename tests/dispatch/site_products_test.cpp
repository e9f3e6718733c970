// The keyed products of the site pass (vczstats/products.hpp): a unit finds a product by key
// (absent: null; another type: an Error), needs of one key merge (different parameters: an
// error), a key no backend registered stops the pass with an error naming it, and a keyed need
// on a sites-only store is the sites-only FormatError.

#include <gtest/gtest.h>

#include <string>

#include "backend/site_pass.hpp"
#include "stats/run_support.hpp"
#include "test_util.hpp"
#include "vczstats/compute.hpp"
#include "vczstats/packed_haplotypes.hpp"
#include "vczstats/products.hpp"

using namespace vczstats;

namespace {

constexpr ProductKey kTestKey{"test product"};

/// A statistic that needs one keyed product and nothing else.
class NeedsKey final : public Statistic {
 public:
  explicit NeedsKey(ProductKey key) : key_(key) {}
  std::string name() const override { return "needs-key"; }
  PassNeeds needs() const override {
    PassNeeds n;
    n.need(ProductNeed(key_));
    return n;
  }
  void accumulate(const UnitData& u) override {
    ++units;
    found += u.product<PhasedHaplotypeView>(key_) != nullptr;
  }
  void merge(Statistic&) override {}
  Table finish() override { return {}; }
  void save(ByteWriter&) const override {}
  void load(ByteReader&) override {}
  int units = 0, found = 0;

 private:
  ProductKey key_;
};

}  // namespace

TEST(SiteProductKeys, UnitFindsAProductByKeyAndChecksItsType) {
  const std::uint64_t words[2] = {1, 2};
  PhasedHaplotypeView view;
  view.words = words;
  std::vector<ProductSlot> slots{{kPhasedHaplotypes, view}};
  UnitData u;
  EXPECT_EQ(u.product<PhasedHaplotypeView>(kPhasedHaplotypes), nullptr);  // no slots
  u.products = slots;
  const PhasedHaplotypeView* got = u.product<PhasedHaplotypeView>(kPhasedHaplotypes);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->words, words);
  EXPECT_EQ(u.product<PhasedHaplotypeView>(kTestKey), nullptr);  // another key
  // A key of the same name is the same product (keys compare by name).
  const std::string name(kPhasedHaplotypes.name);
  EXPECT_NE(u.product<PhasedHaplotypeView>(ProductKey{name}), nullptr);
  try {
    (void)u.product<int>(kPhasedHaplotypes);
    FAIL() << "a wrong type was not an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'phased haplotypes'"), std::string::npos) << e.what();
  }
}

TEST(SiteProductKeys, NeedsOfOneKeyMergeAndDifferentParametersAreAnError) {
  PassNeeds a, b, c;
  a.need(ProductNeed(kTestKey, 3));
  b.need(ProductNeed(kTestKey, 3)).need(ProductNeed(kPhasedHaplotypes));
  const PassNeeds ab = a | b;
  ASSERT_EQ(ab.products.size(), 2u);
  EXPECT_TRUE(ab.wants(kTestKey));
  EXPECT_TRUE(ab.wants(kPhasedHaplotypes));
  EXPECT_EQ(ab.products[0].parameter<int>(), 3);
  EXPECT_THROW((void)ab.products[0].parameter<long>(), Error);
  EXPECT_THROW((void)ab.products[1].parameter<int>(), Error);  // none
  c.need(ProductNeed(kTestKey, 4));
  try {
    (void)(a | c);
    FAIL() << "two parameters of one product were not an error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("test product"), std::string::npos) << e.what();
  }
  PassNeeds none;
  none.need(ProductNeed(kTestKey));
  EXPECT_THROW((void)(a | none), UsageError);  // with and without a parameter
}

TEST(SiteProductKeys, KeyWithoutRegistrationIsAnErrorNamingIt) {
  VCZ_REQUIRE_SHARED_DATA();
  const auto store =
      vcz::VczStore::open((vcztest::shared_data() / "vcztools/msprime_diploid.vcz.zip").string());
  const vcz::ChunkPlan plan = store.plan({}, vcz::RegionOverlap::Record, 0);
  const auto samples = store.all_samples();
  RunOptions run;
  run.device.kind = DeviceKind::Cpu;
  backend::SitePassSpec spec;
  spec.store = &store;
  spec.plan = &plan;
  spec.samples = &samples;
  spec.run = &run;
  spec.products.emplace_back(kTestKey);
  try {
    backend::run_site_pass_cpu(
        spec, [](const backend::UnitOutput&) {}, nullptr, nullptr);
    FAIL() << "an unregistered product was not an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'test product'"), std::string::npos) << m;
    EXPECT_NE(m.find("CPU"), std::string::npos) << m;
  }
  // Through compute(): the same error; and a registered key is delivered with every unit.
  auto q = vcztest::query_of(store, plan, samples);
  NeedsKey unknown(kTestKey);
  Statistic* list[] = {&unknown};
  EXPECT_THROW((void)compute(q, list, run), Error);
  NeedsKey phased(kPhasedHaplotypes);
  list[0] = &phased;
  (void)compute(q, list, run);
  EXPECT_GT(phased.units, 0);
  EXPECT_EQ(phased.found, phased.units);
  // No sample: no pass runs, and the units come without the product.
  NeedsKey empty(kPhasedHaplotypes);
  list[0] = &empty;
  q.samples.indices.clear();
  q.pops = vcz::single_population(q.samples);
  (void)compute(q, list, run);
  EXPECT_GT(empty.units, 0);
  EXPECT_EQ(empty.found, 0);
}

TEST(SiteProductKeys, KeyedNeedOnASitesOnlyStoreIsTheSitesOnlyError) {
  VCZ_REQUIRE_SHARED_DATA();
  const std::string path = (vcztest::shared_data() / "vcztools/field_type_combos.vcz.zip").string();
  const auto store = vcz::VczStore::open(path);
  ASSERT_FALSE(store.has_genotypes());
  const auto q =
      vcztest::query_of(store, store.plan({}, vcz::RegionOverlap::Record, 0), store.all_samples());
  NeedsKey s(kTestKey);
  Statistic* list[] = {&s};
  RunOptions run;
  run.device.kind = DeviceKind::Cpu;
  try {
    (void)compute(q, list, run);
    FAIL() << "a keyed need on a sites-only store was not an error";
  } catch (const FormatError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path + " has no call_genotype"), std::string::npos) << m;
    EXPECT_NE(m.find("needs-key needs genotype calls"), std::string::npos) << m;
  }
}

TEST(SiteProductKeys, AfdistWithoutSamplesReducesEverySiteWithNoCall) {
  // No selected sample: no pass runs and the afdist counts have no slot; every selected site is
  // still reduced (sites), and with no call no bin gets a count.
  VCZ_REQUIRE_SHARED_DATA();
  const auto store =
      vcz::VczStore::open((vcztest::shared_data() / "vcztools/msprime_diploid.vcz.zip").string());
  const vcz::ChunkPlan plan = store.plan({}, vcz::RegionOverlap::Record, 2);
  RunOptions run;
  run.device.kind = DeviceKind::Cpu;
  for (const auto method : {stats::AfdistMethod::Bcftools, stats::AfdistMethod::ZarrAfdist}) {
    const auto r = vcztest::run_afdist(store, plan, vcz::SampleSelection{}, {method, 10}, run);
    EXPECT_EQ(r.sites, 5);
    EXPECT_EQ(r.counts, std::vector<std::uint64_t>(10, 0));
  }
}
