// The haplotype family on the GPU (skipped without one): the heavy pass's haplotype planes equal
// the CPU backend's; the GPU segment runner gives the CPU runner's results bit for bit on random
// batches of every mode; and every haplotype command prints the same bytes with --device gpu
// and --device cpu on a simulated store (two populations) and on Ag1000G.

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "backend/gpu_test_support.hpp"
#include "backend/site_pass.hpp"
#include "stats/haplo_runner.hpp"
#include "test_util.hpp"
#include "vczstats/compute.hpp"

namespace hk = vczstats::stats::haplo;
using namespace vczstats;

namespace {

std::vector<std::uint64_t> planes_of(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                                     const vcz::SampleSelection& samples, DeviceKind kind) {
  backend::SitePassSpec spec;
  RunOptions run;
  run.device.kind = kind;
  run.threads = 3;
  spec.store = &store;
  spec.plan = &plan;
  spec.samples = &samples;
  spec.run = &run;
  spec.products.emplace_back(kPhasedHaplotypes);
  std::vector<std::uint64_t> all;
  auto deliver = [&](const backend::UnitOutput& out) {
    const auto& v = *find_product<PhasedHaplotypeView>(out.products, kPhasedHaplotypes);
    all.insert(all.end(), v.words, v.words + v.variants * v.planes * v.words_per_plane);
  };
  if (kind == DeviceKind::Gpu)
    backend::run_site_pass_gpu(spec, deliver, nullptr, nullptr);
  else
    backend::run_site_pass_cpu(spec, deliver, nullptr, nullptr);
  return all;
}

std::string simulated(const vcztest::TempDir& dir, std::string* pops) {
  const std::string store = (dir / "sim.vcz").string();
  *pops = (dir / "pops.tsv").string();
  vcztest::run_ok(vcztest::binary() + " simulate " + store +
                  " --samples 150 --variants 6000 --pops 2 --ld-length 3000 --seed 2 "
                  "--variants-chunk-size 700 --samples-chunk-size 64 --pops-file " +
                  *pops);
  return store;
}

}  // namespace

TEST(CudaHaplo, HeavyPassPlanesEqualCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  std::string pops;
  const auto store = vcz::VczStore::open(simulated(dir, &pops));
  for (const auto& [name, plan] : gputest::test_plans(store)) {
    auto samples = store.all_samples();
    EXPECT_EQ(planes_of(store, plan, samples, DeviceKind::Gpu),
              planes_of(store, plan, samples, DeviceKind::Cpu))
        << name;
    samples.indices = {3, 4, 70, 71, 72, 130, 149};  // a subset across sample chunks
    EXPECT_EQ(planes_of(store, plan, samples, DeviceKind::Gpu),
              planes_of(store, plan, samples, DeviceKind::Cpu))
        << name << ", subset";
  }
}

TEST(CudaHaplo, SegmentRunnerEqualsCpu) {
  VCZ_REQUIRE_GPU();
  std::mt19937_64 rng(3);
  for (std::int32_t n : {2, 31, 64, 200, 1000}) {
    const std::int64_t rows = 300, words = (n + 63) / 64;
    std::vector<std::uint64_t> bits(static_cast<std::size_t>(rows * words));
    for (std::int64_t v = 0; v < rows; ++v)
      for (std::int64_t w = 0; w < words; ++w)
        bits[static_cast<std::size_t>(v * words + w)] =
            v > 0 && rng() % 4
                ? bits[static_cast<std::size_t>((v - 1) * words + w)] ^ (rng() & rng() & rng())
                : rng();
    if (n % 64)
      for (std::int64_t v = 0; v < rows; ++v)
        bits[static_cast<std::size_t>(v * words + words - 1)] &= (std::uint64_t{1} << (n % 64)) - 1;
    std::vector<std::int64_t> pos;
    std::vector<double> gpos;
    for (std::int64_t v = 0, p = 1; v < rows;
         ++v, p += 1 + static_cast<std::int64_t>(rng() % 40000)) {
      pos.push_back(p);
      gpos.push_back(static_cast<double>(p) * 1.3e-6);
    }
    for (std::int32_t mode :
         {hk::kModeIhs, hk::kModeNsl, hk::kModeXpehh, hk::kModeXpnsl, hk::kModeGarud}) {
      std::vector<hk::Segment> segs;
      std::vector<hk::GarudEvent> events;
      std::int64_t results = 0;
      for (int k = 0; k < 40; ++k) {
        hk::Segment s;
        s.dir = k % 2 ? -1 : 1;
        s.steps = 1 + static_cast<std::int64_t>(rng() % rows);
        const std::int64_t start =
            static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows - s.steps + 1));
        s.first = s.dir > 0 ? start : start + s.steps - 1;
        s.edge = k % 3 == 0;
        if (mode == hk::kModeGarud) {
          s.event_begin = static_cast<std::int64_t>(events.size());
          for (std::int64_t step = 0; step < s.steps;
               step += 1 + static_cast<std::int64_t>(rng() % 7))
            events.push_back(
                {step, 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(step + 1)),
                 static_cast<std::int64_t>(events.size())});
          s.event_end = static_cast<std::int64_t>(events.size());
        } else {
          s.focal_from = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.steps));
          s.focal_to = s.steps;
          s.out = results;
          results += s.focal_to - s.focal_from;
        }
        segs.push_back(s);
      }
      hk::BatchView b;
      b.bits = bits.data();
      b.words = words;
      b.pos = pos.data();
      b.gpos = gpos.data();
      b.rows = rows;
      b.n = n;
      b.n_a = std::max(2, n / 2);
      b.params.mode = mode;
      b.segments = segs.data();
      b.nsegments = static_cast<std::int64_t>(segs.size());
      for (const auto& s : segs) b.max_steps = std::max(b.max_steps, s.steps);
      b.events = events.data();
      if ((mode == hk::kModeXpehh || mode == hk::kModeXpnsl) && n - b.n_a < 2) continue;
      std::vector<hk::FocalResult> f_cpu(static_cast<std::size_t>(results)), f_gpu(f_cpu.size());
      std::vector<hk::GarudResult> g_cpu(events.size()), g_gpu(events.size());
      b.focal = f_cpu.data();
      b.garud = g_cpu.data();
      hk::make_cpu_runner(2)->run(b);
      b.focal = f_gpu.data();
      b.garud = g_gpu.data();
      backend::make_gpu_segment_runner(0)->run(b);
      EXPECT_EQ(std::memcmp(f_cpu.data(), f_gpu.data(), f_cpu.size() * sizeof(hk::FocalResult)), 0)
          << "n " << n << " mode " << mode;
      EXPECT_EQ(std::memcmp(g_cpu.data(), g_gpu.data(), g_cpu.size() * sizeof(hk::GarudResult)), 0)
          << "n " << n << " mode " << mode;
    }
  }
}

TEST(CudaHaplo, CommandsPrintTheSameOnBothDevices) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  std::string pops;
  const std::string s = simulated(dir, &pops);
  std::vector<std::pair<std::string, std::string>> runs = {
      {"ihs", "ihs " + s + " -P " + pops},
      {"nsl", "nsl " + s + " -P " + pops + " --segment 64"},
      {"xpehh", "xpehh " + s + " -P " + pops},
      {"xpnsl", "xpnsl " + s + " -P " + pops + " --trunc-ok"},
      {"haplotypes",
       "haplotypes " + s + " -P " + pops + " --window-size 30000 --window-step 10000"},
  };
  const auto ag = vcztest::shared_data();
  if (!ag.empty()) {
    const std::string a = (ag / "ag1000g" / "gamb.X.8-12Mb.n100.derived.vcz.zip").string();
    runs.push_back({"ag ihs", "ihs " + a + " -r X:8000000-8400000"});
    runs.push_back({"ag haplotypes", "haplotypes " + a + " --window-variants 400"});
  }
  for (const auto& [name, args] : runs) {
    const std::string c = vcztest::run_ok(vcztest::binary() + " " + args + " --device cpu");
    const std::string g = vcztest::run_ok(vcztest::binary() + " " + args + " --device gpu");
    EXPECT_EQ(c, g) << name;
    EXPECT_GT(std::count(c.begin(), c.end(), '\n'), 3) << name;
  }
}

// Device decode for the haplotype family: the producers check the phasing from the
// call_genotype_phased flags alone (stream::PhasedReader::check_encoded), decoding a block on the
// host only when a flag is false (here: the missing calls, written ./.). The same output as the
// CPU, with the genotypes decoded on the device; an unphased store fails with the CPU's error.
TEST(CudaHaplo, DeviceDecodeChecksThePhasingFromTheFlags) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const std::string store = (dir / "miss.vcz").string(), pops = (dir / "pops.tsv").string();
  vcztest::run_ok(vcztest::binary() + " simulate " + store +
                  " --samples 150 --variants 3000 --pops 2 --ld-length 3000 --seed 4 --missing "
                  "0.02 --variants-chunk-size 500 --samples-chunk-size 16 --pops-file " +
                  pops);
  const std::vector<std::string> commands = {"ihs " + store + " -P " + pops,
                                             "haplotypes " + store + " --window-size 30000"};
  for (const std::string& cmd : commands) {
    const std::string c = vcztest::run_ok(vcztest::binary() + " " + cmd + " --device cpu");
    const auto g = vcztest::run(vcztest::binary() + " " + cmd + " --device gpu --gpu-decode on -v");
    ASSERT_EQ(g.exit_code, 0) << cmd << "\n" << g.err;
    EXPECT_EQ(c, g.out) << cmd;
    EXPECT_EQ(g.err.find("host decode"), std::string::npos) << cmd << "\n" << g.err;
  }
  for (const auto& spec : gputest::store_specs()) {
    if (spec.name != "missing_multi") continue;  // random_vcf.py's calls: unphased
    const std::string s = gputest::obtain_store(dir, spec);
    if (s.empty()) GTEST_SKIP() << "skipped: no unphased test store (.gpu/stores)";
    const auto c = vcztest::run(vcztest::binary() + " ihs " + s + " --device cpu");
    const auto g = vcztest::run(vcztest::binary() + " ihs " + s + " --device gpu --gpu-decode on");
    EXPECT_EQ(c.exit_code, 1) << c.err;
    EXPECT_EQ(g.exit_code, 1) << g.err;
    // (the first unphased call each reports depends on which block a producer reads first)
    EXPECT_NE(c.err.find("is not phased"), std::string::npos) << c.err;
    EXPECT_NE(g.err.find("is not phased"), std::string::npos) << g.err;
  }
}
