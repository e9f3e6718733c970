// The sample-by-sample matrices (vczstats/matrix.hpp) from the sums of the matrix family's heavy
// pass: GRM (plink2 --make-rel), KING-robust kinship and its table (plink2 --make-king,
// --make-king-table) and distances (plink 1.9 --distance). Formulas: tests/tools/POPGEN.md.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <unordered_set>

#include "stats/matrix_math.hpp"
#include "stats/statistic_support.hpp"
#include "vcz/text_file.hpp"
#include "vczstats/error.hpp"
#include "vczstats/matrix.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/variants.hpp"

namespace vczstats {
namespace {

SampleMatrixRequest request_of(const MatrixOptions& o, std::uint32_t counts, PairProduct product,
                               CellValue value) {
  SampleMatrixRequest r;
  r.counts = counts;
  r.product = product;
  r.value = value;
  r.maf = o.maf;
  r.row_begin = o.row_begin;
  r.row_end = o.row_end;
  return r;
}

/// What every matrix statistic shares: the request, the summed partitions, the matrix.
template <class Base>
class MatrixCommon : public Base {
 public:
  MatrixCommon(const Query& q, SampleMatrixRequest request, std::string name)
      : q_(q), request_(request), name_(std::move(name)) {
    if (request_.maf < 0 || request_.maf > 0.5)
      throw UsageError(name_ + ": --maf must be between 0 and 0.5");
    const std::int64_t n = q_.samples.size();
    if (request_.row_end < 0) request_.row_end = n;
    if (request_.row_begin < 0 || request_.row_begin > request_.row_end || request_.row_end > n)
      throw UsageError(name_ + ": rows " + std::to_string(request_.row_begin) + ".." +
                       std::to_string(request_.row_end) + " outside the " + std::to_string(n) +
                       " samples");
  }
  std::string name() const override { return name_; }
  PassNeeds needs() const override { return {}; }
  const SampleMatrixRequest* sample_matrix() const override { return &request_; }
  void accumulate_sample_matrix(SampleMatrixSums&& sums) override {
    values_only_ = values_only_ || !sums.values.empty();
    if (!have_) {
      sums_ = std::move(sums);
      have_ = true;
    } else {
      sums_.merge(sums);
    }
  }
  void merge(Statistic& later) override {
    auto& o = stats::detail::same_statistic(*this, later);
    if (o.have_) accumulate_sample_matrix(std::move(o.sums_));
  }
  void save(ByteWriter& w) const override {
    w.put_string(name_);
    (have_ ? sums_ : SampleMatrixSums::zeros(request_, q_.samples.size())).save(w);
  }
  void load(ByteReader& r) override {
    r.expect(name_);
    SampleMatrixSums s;
    s.load(r);
    if (s.row_begin != request_.row_begin || s.row_end != request_.row_end)
      throw FormatError("statistic state: " + name_ + " sums of other rows");
    sums_ = std::move(s);
    have_ = true;
  }

 protected:
  const SampleMatrixSums& sums() {
    if (!have_) {
      sums_ = SampleMatrixSums::zeros(request_, q_.samples.size());
      have_ = true;
    }
    return sums_;
  }
  std::int32_t count(PairCount c, std::int64_t i, std::int64_t j) const {
    if (values_only_)
      throw Error(name_ + ": internal error: the pair counts were not kept (only the values)");
    return sums_.counts[static_cast<std::size_t>(c)]
                       [static_cast<std::size_t>((i - sums_.row_begin) * sums_.cols() + j)];
  }
  double product(std::int64_t i, std::int64_t j) const {
    return sums_.product[static_cast<std::size_t>((i - sums_.row_begin) * sums_.cols() + j)];
  }
  std::vector<std::string> sample_names() const {
    std::vector<std::string> names;
    names.reserve(static_cast<std::size_t>(q_.samples.size()));
    for (auto i : q_.samples.indices) names.emplace_back(q_.store.sample_ids()[i]);
    return names;
  }

  const Query& q_;
  SampleMatrixRequest request_;
  std::string name_;
  SampleMatrixSums sums_;
  bool have_ = false;
  bool values_only_ = false;  ///< the backend handed the final values (SampleMatrixSums::values)
};

/// The symmetric matrix whose cells j <= i (i in the stripe of @p s) are value(i, j).
SampleMatrix build_matrix(const SampleMatrixSums& s, std::vector<std::string> names,
                          const std::function<double(std::int64_t, std::int64_t)>& value) {
  SampleMatrix m;
  m.samples = std::move(names);
  m.row_begin = s.row_begin;
  m.row_end = s.row_end;
  m.variants = s.variants;
  const std::int64_t cols = s.cols();
  m.values.resize(static_cast<std::size_t>(s.rows() * cols));
  // Blocks of rows on the shared pool. Row i's task writes cells (i, j <= i) and the mirrors
  // (j, i) of the row's cells inside the stripe (every cell above the diagonal is one, as the
  // stripe's columns end at its last row): no cell has two writers.
  constexpr std::int64_t kRowsPerTask = 16;
  const std::int64_t tasks = (s.rows() + kRowsPerTask - 1) / kRowsPerTask;
  ThreadPool::shared().parallel_for(tasks, [&](std::int64_t t) {
    const std::int64_t i0 = s.row_begin + t * kRowsPerTask,
                       i1 = std::min(s.row_end, i0 + kRowsPerTask);
    for (std::int64_t i = i0; i < i1; ++i) {
      double* row = m.values.data() + (i - s.row_begin) * cols;
      for (std::int64_t j = 0; j <= i; ++j) {
        const double v = value(i, j);
        row[j] = v;
        if (j >= s.row_begin && j != i)  // its mirror is in the stripe too
          m.values[static_cast<std::size_t>((j - s.row_begin) * cols + i)] = v;
      }
    }
  });
  return m;
}

/// A sample label column and one float column per matrix column.
Table matrix_table(const SampleMatrix& m) {
  auto names = std::make_shared<std::vector<std::string>>(m.samples);
  Table t;
  const int sample = t.add("sample", Column::Kind::Label, names);
  for (std::int64_t j = 0; j < m.cols(); ++j)
    t.add(m.samples[static_cast<std::size_t>(j)], Column::Kind::Float);
  for (std::int64_t i = m.row_begin; i < m.row_end; ++i) {
    t.push_int(sample, i);
    for (std::int64_t j = 0; j < m.cols(); ++j) t.push_float(static_cast<int>(j) + 1, m.at(i, j));
  }
  return t;
}

/// A matrix statistic: the request's CellValue of the sums of each cell j <= i defines the
/// symmetric matrix; a backend that computed the values hands them over instead of the sums.
template <class Base>
class MatrixValues : public MatrixCommon<Base> {
 public:
  using MatrixCommon<Base>::MatrixCommon;
  const SampleMatrix& matrix() const override { return matrix_; }
  const SampleMatrix& finish_matrix() override {
    const SampleMatrixSums& s = this->sums();
    if (this->values_only_) {
      if (s.values.empty()) return matrix_;  // they were moved into it
      matrix_ = SampleMatrix{};
      matrix_.samples = this->sample_names();
      matrix_.row_begin = s.row_begin;
      matrix_.row_end = s.row_end;
      matrix_.variants = s.variants;
      matrix_.values = std::move(this->sums_.values);
      return matrix_;
    }
    matrix_ = build_matrix(s, this->sample_names(),
                           [this](std::int64_t i, std::int64_t j) { return value(i, j); });
    return matrix_;
  }
  Table finish() override { return matrix_table(finish_matrix()); }

 protected:
  /// The formula of each cell: the request's, which a backend may also apply itself.
  virtual CellValue formula() const { return this->request_.value; }

  /// The value of the pair j <= i (i in the stripe), from the sums.
  double value(std::int64_t i, std::int64_t j) const {
    const SampleMatrixSums& s = this->sums_;
    const std::uint32_t requested = this->request_.counts;
    stats::matrix::CellSums c;
    for (int k = 0; k < kPairCounts; ++k)
      if (requested & pair_bit(static_cast<PairCount>(k)))
        c.count[k] = this->count(static_cast<PairCount>(k), i, j);
    const bool with_product = this->request_.product != PairProduct::None;
    if (with_product) {
      c.product = this->product(i, j);
      c.diagonal_i = s.diagonal[static_cast<std::size_t>(i)];
      c.diagonal_j = s.diagonal[static_cast<std::size_t>(j)];
    }
    c.diagonal = i == j;
    return stats::matrix::cell_value(formula(), c, s.variants, s.weight_total,
                                     this->request_.product == PairProduct::MissingWeight);
  }

  SampleMatrix matrix_;
};

// ---- GRM ------------------------------------------------------------------------------------

class Grm final : public MatrixValues<MatrixStatistic> {
 public:
  Grm(const Query& q, const GrmOptions& o)
      : MatrixValues(q,
                     request_of(o.matrix, pair_bit(PairCount::NonMissing),
                                o.cov ? PairProduct::Centered : PairProduct::Standardized,
                                CellValue::GrmRatio),
                     "grm") {}
};

// ---- KING -----------------------------------------------------------------------------------

constexpr std::uint32_t kKingCounts = pair_bit(PairCount::HetHet) | pair_bit(PairCount::Ibs0) |
                                      pair_bit(PairCount::HomHet) | pair_bit(PairCount::HetHom);

class King final : public MatrixValues<KingStatistic> {
 public:
  King(const Query& q, const MatrixOptions& o, bool with_nsnp)
      : MatrixValues(q,
                     request_of(o, kKingCounts | (with_nsnp ? pair_bit(PairCount::NonMissing) : 0),
                                PairProduct::None,
                                // the table reads the counts of each pair
                                with_nsnp ? CellValue::None : CellValue::KingKinship),
                     "king") {}

  KingPair pair(std::int64_t i, std::int64_t j) const override {
    KingPair p;
    if (request_.counts & pair_bit(PairCount::NonMissing))
      p.nsnp = count(PairCount::NonMissing, i, j);
    p.hethet = count(PairCount::HetHet, i, j);
    p.ibs0 = count(PairCount::Ibs0, i, j);
    p.het_i_hom_j = count(PairCount::HetHom, i, j);
    p.hom_i_het_j = count(PairCount::HomHet, i, j);
    p.kinship = stats::matrix::king_kinship(p.hethet, p.ibs0, p.het_i_hom_j, p.hom_i_het_j);
    return p;
  }

 private:
  // The matrix holds kinships also when the request keeps the counts for pair() (with_nsnp:
  // then no backend computes the values, and they come from the sums here).
  CellValue formula() const override { return CellValue::KingKinship; }
};

class KingTable final : public Statistic {
 public:
  KingTable(const Query& q, const KingTableOptions& o)
      : king_(make_king(q, o.matrix, true)), min_(o.min_kinship) {}
  std::string name() const override { return "king-table"; }
  PassNeeds needs() const override { return {}; }
  const SampleMatrixRequest* sample_matrix() const override { return king_->sample_matrix(); }
  void accumulate_sample_matrix(SampleMatrixSums&& sums) override {
    king_->accumulate_sample_matrix(std::move(sums));
  }
  void merge(Statistic& later) override {
    king_->merge(*stats::detail::same_statistic(*this, later).king_);
  }
  void save(ByteWriter& w) const override { king_->save(w); }
  void load(ByteReader& r) override { king_->load(r); }

  Table finish() override {
    const SampleMatrix& m = king_->finish_matrix();
    auto names = std::make_shared<std::vector<std::string>>(m.samples);
    Table t;
    t.add("sample1", Column::Kind::Label, names);
    t.add("sample2", Column::Kind::Label, names);
    t.add("nsnp", Column::Kind::Int);
    for (const char* c : {"hethet", "ibs0", "kinship"}) t.add(c, Column::Kind::Float);
    for (std::int64_t i = std::max<std::int64_t>(m.row_begin, 1); i < m.row_end; ++i)
      for (std::int64_t j = 0; j < i; ++j) {
        const KingPair p = king_->pair(i, j);
        if (p.kinship < min_) continue;
        const double nsnp = static_cast<double>(p.nsnp);
        t.push_int(0, i);
        t.push_int(1, j);
        t.push_int(2, p.nsnp);
        t.push_float(3, static_cast<double>(p.hethet) / nsnp);
        t.push_float(4, static_cast<double>(p.ibs0) / nsnp);
        t.push_float(5, p.kinship);
      }
    return t;
  }

 private:
  std::unique_ptr<KingStatistic> king_;
  double min_;
};

// ---- distance -------------------------------------------------------------------------------

constexpr std::uint32_t kDistanceCounts =
    pair_bit(PairCount::Ibs0) | pair_bit(PairCount::HomHet) | pair_bit(PairCount::HetHom);

class Distance final : public MatrixValues<MatrixStatistic> {
 public:
  Distance(const Query& q, const DistanceOptions& o)
      : MatrixValues(
            q,
            request_of(o.matrix,
                       kDistanceCounts | (o.flat_missing ? pair_bit(PairCount::NonMissing) : 0),
                       o.flat_missing ? PairProduct::None : PairProduct::MissingWeight,
                       value_of(o.metric)),
            "distance") {}

 private:
  static CellValue value_of(DistanceMetric m) {
    switch (m) {
      case DistanceMetric::AlleleCount:
        return CellValue::DistanceCount;
      case DistanceMetric::Ibs:
        return CellValue::DistanceIbs;
      case DistanceMetric::OneMinusIbs:
        return CellValue::DistanceOneMinusIbs;
    }
    return CellValue::DistanceCount;
  }
};

}  // namespace

std::unique_ptr<MatrixStatistic> make_grm(const Query& q, const GrmOptions& o) {
  return std::make_unique<Grm>(q, o);
}

std::unique_ptr<KingStatistic> make_king(const Query& q, const MatrixOptions& o, bool with_nsnp) {
  return std::make_unique<King>(q, o, with_nsnp);
}

std::unique_ptr<Statistic> make_king_table(const Query& q, const KingTableOptions& o) {
  return std::make_unique<KingTable>(q, o);
}

std::unique_ptr<MatrixStatistic> make_distance(const Query& q, const DistanceOptions& o) {
  return std::make_unique<Distance>(q, o);
}

void extract_variants(Query& q, const std::string& path) {
  const std::string text = vcz::read_text_file(path);
  if (q.count_filters_pending()) {
    q.pending_extract = path;  // apply_count_filters applies it after them
    return;
  }
  std::unordered_set<std::string> wanted;
  {
    std::istringstream in(text);
    std::string line, id;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      if (words >> id && id != ".") wanted.insert(id);
    }
  }
  const vcz::VariantReader reader(q.store, false, true, /*key_missing_ids=*/true);
  std::vector<vcz::WorkUnit> kept;
  std::int64_t selected = 0;
  for (auto& unit : q.plan.units) {
    const vcz::VariantBlock b = reader.read(unit.begin, unit.end);
    if (unit.mask.empty()) unit.mask.assign(static_cast<std::size_t>(unit.size()), 1);
    std::int64_t any = 0;
    for (std::size_t r = 0; r < unit.mask.size(); ++r) {
      if (unit.mask[r] && !wanted.contains(b.id[r])) unit.mask[r] = 0;
      any += unit.mask[r];
    }
    selected += any;
    if (any) kept.push_back(std::move(unit));
  }
  if (selected == 0)
    throw UsageError("--extract " + path + ": none of its " + std::to_string(wanted.size()) +
                     " variant IDs is among the selected variants");
  q.plan.units = std::move(kept);
}

double matrix_cell_bytes(const SampleMatrixRequest& request) {
  double bytes = 8;  // the value
  for (int c = 0; c < kPairCounts; ++c)
    if (request.counts & pair_bit(static_cast<PairCount>(c))) bytes += 4;
  if (request.product != PairProduct::None) bytes += 8;
  return bytes;
}

std::vector<std::pair<std::int64_t, std::int64_t>> plan_matrix_stripes(
    const SampleMatrixRequest& request, std::int64_t samples, double memory_bytes,
    std::int64_t max_rows, bool whole) {
  const double per_cell = matrix_cell_bytes(request);
  const std::int64_t n = samples;
  auto bytes = [&](std::int64_t r0, std::int64_t r1) {
    return static_cast<double>(r1 - r0) * static_cast<double>(r1) * per_cell;
  };
  std::vector<std::pair<std::int64_t, std::int64_t>> s;
  if (whole || n == 0) {
    if (n > 0 && bytes(0, n) > memory_bytes)
      throw UsageError(fmt::format(
          "the square matrix of {} samples needs {:.0f} MiB, over the memory budget of {:.0f} "
          "MiB; the triangle and square0 shapes can be made in stripes of rows",
          n, bytes(0, n) / 1048576.0, memory_bytes / 1048576.0));
    s.push_back({0, n});
    return s;
  }
  for (std::int64_t r0 = 0; r0 < n;) {
    std::int64_t r1 = n;
    while (r1 > r0 + 1 && bytes(r0, r1) > memory_bytes) r1 = r0 + (r1 - r0) / 2;
    // On the tile grid when a tile of rows fits: no product computed in two stripes.
    const std::int64_t on_grid = r1 / kSampleMatrixTile * kSampleMatrixTile;
    if (r1 < n && on_grid > r0) r1 = on_grid;
    if (max_rows > 0) r1 = std::min(r1, r0 + max_rows);
    s.push_back({r0, r1});
    r0 = r1;
  }
  return s;
}

}  // namespace vczstats
