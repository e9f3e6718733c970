// The matrix family's kernels against brute force from the definitions (sample_matrix.hpp): bit
// planes of packed rows, the CPU popcount kernels (AVX2 and scalar), and the GPU's formulation
// as integer matrix products (stats/pair_operands.hpp), emulated on the host with the same
// operand values the CUDA kernels write.

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "backend/cpu/pair_kernels.hpp"
#include "stats/matrix_math.hpp"
#include "stats/pair_operands.hpp"

using namespace vczstats;
namespace pairs = vczstats::backend::pairs;

namespace {

/// Random codes (variants x samples): missing, het, hom ALT with the given rates.
std::vector<int> random_codes(std::mt19937_64& rng, std::int64_t variants, std::int64_t samples,
                              double missing) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<int> c(static_cast<std::size_t>(variants * samples));
  for (std::int64_t v = 0; v < variants; ++v) {
    const double f = u(rng);
    for (std::int64_t i = 0; i < samples; ++i) {
      int code = (u(rng) < f) + (u(rng) < f);
      if (u(rng) < missing) code = kPackedMissing;
      c[static_cast<std::size_t>(v * samples + i)] = code;
    }
  }
  return c;
}

std::vector<std::uint64_t> pack(const std::vector<int>& codes, std::int64_t variants,
                                std::int64_t samples) {
  const std::int64_t words = packed_words(samples);
  std::vector<std::uint64_t> p(static_cast<std::size_t>(variants * words), 0);
  for (std::int64_t v = 0; v < variants; ++v)
    for (std::int64_t i = 0; i < samples; ++i)
      p[static_cast<std::size_t>(v * words + i / 32)] |=
          static_cast<std::uint64_t>(codes[static_cast<std::size_t>(v * samples + i)])
          << (2 * (i % 32));
  return p;
}

/// The pair counts of the definitions.
std::int64_t brute_count(PairCount c, const std::vector<int>& codes, std::int64_t variants,
                         std::int64_t samples, std::int64_t i, std::int64_t j) {
  std::int64_t n = 0;
  for (std::int64_t v = 0; v < variants; ++v) {
    const int a = codes[static_cast<std::size_t>(v * samples + i)];
    const int b = codes[static_cast<std::size_t>(v * samples + j)];
    if (a == kPackedMissing || b == kPackedMissing) continue;
    switch (c) {
      case PairCount::HetHet:
        n += a == 1 && b == 1;
        break;
      case PairCount::Ibs0:
        n += (a == 0 && b == 2) || (a == 2 && b == 0);
        break;
      case PairCount::HomHet:
        n += a != 1 && b == 1;
        break;
      case PairCount::HetHom:
        n += a == 1 && b != 1;
        break;
      case PairCount::NonMissing:
        ++n;
        break;
    }
  }
  return n;
}

}  // namespace

TEST(MatrixKernels, Transpose64) {
  std::mt19937_64 rng(1);
  std::uint64_t a[64], b[64];
  for (auto& x : a) x = rng();
  std::copy(a, a + 64, b);
  pairs::transpose64(b);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) ASSERT_EQ((a[r] >> c) & 1, (b[c] >> r) & 1) << r << "," << c;
}

TEST(MatrixKernels, CompactEven) {
  std::mt19937_64 rng(2);
  for (int t = 0; t < 1000; ++t) {
    const std::uint64_t x = rng();
    std::uint32_t want = 0;
    for (int k = 0; k < 32; ++k) want |= static_cast<std::uint32_t>((x >> (2 * k)) & 1) << k;
    ASSERT_EQ(pairs::compact_even(x), want);
  }
}

TEST(MatrixKernels, PlanesAndPairCountsEqualTheDefinitions) {
  std::mt19937_64 rng(3);
  // Shapes: sample counts off word boundaries, batches partly filled, one full 4096 batch.
  for (auto [samples, fill, variants] :
       {std::tuple{37, 300, 512}, std::tuple{64, 256, 256}, std::tuple{5, 1, 256},
        std::tuple{100, 4096, 4096}, std::tuple{33, 8000, 8192}}) {
    SCOPED_TRACE(::testing::Message() << samples << " samples, " << fill << " of " << variants);
    const auto codes = random_codes(rng, fill, samples, 0.1);
    const auto rows = pack(codes, fill, samples);
    pairs::PlaneBatch b;
    b.rows = rows.data();
    b.fill = fill;
    b.words_per_row = packed_words(samples);
    b.samples = samples;
    b.variants = variants;
    std::vector<std::uint64_t> planes(static_cast<std::size_t>(samples * b.stride()), ~0ull);
    b.planes = planes.data();
    pairs::make_planes(b, 0, b.words_per_row);
    // Planes hold the codes.
    for (std::int64_t i = 0; i < samples; ++i)
      for (std::int64_t v = 0; v < variants; ++v) {
        const std::uint64_t* p = b.planes + i * b.stride() + (v / 256) * pairs::kPlaneWords;
        const int w = static_cast<int>((v % 256) / 64), k = static_cast<int>(v % 64);
        const int het = (p[w] >> k) & 1, hom = (p[4 + w] >> k) & 1, alt = (p[8 + w] >> k) & 1;
        const int code = v < fill ? codes[static_cast<std::size_t>(v * samples + i)] : 3;
        ASSERT_EQ(het, code == 1);
        ASSERT_EQ(hom, code == 0 || code == 2);
        ASSERT_EQ(alt, code == 2);
      }
    // Counts: every kernel the CPU has, every mask the statistics use and all five, a stripe of
    // rows.
    const std::int64_t r0 = samples / 3;
    std::vector<std::int64_t> want(static_cast<std::size_t>(kPairCounts * samples * samples));
    for (int c = 0; c < kPairCounts; ++c)
      for (std::int64_t i = r0; i < samples; ++i)
        for (std::int64_t j = 0; j <= i; ++j)
          want[static_cast<std::size_t>((c * samples + i) * samples + j)] =
              brute_count(static_cast<PairCount>(c), codes, fill, samples, i, j);
    for (std::uint32_t mask : {0x1fu, 0x0fu, 0x0eu, 0x1eu, 0x10u, 0x05u}) {
      for (pairs::PairKernel kernel :
           {pairs::PairKernel::Scalar, pairs::PairKernel::Avx2, pairs::PairKernel::Avx512}) {
        if (!pairs::have_kernel(kernel)) {
          std::printf("note: this CPU lacks pair kernel %d, not tested\n",
                      static_cast<int>(kernel));
          continue;
        }
        std::vector<std::vector<std::int32_t>> out(kPairCounts);
        pairs::CountTargets t;
        t.row_offset = r0;
        t.ld = samples;
        for (int c = 0; c < kPairCounts; ++c) {
          out[c].assign(static_cast<std::size_t>((samples - r0) * samples), 0);
          if (mask & (1u << c)) t.counts[c] = out[c].data();
        }
        // Two tiles side by side, as the accumulator splits the stripe.
        const std::int64_t mid = samples / 2;
        for (auto [j0, j1] : {std::pair<std::int64_t, std::int64_t>{0, mid}, {mid, samples}}) {
          if (kernel == pairs::PairKernel::Scalar)
            pairs::count_pairs_scalar(b, mask, r0, samples, j0, j1, t);
          else
            pairs::count_pairs_with(kernel, b, mask, r0, samples, j0, j1, t);
        }
        for (std::int64_t i = r0; i < samples; ++i)
          for (std::int64_t j = 0; j <= i; ++j)
            for (int c = 0; c < kPairCounts; ++c) {
              if (!(mask & (1u << c))) continue;
              ASSERT_EQ(out[c][static_cast<std::size_t>((i - r0) * samples + j)],
                        want[static_cast<std::size_t>((c * samples + i) * samples + j)])
                  << "count " << c << " pair " << i << "," << j << " mask " << mask << " kernel "
                  << static_cast<int>(kernel);
            }
      }
    }
  }
}

TEST(MatrixKernels, GpuFormulationEqualsTheDefinitions) {
  // The operands the CUDA kernels write (operand_value) multiplied as the tensor cores do, and
  // the counts derived from the products, for every mask: equal to the definitions.
  std::mt19937_64 rng(4);
  const std::int64_t samples = 23, variants = 150;
  auto codes = random_codes(rng, variants, samples, 0.15);
  std::vector<bool> keep(variants);
  for (std::int64_t v = 0; v < variants; ++v) keep[static_cast<std::size_t>(v)] = rng() % 5 != 0;
  // The definitions over the kept variants.
  std::vector<int> kept_codes;
  std::int64_t kept = 0;
  for (std::int64_t v = 0; v < variants; ++v)
    if (keep[static_cast<std::size_t>(v)]) {
      ++kept;
      kept_codes.insert(kept_codes.end(), codes.begin() + v * samples,
                        codes.begin() + (v + 1) * samples);
    }
  for (std::uint32_t counts = 1; counts < (1u << kPairCounts); ++counts) {
    const std::uint32_t products = stats::pairs::products_for(counts);
    for (std::int64_t i = 0; i < samples; ++i)
      for (std::int64_t j = 0; j <= i; ++j) {
        std::int32_t v[stats::pairs::kProducts] = {};
        for (int p = 0; p < stats::pairs::kProducts; ++p) {
          if (!(products & (1u << p))) continue;
          for (std::int64_t k = 0; k < variants; ++k) {
            const int a = codes[static_cast<std::size_t>(k * samples + i)];
            const int b = codes[static_cast<std::size_t>(k * samples + j)];
            const bool kk = keep[static_cast<std::size_t>(k)];
            v[p] += stats::pairs::operand_value(stats::pairs::kLeft[p], a, kk) *
                    stats::pairs::operand_value(stats::pairs::kRight[p], b, kk);
          }
        }
        for (int c = 0; c < kPairCounts; ++c) {
          if (!(counts & (1u << c))) continue;
          ASSERT_EQ(stats::pairs::count_from_products(static_cast<PairCount>(c), v, products),
                    brute_count(static_cast<PairCount>(c), kept_codes, kept, samples, i, j))
              << "count " << c << " of mask " << counts << " pair " << i << "," << j;
        }
      }
  }
}

TEST(MatrixKernels, VariantValues) {
  // Counts of a packed row, the MAF filter, the GRM's standardised values.
  const std::int64_t samples = 40;
  std::vector<int> codes(samples, 0);
  codes[0] = 1;   // het
  codes[1] = 2;   // hom ALT
  codes[2] = 3;   // missing
  codes[39] = 1;  // het in the last word
  const auto row = pack(codes, 1, samples);
  const auto c = stats::matrix::row_counts(row.data(), packed_words(samples), samples);
  EXPECT_EQ(c.het, 2);
  EXPECT_EQ(c.hom_alt, 1);
  EXPECT_EQ(c.missing, 1);
  const double f = stats::matrix::alt_frequency(c, samples);
  EXPECT_DOUBLE_EQ(f, 4.0 / 78.0);
  EXPECT_TRUE(stats::matrix::passes_maf(f, 0.05));
  EXPECT_FALSE(stats::matrix::passes_maf(f, 0.06));
  const auto v = stats::matrix::variant_values(c, samples, 0, PairProduct::Standardized);
  ASSERT_TRUE(v.keep && v.product);
  for (int g = 0; g < 3; ++g)
    EXPECT_NEAR(v.value[g], (g - 2 * f) / std::sqrt(2 * f * (1 - f)), 1e-14);
  EXPECT_EQ(v.value[3], 0.0);
  // plink 1.9's missing weights: polymorphic f(1-f)(f^2-f+1); monomorphic 1.
  const auto w = stats::matrix::variant_values(c, samples, 0, PairProduct::MissingWeight);
  EXPECT_NEAR(w.weight, f * (1 - f) * (f * f - f + 1), 1e-15);
  stats::matrix::RowCounts mono;
  mono.missing = 3;
  EXPECT_EQ(stats::matrix::variant_values(mono, samples, 0, PairProduct::MissingWeight).weight,
            1.0);
}
