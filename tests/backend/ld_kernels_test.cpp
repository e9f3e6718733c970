// The variant-pair family's CPU kernel sets (portable, POPCNT, AVX-512 VPOPCNTDQ, whichever this
// CPU runs) against pair counts written from the definitions: planes built bit by bit from
// random genotype classes and haplotype alleles with missing calls, for widths off and on word
// boundaries and long enough for several AVX-512 steps and a masked last one.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backend/cpu/ld_kernels.hpp"

using namespace vczstats;
namespace ld = vczstats::stats::ld;
namespace ldk = vczstats::backend::ldk;

namespace {

/// One row of values (genotype class 0, 1, 2 or -1 missing; or allele 0, 1, -1) and its planes.
struct RowOf {
  std::vector<int> v;
  std::vector<std::uint64_t> planes;
};

void set_bit(std::vector<std::uint64_t>& p, std::int64_t plane, std::int64_t words,
             std::int64_t k) {
  p[static_cast<std::size_t>(plane * words + k / 64)] |= 1ull << (k % 64);
}

RowOf random_row(std::mt19937_64& rng, std::int64_t width, bool haplotypes, bool complete) {
  std::uniform_real_distribution<double> u(0, 1);
  const double f = u(rng), missing = complete ? 0 : 0.1;
  const std::int64_t words = ld::plane_words(width);
  RowOf r;
  r.planes.assign(static_cast<std::size_t>((haplotypes ? 2 : 3) * words), 0);
  for (std::int64_t k = 0; k < width; ++k) {
    int x = haplotypes ? (u(rng) < f) : (u(rng) < f) + (u(rng) < f);
    if (u(rng) < missing) x = -1;
    r.v.push_back(x);
    if (haplotypes) {  // planes: non-REF, called
      if (x == 1) set_bit(r.planes, 0, words, k);
      if (x >= 0) set_bit(r.planes, 1, words, k);
    } else {  // planes: het, two non-REF, called
      if (x == 1) set_bit(r.planes, 0, words, k);
      if (x == 2) set_bit(r.planes, 1, words, k);
      if (x >= 0) set_bit(r.planes, 2, words, k);
    }
  }
  return r;
}

ld::GenotypeCounts genotype_definition(const RowOf& i, const RowOf& j) {
  ld::GenotypeCounts c;
  for (std::size_t k = 0; k < i.v.size(); ++k) {
    const int x = i.v[k], y = j.v[k];
    if (x < 0 || y < 0) continue;  // cells over the samples called at both
    ++c.n;
    c.r1 += x == 1;
    c.r2 += x == 2;
    c.c1 += y == 1;
    c.c2 += y == 2;
    c.t11 += x == 1 && y == 1;
    c.t12 += x == 1 && y == 2;
    c.t21 += x == 2 && y == 1;
    c.t22 += x == 2 && y == 2;
  }
  return c;
}

ld::HaplotypeCounts haplotype_definition(const RowOf& i, const RowOf& j) {
  ld::HaplotypeCounts c;
  for (std::size_t k = 0; k < i.v.size(); ++k) {
    const int x = i.v[k], y = j.v[k];
    if (x < 0 || y < 0) continue;
    ++c.n;
    c.a += x;
    c.b += y;
    c.ab += x & y;
  }
  return c;
}

}  // namespace

TEST(LdKernels, EveryKernelSetCountsAsTheDefinitions) {
  const ldk::Kernels* sets[4];
  const int n_sets = ldk::available_kernels(sets, 4);
  ASSERT_GE(n_sets, 1);
  std::mt19937_64 rng(11);
  for (const std::int64_t width : {1, 5, 63, 64, 65, 300, 511, 512, 513, 1100}) {
    for (const bool haplotypes : {false, true}) {
      for (const bool complete : {false, true}) {
        for (int trial = 0; trial < 4; ++trial) {
          const RowOf i = random_row(rng, width, haplotypes, complete);
          const RowOf j = random_row(rng, width, haplotypes, complete);
          const std::int64_t words = ld::plane_words(width);
          for (int s = 0; s < n_sets; ++s) {
            const ldk::Kernels& k = *sets[s];
            SCOPED_TRACE(::testing::Message()
                         << k.name << ", width " << width << (haplotypes ? " hap" : " geno")
                         << (complete ? " complete" : " missing"));
            if (haplotypes) {
              const ld::HaplotypeCounts want = haplotype_definition(i, j);
              ld::HaplotypeCounts got;
              if (complete) {
                k.haplotype_complete(i.planes.data(), j.planes.data(), words, got);
                EXPECT_EQ(got.ab, want.ab);
                continue;
              }
              k.haplotype(i.planes.data(), j.planes.data(), words, got);
              EXPECT_EQ(got.n, want.n);
              EXPECT_EQ(got.a, want.a);
              EXPECT_EQ(got.b, want.b);
              EXPECT_EQ(got.ab, want.ab);
              continue;
            }
            const ld::GenotypeCounts want = genotype_definition(i, j);
            ld::GenotypeCounts got;
            if (!complete) {
              k.genotype(i.planes.data(), j.planes.data(), words, got);
              EXPECT_EQ(got.n, want.n);
              EXPECT_EQ(got.r1, want.r1);
              EXPECT_EQ(got.r2, want.r2);
              EXPECT_EQ(got.c1, want.c1);
              EXPECT_EQ(got.c2, want.c2);
            } else {
              k.genotype_complete(i.planes.data(), j.planes.data(), words, got);
            }
            EXPECT_EQ(got.t11, want.t11);
            EXPECT_EQ(got.t12, want.t12);
            EXPECT_EQ(got.t21, want.t21);
            EXPECT_EQ(got.t22, want.t22);
          }
        }
      }
    }
  }
}

// The reducer's kernel (ld-stats): haplotypes non-REF at both, over every bit and within each of
// up to three masks, against counting the bits one by one.
TEST(LdKernels, MaskedCountsOfBothNonRefAsTheDefinition) {
  const ldk::Kernels* sets[4];
  const int n_sets = ldk::available_kernels(sets, 4);
  std::mt19937_64 rng(12);
  for (const std::int64_t width : {1, 63, 64, 65, 511, 512, 513, 1100}) {
    const std::int64_t words = ld::plane_words(width);
    const RowOf i = random_row(rng, width, true, false), j = random_row(rng, width, true, false);
    for (int nmasks = 0; nmasks <= 3; ++nmasks) {
      std::vector<std::vector<std::uint64_t>> masks(3, std::vector<std::uint64_t>(words, 0));
      std::int64_t want[4] = {0, 0, 0, 0};
      for (std::int64_t k = 0; k < width; ++k) {
        const int m = static_cast<int>(rng() % 4);  // bit k in mask m (none when m == 3)
        if (m < 3) set_bit(masks[static_cast<std::size_t>(m)], 0, words, k);
        if (i.v[static_cast<std::size_t>(k)] != 1 || j.v[static_cast<std::size_t>(k)] != 1)
          continue;
        ++want[0];
        if (m < nmasks) ++want[1 + m];
      }
      const std::uint64_t* ptrs[3] = {masks[0].data(), masks[1].data(), masks[2].data()};
      for (int s = 0; s < n_sets; ++s) {
        SCOPED_TRACE(::testing::Message()
                     << sets[s]->name << ", width " << width << ", " << nmasks << " masks");
        std::int64_t got[4] = {0, 0, 0, 0};
        sets[s]->masked_both_non_ref(i.planes.data(), j.planes.data(), words, ptrs, nmasks, got);
        for (int x = 0; x <= nmasks; ++x) EXPECT_EQ(got[x], want[x]) << "count " << x;
      }
    }
  }
}

// The reducer's row kernel: every row of a block against one row, four counts a row (those of
// absent masks 0), against counting the bits one by one (one word: its own path; 8+ words: the
// vector loop).
TEST(LdKernels, MaskedCountsOfRowsAsTheDefinition) {
  const ldk::Kernels* sets[4];
  const int n_sets = ldk::available_kernels(sets, 4);
  std::mt19937_64 rng(13);
  for (const std::int64_t width : {1, 40, 64, 65, 511, 513, 1100}) {
    const std::int64_t words = ld::plane_words(width), row_words = 2 * words;
    const RowOf j = random_row(rng, width, true, false);
    std::vector<RowOf> rows;
    std::vector<std::uint64_t> block;
    for (int r = 0; r < 5; ++r) {
      rows.push_back(random_row(rng, width, true, false));
      block.insert(block.end(), rows.back().planes.begin(), rows.back().planes.end());
    }
    for (int nmasks = 0; nmasks <= 3; ++nmasks) {
      std::vector<std::vector<std::uint64_t>> masks(3, std::vector<std::uint64_t>(words, 0));
      std::vector<int> mask_of;
      for (std::int64_t k = 0; k < width; ++k) {
        mask_of.push_back(static_cast<int>(rng() % 4));  // bit k in mask m (none when m == 3)
        if (mask_of.back() < 3)
          set_bit(masks[static_cast<std::size_t>(mask_of.back())], 0, words, k);
      }
      std::vector<std::int64_t> want(4 * rows.size(), 0);
      for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::int64_t k = 0; k < width; ++k) {
          const auto b = static_cast<std::size_t>(k);
          if (rows[r].v[b] != 1 || j.v[b] != 1) continue;
          ++want[4 * r];
          if (mask_of[b] < nmasks) ++want[4 * r + 1 + static_cast<std::size_t>(mask_of[b])];
        }
      const std::uint64_t* ptrs[3] = {masks[0].data(), masks[1].data(), masks[2].data()};
      for (int s = 0; s < n_sets; ++s) {
        SCOPED_TRACE(::testing::Message()
                     << sets[s]->name << ", width " << width << ", " << nmasks << " masks");
        std::vector<std::int64_t> got(4 * rows.size(), -1);
        sets[s]->masked_both_non_ref_rows(block.data(), static_cast<std::int64_t>(rows.size()),
                                          row_words, j.planes.data(), words, ptrs, nmasks,
                                          got.data());
        EXPECT_EQ(got, want);
      }
    }
  }
}
