// The matrix statistics' per-cell formulas (stats/matrix_math.hpp's cell_value, which the host
// and the GPU's values kernel share) against the formulas the statistics used before, written out
// here as they were, on random sums and on the degenerate cells: zero denominators, undefined
// (NaN) values, the diagonal. And the statistics take a backend's values as their matrix. Bit for
// bit, but for NaN, which cell_value always returns as one positive quiet NaN (the host's 0/0 gives
// -NaN, the device's another).

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "stats/matrix_math.hpp"
#include "test_util.hpp"
#include "vczstats/compute.hpp"
#include "vczstats/error.hpp"
#include "vczstats/matrix.hpp"
#include "vczstats/query.hpp"
#include "vczstats/sample_matrix.hpp"

using namespace vczstats;
using stats::matrix::cell_value;
using stats::matrix::CellSums;

namespace {

// ---- the formulas as the statistics computed them (src/stats/matrix_statistics.cpp) ----------

double old_grm(double product, std::int32_t non_missing) {
  return product / static_cast<double>(non_missing);
}

double old_king_kinship(std::int64_t hethet, std::int64_t ibs0, std::int64_t het_i_hom_j,
                        std::int64_t hom_i_het_j) {
  const std::int64_t smaller = hethet + (het_i_hom_j < hom_i_het_j ? het_i_hom_j : hom_i_het_j);
  return 0.5 - static_cast<double>(4 * ibs0 + het_i_hom_j + hom_i_het_j) /
                   static_cast<double>(4 * smaller);
}

double old_king(bool diagonal, std::int32_t hethet, std::int32_t ibs0, std::int32_t het_hom,
                std::int32_t hom_het) {
  return diagonal ? 0.5 : old_king_kinship(hethet, ibs0, het_hom, hom_het);
}

enum class Metric { AlleleCount, Ibs, OneMinusIbs };

double old_distance(Metric metric, bool flat_missing, bool diagonal, std::int64_t variants_count,
                    std::int32_t hom_het, std::int32_t het_hom, std::int32_t ibs0,
                    std::int32_t non_missing, double total, double diag_i, double diag_j,
                    double product) {
  const double variants = static_cast<double>(variants_count);
  double dist = 0;
  if (!diagonal) {
    const double d = hom_het + het_hom + 2.0 * ibs0;
    if (flat_missing) {
      dist = d * variants / non_missing;
    } else {
      dist = d * total / (total - diag_i - diag_j + product);
    }
  }
  switch (metric) {
    case Metric::AlleleCount:
      return dist;
    case Metric::Ibs:
      return 1 - dist / (2 * variants);
    case Metric::OneMinusIbs:
      return dist / (2 * variants);
  }
  return dist;
}

CellValue value_of(Metric m) {
  return m == Metric::AlleleCount ? CellValue::DistanceCount
         : m == Metric::Ibs       ? CellValue::DistanceIbs
                                  : CellValue::DistanceOneMinusIbs;
}

std::int64_t& at(CellSums& c, PairCount k) {
  return c.count[static_cast<int>(k)];
}

/// @p got is @p want to the bit, or the one NaN when @p want is any NaN.
void expect_same(double want, double got, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(got),
              std::bit_cast<std::uint64_t>(std::numeric_limits<double>::quiet_NaN()))
        << what << ": NaN expected, got " << got;
  } else {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(want), std::bit_cast<std::uint64_t>(got))
        << what << ": " << want << " vs " << got;
  }
}

/// Counts of a random cell; a quarter of them small, so zeros and ties are common.
std::int32_t random_count(std::mt19937_64& rng, std::int32_t most) {
  std::uniform_int_distribution<std::int32_t> small(0, 3), any(0, most);
  return rng() % 4 == 0 ? small(rng) : any(rng);
}

double random_double(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return 0.0;
    case 1:
      return -0.0;
    default:
      return std::uniform_real_distribution<double>(-1e4, 1e4)(rng);
  }
}

}  // namespace

TEST(MatrixValues, GrmRatioEqualsTheOldFormula) {
  std::mt19937_64 rng(11);
  for (int t = 0; t < 200000; ++t) {
    CellSums c;
    const std::int32_t nm = random_count(rng, 1 << 20);
    at(c, PairCount::NonMissing) = nm;
    c.product = random_double(rng);
    c.diagonal = rng() % 8 == 0;
    expect_same(old_grm(c.product, nm), cell_value(CellValue::GrmRatio, c, nm + 5, 0, false),
                "grm " + std::to_string(c.product) + " / " + std::to_string(nm));
  }
  // 0 / 0, x / 0, NaN sums.
  CellSums c;
  expect_same(old_grm(0, 0), cell_value(CellValue::GrmRatio, c, 0, 0, false), "grm 0/0");
  c.product = 3;
  EXPECT_EQ(cell_value(CellValue::GrmRatio, c, 0, 0, false), HUGE_VAL);
  c.product = -3;
  EXPECT_EQ(cell_value(CellValue::GrmRatio, c, 0, 0, false), -HUGE_VAL);
  c.product = std::nan("");
  at(c, PairCount::NonMissing) = 4;
  expect_same(NAN, cell_value(CellValue::GrmRatio, c, 4, 0, false), "grm NaN product");
}

TEST(MatrixValues, KingKinshipEqualsTheOldFormula) {
  std::mt19937_64 rng(12);
  for (int t = 0; t < 200000; ++t) {
    CellSums c;
    // Up to 2^28: 4 IBS0 + the others stays inside int64 either way, as with real counts.
    const std::int32_t most = t % 2 ? (1 << 28) : 20;
    const std::int32_t hh = random_count(rng, most), i0 = random_count(rng, most),
                       ho = random_count(rng, most), oh = random_count(rng, most);
    at(c, PairCount::HetHet) = hh;
    at(c, PairCount::Ibs0) = i0;
    at(c, PairCount::HetHom) = ho;
    at(c, PairCount::HomHet) = oh;
    c.diagonal = rng() % 16 == 0;
    expect_same(old_king(c.diagonal, hh, i0, ho, oh),
                cell_value(CellValue::KingKinship, c, 1000, 0, false),
                "king " + std::to_string(hh) + " " + std::to_string(i0) + " " + std::to_string(ho) +
                    " " + std::to_string(oh));
  }
  CellSums c;  // no informative site: 0.5 - 0/0, and 0.5 - x/0
  expect_same(old_king(false, 0, 0, 0, 0), cell_value(CellValue::KingKinship, c, 0, 0, false),
              "king 0/0");
  at(c, PairCount::Ibs0) = 2;
  EXPECT_EQ(cell_value(CellValue::KingKinship, c, 2, 0, false), -HUGE_VAL);
  c.diagonal = true;
  EXPECT_EQ(cell_value(CellValue::KingKinship, c, 2, 0, false), 0.5);
}

TEST(MatrixValues, DistancesEqualTheOldFormulas) {
  std::mt19937_64 rng(13);
  for (int t = 0; t < 300000; ++t) {
    for (const Metric m : {Metric::AlleleCount, Metric::Ibs, Metric::OneMinusIbs}) {
      const bool flat = t % 2 == 0;
      const std::int32_t most = t % 3 ? (1 << 24) : 10;
      CellSums c;
      const std::int32_t oh = random_count(rng, most), ho = random_count(rng, most),
                         i0 = random_count(rng, most), nm = random_count(rng, most);
      at(c, PairCount::HomHet) = oh;
      at(c, PairCount::HetHom) = ho;
      at(c, PairCount::Ibs0) = i0;
      if (flat) at(c, PairCount::NonMissing) = nm;
      const std::int64_t variants = rng() % 8 == 0 ? 0 : random_count(rng, most);
      const double total = rng() % 8 == 0 ? 0.0 : std::abs(random_double(rng));
      if (!flat) {
        c.product = std::abs(random_double(rng)) * 1e-3;
        c.diagonal_i = std::abs(random_double(rng)) * 1e-3;
        c.diagonal_j = rng() % 4 == 0 ? c.diagonal_i : std::abs(random_double(rng)) * 1e-3;
        // Sometimes a zero denominator: every variant missed by one of the two.
        if (rng() % 8 == 0) c.product = c.diagonal_i + c.diagonal_j - total;
      }
      c.diagonal = rng() % 16 == 0;
      expect_same(old_distance(m, flat, c.diagonal, variants, oh, ho, i0, nm, total, c.diagonal_i,
                               c.diagonal_j, c.product),
                  cell_value(value_of(m), c, variants, total, !flat),
                  "distance " + std::to_string(static_cast<int>(m)) + (flat ? " flat" : "") +
                      " t=" + std::to_string(t));
    }
  }
}

TEST(MatrixValues, ValuesAreNeverMergedOrSaved) {
  SampleMatrixRequest r;
  r.counts = pair_bit(PairCount::NonMissing);
  r.value = CellValue::GrmRatio;
  SampleMatrixSums sums = SampleMatrixSums::zeros(r, 3), values = sums;
  EXPECT_TRUE(sums.values.empty());  // zeros() never makes values
  values.counts = {};
  values.values.assign(9, 0.25);
  SampleMatrixSums copy = sums;
  EXPECT_THROW(copy.merge(values), Error);
  EXPECT_THROW(values.merge(sums), Error);
  ByteWriter w;
  EXPECT_THROW(values.save(w), Error);
  EXPECT_NO_THROW(sums.save(w));
}

// A statistic handed values (as the GPU hands them) makes them its matrix as they are, whole or a
// stripe; the CPU backend hands sums. The same matrix either way; KING's pair() then has no counts.
TEST(MatrixValues, StatisticsTakeTheBackendsValues) {
  vcztest::TempDir dir;
  QueryOptions qo;
  qo.store = vcztest::make_random_store(dir, "m", "--seed 5 --samples 9 --variants 60", "");
  const Query q = make_query(qo);
  RunOptions run;
  run.device = parse_device("cpu");
  run.threads = 2;
  using Make = std::unique_ptr<MatrixStatistic> (*)(const Query&, const MatrixOptions&);
  const std::pair<const char*, Make> makes[] = {
      {"grm",
       [](const Query& query, const MatrixOptions& m) {
         return make_grm(query, {m, false});
       }},
      {"king",
       [](const Query& query, const MatrixOptions& m) -> std::unique_ptr<MatrixStatistic> {
         return make_king(query, m);
       }},
      {"distance", [](const Query& query, const MatrixOptions& m) {
         return make_distance(query, {m, DistanceMetric::Ibs, false});
       }}};
  for (const auto& [name, make] : makes)
    for (const std::int64_t row_begin : {0, 4}) {
      SCOPED_TRACE(std::string(name) + " from row " + std::to_string(row_begin));
      MatrixOptions m;
      m.row_begin = row_begin;
      auto from_sums = make(q, m);
      Statistic* list[] = {from_sums.get()};
      (void)compute(q, list, run);
      const SampleMatrix want = from_sums->finish_matrix();
      ASSERT_EQ(want.values.size(), static_cast<std::size_t>((9 - row_begin) * 9));

      auto from_values = make(q, m);
      SampleMatrixSums values;
      values.row_begin = row_begin;
      values.row_end = 9;
      values.variants = want.variants;
      values.values = want.values;
      from_values->accumulate_sample_matrix(std::move(values));
      const SampleMatrix got = from_values->finish_matrix();
      EXPECT_EQ(got.row_begin, want.row_begin);
      EXPECT_EQ(got.row_end, want.row_end);
      EXPECT_EQ(got.variants, want.variants);
      EXPECT_EQ(got.samples, want.samples);
      EXPECT_EQ(got.values, want.values);
      EXPECT_EQ(&from_values->finish_matrix(), &from_values->matrix());  // again: the same
      EXPECT_EQ(from_values->matrix().values, want.values);
      if (auto* king = dynamic_cast<KingStatistic*>(from_values.get())) {
        EXPECT_THROW((void)king->pair(5, 1), Error);
      }
    }
}

// MPI's stripes of rows (one per rank): contiguous, in order, covering the rows, of about equal
// cells (row i has i + 1) counted here by brute force; on the tile grid when that is close.
TEST(MatrixStripes, SplitMatrixRowsBalancesCells) {
  auto cells = [](std::int64_t r0, std::int64_t r1) {
    std::int64_t c = 0;
    for (std::int64_t i = r0; i < r1; ++i) c += i + 1;
    return c;
  };
  struct Case {
    std::int64_t begin, end;
    int parts;
  };
  for (const Case& c : {Case{0, 2000, 2}, Case{0, 30, 3}, Case{0, 100000, 8}, Case{5000, 9000, 4},
                        Case{0, 3, 4}, Case{7, 7, 2}, Case{0, 503, 1}}) {
    const auto s = split_matrix_rows(c.begin, c.end, c.parts);
    ASSERT_EQ(s.size(), static_cast<std::size_t>(c.parts));
    std::int64_t at = c.begin;
    const double share = static_cast<double>(cells(c.begin, c.end)) / c.parts;
    for (const auto& [r0, r1] : s) {
      EXPECT_EQ(r0, at);
      EXPECT_LE(r0, r1);
      at = r1;
      // Within a row's cells of the share (a cut at the balanced row), or 2% (on the grid).
      if (c.end - c.begin >= 10 * c.parts) {
        EXPECT_LE(std::abs(static_cast<double>(cells(r0, r1)) - share),
                  std::max(0.04 * share, 2.0 * static_cast<double>(c.end)))
            << c.begin << ".." << c.end << " / " << c.parts << ": " << r0 << ".." << r1;
      }
    }
    EXPECT_EQ(at, c.end);
  }
  // Large stripes are cut on the grid.
  for (const auto& [r0, r1] : split_matrix_rows(0, 100000, 8))
    EXPECT_TRUE(r0 % kSampleMatrixTile == 0 && (r1 % kSampleMatrixTile == 0 || r1 == 100000))
        << r0 << ".." << r1;
}
