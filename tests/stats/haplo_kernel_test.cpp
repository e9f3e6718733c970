// The segment kernel (stats/haplo_kernel.hpp) against brute force, and with several lanes per
// segment (the GPU's threads, run here as a host loop between the phases) against one lane:
// identical pair counts, walks and haplotype groups. Random rows with long shared stretches
// (each row copies the one before with a few changes), haplotype counts below, at and above
// the lane counts.

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "stats/haplo_kernel.hpp"
#include "stats/haplo_runner.hpp"

namespace hk = vczstats::stats::haplo;

namespace {

struct Rows {
  std::int32_t n = 0;
  std::int64_t rows = 0, words = 0;
  std::vector<std::uint64_t> bits;
  std::vector<std::int64_t> pos;
  std::vector<double> gpos;
  int bit(std::int64_t r, std::int32_t h) const {
    return static_cast<int>((bits[static_cast<std::size_t>(r * words + h / 64)] >> (h % 64)) & 1u);
  }
};

Rows random_rows(std::mt19937_64& rng, std::int32_t n, std::int64_t rows) {
  Rows r;
  r.n = n;
  r.rows = rows;
  r.words = (n + 63) / 64;
  r.bits.assign(static_cast<std::size_t>(rows * r.words), 0);
  std::vector<int> cur(static_cast<std::size_t>(n));
  for (auto& x : cur) x = static_cast<int>(rng() % 2);
  std::int64_t p = 100;
  for (std::int64_t v = 0; v < rows; ++v) {
    for (std::int32_t h = 0; h < n; ++h) {
      if (rng() % 8 == 0) cur[static_cast<std::size_t>(h)] ^= 1;
      if (cur[static_cast<std::size_t>(h)])
        r.bits[static_cast<std::size_t>(v * r.words + h / 64)] |= std::uint64_t{1} << (h % 64);
    }
    // Gaps: mostly short, some beyond gap_scale, a few beyond max_gap; some equal positions.
    const auto kind = rng() % 50;
    p += kind == 0  ? 300000
         : kind < 5 ? 30000 + static_cast<std::int64_t>(rng() % 50000)
         : kind < 7 ? 0
                    : 1 + static_cast<std::int64_t>(rng() % 3000);
    r.pos.push_back(p);
    r.gpos.push_back(static_cast<double>(p) * 1e-6 + static_cast<double>(v) * 1e-4);
  }
  return r;
}

hk::BatchView view_of(const Rows& r, const std::vector<hk::Segment>& segs, std::int32_t mode,
                      std::int32_t n_a) {
  hk::BatchView b;
  b.bits = r.bits.data();
  b.words = r.words;
  b.pos = r.pos.data();
  b.gpos = r.gpos.data();
  b.rows = r.rows;
  b.n = r.n;
  b.n_a = n_a;
  b.params.mode = mode;
  b.params.cutoff = 0.05;
  b.params.max_extend = 400000;
  b.params.max_extend_sites = 37;
  b.segments = segs.data();
  b.nsegments = static_cast<std::int64_t>(segs.size());
  for (const auto& s : segs) b.max_steps = std::max(b.max_steps, s.steps);
  return b;
}

/// Segments in both directions over random stretches of @p r.
std::vector<hk::Segment> random_segments(std::mt19937_64& rng, const Rows& r, int count) {
  std::vector<hk::Segment> out;
  std::int64_t results = 0;
  for (int k = 0; k < count; ++k) {
    hk::Segment s;
    s.dir = k % 2 ? -1 : 1;
    s.steps = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(r.rows));
    const std::int64_t start =
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(r.rows - s.steps + 1));
    s.first = s.dir > 0 ? start : start + s.steps - 1;
    s.focal_from = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.steps));
    s.focal_to = s.steps;
    s.edge = static_cast<std::int32_t>(rng() % 2);
    s.out = results;
    results += s.focal_to - s.focal_from;
    out.push_back(s);
  }
  return out;
}

std::int64_t results_of(const std::vector<hk::Segment>& segs) {
  std::int64_t n = 0;
  for (const auto& s : segs) n = std::max(n, s.out + s.focal_to - s.focal_from);
  return n;
}

/// Run @p b on the host with @p lanes lanes per segment, one segment after another.
void run_lanes(const hk::BatchView& b, int lanes) {
  std::vector<std::uint64_t> memory(
      static_cast<std::size_t>(hk::scratch_bytes(b.n, lanes, b.max_steps) / 8 + 1), 0);
  const hk::Scratch s =
      hk::scratch_at(reinterpret_cast<std::byte*>(memory.data()), b.n, lanes, b.max_steps);
  const hk::HostBlock block{lanes};
  for (std::int64_t g = 0; g < b.nsegments; ++g) hk::run_segment(block, b, b.segments[g], s);
}

bool same_focal(const hk::FocalResult& a, const hk::FocalResult& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

TEST(HaploKernel, PairCountsEqualBruteForce) {
  std::mt19937_64 rng(7);
  for (std::int32_t n : {2, 5, 33, 64, 65, 130}) {
    const Rows r = random_rows(rng, n, 60);
    auto segs = random_segments(rng, r, 8);
    const std::int64_t len = [&] {
      std::int64_t m = 0;
      for (const auto& s : segs) m = std::max(m, s.steps);
      return m + 1;
    }();
    std::vector<std::uint64_t> curve(static_cast<std::size_t>(results_of(segs) * 3 * len));
    std::vector<hk::FocalResult> focal(static_cast<std::size_t>(results_of(segs)));
    hk::BatchView b = view_of(r, segs, hk::kModeCurve, n);
    b.curve = curve.data();
    b.focal = focal.data();
    run_lanes(b, 1);
    for (const auto& s : segs)
      for (std::int64_t step = s.focal_from; step < s.focal_to; ++step) {
        const std::int64_t res = s.out + step - s.focal_from;
        const std::int64_t f = s.first + s.dir * step;
        for (std::int64_t k = 0; k <= step; ++k) {
          std::uint64_t want[3] = {0, 0, 0};
          for (std::int32_t i = 0; i < n; ++i)
            for (std::int32_t j = i + 1; j < n; ++j) {
              bool same = true;
              for (std::int64_t x = 0; x <= k && same; ++x)
                same = r.bit(f - s.dir * x, i) == r.bit(f - s.dir * x, j);
              if (!same) continue;
              ++want[r.bit(f, i)];
              ++want[2];
            }
          for (int c = 0; c < 3; ++c)
            ASSERT_EQ(curve[static_cast<std::size_t>((res * 3 + c) * len + k)], want[c])
                << "n " << n << " focal " << f << " k " << k << " class " << c;
        }
      }
  }
}

TEST(HaploKernel, GarudGroupsEqualBruteForce) {
  std::mt19937_64 rng(8);
  for (std::int32_t n : {3, 31, 64, 100}) {
    const Rows r = random_rows(rng, n, 40);
    hk::Segment s;
    s.first = 3;
    s.steps = 30;
    s.dir = 1;
    std::vector<hk::GarudEvent> events;
    for (std::int64_t e = 0; e < 25; ++e) {
      const std::int64_t step = 1 + static_cast<std::int64_t>(rng() % 29);
      events.push_back(
          {step, 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(step + 1)), e});
    }
    std::sort(events.begin(), events.end(),
              [](const hk::GarudEvent& a, const hk::GarudEvent& b) { return a.step < b.step; });
    s.event_end = static_cast<std::int64_t>(events.size());
    std::vector<hk::Segment> segs{s};
    std::vector<hk::GarudResult> got(events.size());
    hk::BatchView b = view_of(r, segs, hk::kModeGarud, n);
    b.events = events.data();
    b.garud = got.data();
    for (int lanes : {1, 4, 7, 64}) {
      std::fill(got.begin(), got.end(), hk::GarudResult{});
      run_lanes(b, lanes);
      for (const auto& e : events) {
        const std::int64_t last = s.first + e.step, first = last - e.length + 1;
        std::map<std::vector<int>, std::int64_t> groups;
        for (std::int32_t h = 0; h < n; ++h) {
          std::vector<int> key;
          for (std::int64_t x = first; x <= last; ++x) key.push_back(r.bit(x, h));
          ++groups[key];
        }
        std::vector<std::int64_t> sizes;
        std::int64_t sumsq = 0;
        for (const auto& [key, c] : groups) {
          sizes.push_back(c);
          sumsq += c * c;
        }
        std::sort(sizes.rbegin(), sizes.rend());
        sizes.resize(3, 0);
        const auto& g = got[static_cast<std::size_t>(e.out)];
        EXPECT_EQ(g.distinct, static_cast<std::int64_t>(groups.size())) << "lanes " << lanes;
        EXPECT_EQ(g.sumsq, sumsq) << "lanes " << lanes;
        for (int k = 0; k < 3; ++k) EXPECT_EQ(g.top[k], sizes[static_cast<std::size_t>(k)]);
      }
    }
  }
}

TEST(HaploKernel, LanesGiveTheSameResults) {
  std::mt19937_64 rng(9);
  for (std::int32_t n : {2, 7, 40, 64, 97, 300}) {
    const Rows r = random_rows(rng, n, 150);
    for (std::int32_t mode : {hk::kModeIhs, hk::kModeNsl, hk::kModeXpehh, hk::kModeXpnsl}) {
      const auto segs = random_segments(rng, r, 10);
      const std::int32_t n_a = std::max(2, n / 3);
      std::vector<hk::FocalResult> want(static_cast<std::size_t>(results_of(segs)));
      hk::BatchView b = view_of(r, segs, mode, n_a);
      if (n - n_a < 2 && (mode == hk::kModeXpehh || mode == hk::kModeXpnsl)) continue;
      b.focal = want.data();
      run_lanes(b, 1);
      std::int64_t walked = 0;
      for (const auto& w : want) walked += w.status == hk::kOk;
      for (int lanes : {2, 3, 8, 32, 128}) {
        std::vector<hk::FocalResult> got(want.size());
        b.focal = got.data();
        run_lanes(b, lanes);
        for (std::size_t i = 0; i < want.size(); ++i)
          ASSERT_TRUE(same_focal(want[i], got[i]))
              << "n " << n << " mode " << mode << " lanes " << lanes << " result " << i << ": "
              << want[i].ihh[0] << "," << want[i].ihh[1] << "," << want[i].status << " vs "
              << got[i].ihh[0] << "," << got[i].ihh[1] << "," << got[i].status;
      }
      if (n >= 40) {
        EXPECT_GT(walked, 0) << "no walk ended normally: the test checks nothing";
      }
    }
  }
}

TEST(HaploKernel, CpuRunnerThreadsGiveTheSameResults) {
  std::mt19937_64 rng(10);
  const Rows r = random_rows(rng, 77, 200);
  const auto segs = random_segments(rng, r, 40);
  std::vector<hk::FocalResult> one(static_cast<std::size_t>(results_of(segs)));
  std::vector<hk::FocalResult> many(one.size());
  hk::BatchView b = view_of(r, segs, hk::kModeIhs, 77);
  b.focal = one.data();
  hk::make_cpu_runner(1)->run(b);
  b.focal = many.data();
  hk::make_cpu_runner(4, 3)->run(b);
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(same_focal(one[i], many[i])) << i;
}
