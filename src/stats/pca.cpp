// PCA of the samples (vczstats/matrix.hpp): exact (the top eigenvectors of the GRM that the
// matrix family's heavy pass sums, as plink2 --pca) or randomized (Galinsky et al. 2016's block
// Krylov method, as plink2 --pca approx, over the packed genotypes kept in memory), the
// variant loadings, and the projection of other samples onto them.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <tuple>
#include <utility>

#include "stats/linalg.hpp"
#include "stats/matrix_math.hpp"
#include "stats/packed_product.hpp"
#include "stats/statistic_support.hpp"
#include "vcz/text_file.hpp"
#include "vczstats/error.hpp"
#include "vczstats/exact_sum.hpp"
#include "vczstats/matrix.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/variants.hpp"

namespace vczstats {
namespace {

constexpr std::int64_t kAutoExactSamples = 50000;

/// Kept variants' packed rows and standardised values, in plan order.
struct Retained {
  std::int64_t words = 0;           // per row
  std::vector<std::uint64_t> rows;  // variants x words
  std::vector<double> values;       // variants x 4: value of each code
  std::vector<double> alt_freq;     // per variant
  // variant fields (loadings only)
  std::vector<std::string> chrom, id, ref, alt;
  std::vector<std::int64_t> pos;

  std::int64_t variants() const { return static_cast<std::int64_t>(alt_freq.size()); }
  void append(const Retained& o) {
    rows.insert(rows.end(), o.rows.begin(), o.rows.end());
    values.insert(values.end(), o.values.begin(), o.values.end());
    alt_freq.insert(alt_freq.end(), o.alt_freq.begin(), o.alt_freq.end());
    for (auto [a, b] : {std::pair{&chrom, &o.chrom}, {&id, &o.id}, {&ref, &o.ref}, {&alt, &o.alt}})
      a->insert(a->end(), b->begin(), b->end());
    pos.insert(pos.end(), o.pos.begin(), o.pos.end());
  }
  void save(ByteWriter& w) const {
    w.put(words);
    w.put_vector(rows);
    w.put_vector(values);
    w.put_vector(alt_freq);
    w.put_vector(pos);
    for (const auto* v : {&chrom, &id, &ref, &alt}) {
      w.put<std::uint64_t>(v->size());
      for (const auto& s : *v) w.put_string(s);
    }
  }
  void load(ByteReader& r) {
    words = r.get<std::int64_t>();
    rows = r.get_vector<std::uint64_t>();
    values = r.get_vector<double>();
    alt_freq = r.get_vector<double>();
    pos = r.get_vector<std::int64_t>();
    for (auto* v : {&chrom, &id, &ref, &alt}) {
      const auto n = r.get<std::uint64_t>();
      if (n > alt_freq.size()) throw FormatError("statistic state: malformed PCA variants");
      v->resize(static_cast<std::size_t>(n));
      for (auto& s : *v) s = r.get_string();
    }
    if (rows.size() != alt_freq.size() * static_cast<std::size_t>(words) ||
        values.size() != 4 * alt_freq.size())
      throw FormatError("statistic state: malformed PCA genotypes");
  }
};

/// The ALT alleles of row @p r, comma-separated ("." without any).
std::string alt_alleles(const vcz::VariantBlock& b, std::int64_t r) {
  std::string alt;
  for (int k = 1; k < b.num_alleles(r); ++k) {
    if (k > 1) alt += ',';
    alt += b.allele(r, k);
  }
  return alt.empty() ? "." : alt;
}

class Pca final : public PcaStatistic {
 public:
  Pca(const Query& q, const PcaOptions& o) : q_(q), o_(o), n_(q.samples.size()) {
    if (o.components < 1) throw UsageError("pca: at least one component");
    if (o.maf < 0 || o.maf > 0.5) throw UsageError("pca: --maf must be between 0 and 0.5");
    if (o.components > n_)
      throw UsageError("pca: " + std::to_string(o.components) + " components of " +
                       std::to_string(n_) + " samples");
    method_ = o.method == PcaMethod::Auto
                  ? (n_ <= kAutoExactSamples ? PcaMethod::Exact : PcaMethod::Approx)
                  : o.method;
    request_.counts = pair_bit(PairCount::NonMissing);
    request_.product = PairProduct::Standardized;
    request_.maf = o.maf;
    retained_.words = packed_words(n_);
  }
  std::string name() const override { return "pca"; }
  PcaMethod method() const override { return method_; }
  PassNeeds needs() const override {
    PassNeeds n;
    n.packed = keeps_genotypes();
    n.positions = n.alleles = n.ids = o_.loadings;
    return n;
  }
  void attach(const Backend& b) override {
    backend_ = b;
    threads_ = static_cast<std::int64_t>(b.threads() ? b.threads() : hardware_threads());
  }
  const SampleMatrixRequest* sample_matrix() const override {
    return method_ == PcaMethod::Exact ? &request_ : nullptr;
  }
  void accumulate_sample_matrix(SampleMatrixSums&& sums) override {
    if (!have_grm_)
      grm_ = std::move(sums);
    else
      grm_.merge(sums);
    have_grm_ = true;
  }

  void accumulate(const UnitData& u) override {
    if (!keeps_genotypes() || !u.packed) return;
    const PackedGenotypeView& p = *u.packed;
    const std::int64_t words = p.words_per_row, rows = u.rows();
    if (retained_.rows.capacity() == 0) {
      // Room for every selected row at once (address space only until written): growing a
      // vector of 2.5 GB (10^5 x 10^5) by doubling copied and first-touched it several times,
      // on the thread that delivers the units.
      const auto selected = static_cast<std::size_t>(q_.plan.selected_variants());
      retained_.rows.reserve(selected * static_cast<std::size_t>(words));
      retained_.values.reserve(selected * 4);
      retained_.alt_freq.reserve(selected);
    }
    // Each row's counts and values, and then the kept rows' words, on the run's threads: at
    // 10^5 samples a unit's 1,000 rows are 25 MB and 3 x 10^6 words to count (6 s of the
    // delivering thread for 10^5 variants when it did this alone).
    struct Row {
      stats::matrix::VariantValues v;
      double freq = 0;
    };
    std::vector<Row> row(static_cast<std::size_t>(rows));
    in_parts(rows, [&](std::int64_t r) {
      if (!u.selected(r)) return;
      const auto counts = stats::matrix::row_counts(p.words + r * words, words, n_);
      row[static_cast<std::size_t>(r)] = {
          stats::matrix::variant_values(counts, n_, o_.maf, PairProduct::Standardized),
          stats::matrix::alt_frequency(counts, n_)};
    });
    std::vector<std::int64_t> kept;
    for (std::int64_t r = 0; r < rows; ++r)
      if (u.selected(r) && row[static_cast<std::size_t>(r)].v.keep) kept.push_back(r);
    const std::size_t at = retained_.rows.size();
    retained_.rows.resize(at + kept.size() * static_cast<std::size_t>(words));
    in_parts(static_cast<std::int64_t>(kept.size()), [&](std::int64_t k) {
      std::memcpy(retained_.rows.data() + at + static_cast<std::size_t>(k * words),
                  p.words + kept[static_cast<std::size_t>(k)] * words,
                  static_cast<std::size_t>(words) * 8);
    });
    for (const std::int64_t r : kept) {
      const Row& x = row[static_cast<std::size_t>(r)];
      retained_.values.insert(retained_.values.end(), x.v.value, x.v.value + 4);
      retained_.alt_freq.push_back(x.freq);
      if (o_.loadings) {
        const vcz::VariantBlock& b = *u.variants;
        retained_.chrom.push_back(q_.store.contig_ids()[static_cast<std::size_t>(b.contig[r])]);
        retained_.pos.push_back(b.position[static_cast<std::size_t>(r)]);
        retained_.id.push_back(vcz::variant_key(q_.store, b, r));
        retained_.ref.push_back(b.allele(r, 0));
        retained_.alt.push_back(alt_alleles(b, r));
      }
    }
  }

  /// fn(i) for i in [0, n) in up to threads_ ranges (ThreadPool::run_claimed: during the pass
  /// the pool's workers are busy reading, and a parallel_for would run on this thread alone).
  void in_parts(std::int64_t n, const std::function<void(std::int64_t)>& fn) const {
    const std::int64_t parts = std::clamp<std::int64_t>(n / 16, 1, threads_);
    ThreadPool::shared().run_claimed(static_cast<unsigned>(parts), parts, [&](std::int64_t k) {
      for (std::int64_t i = n * k / parts; i < n * (k + 1) / parts; ++i) fn(i);
    });
  }

  void merge(Statistic& later) override {
    auto& o = stats::detail::same_statistic(*this, later);
    if (o.have_grm_) accumulate_sample_matrix(std::move(o.grm_));
    retained_.append(o.retained_);
  }
  void save(ByteWriter& w) const override {
    w.put_string(name());
    w.put<std::uint8_t>(have_grm_);
    if (have_grm_) grm_.save(w);
    retained_.save(w);
  }
  void load(ByteReader& r) override {
    r.expect(name());
    have_grm_ = r.get<std::uint8_t>() != 0;
    if (have_grm_) grm_.load(r);
    retained_.load(r);
  }

  Table finish() override {
    const int k = o_.components;
    if (method_ == PcaMethod::Exact)
      exact(k);
    else
      approx(k);
    if (o_.loadings) loadings(k);
    auto names = std::make_shared<std::vector<std::string>>();
    for (auto i : q_.samples.indices) names->emplace_back(q_.store.sample_ids()[i]);
    Table t;
    t.add("sample", Column::Kind::Label, names);
    for (int c = 0; c < k; ++c) t.add("pc" + std::to_string(c + 1), Column::Kind::Float);
    for (std::int64_t i = 0; i < n_; ++i) {
      t.push_int(0, i);
      for (int c = 0; c < k; ++c)
        t.push_float(c + 1, vectors_[static_cast<std::size_t>(i * k + c)]);
    }
    t.note = std::string("PCA ") + (method_ == PcaMethod::Exact ? "exact" : "randomized") +
             " over " + std::to_string(variants_) + " variants; eigenvalues " + eigen_text();
    return t;
  }

  const std::vector<double>& eigenvalues() const override { return values_; }

  Table eigenvalue_table() const override {
    Table t;
    t.add("pc", Column::Kind::Int);
    t.add("eigenvalue", Column::Kind::Float);
    for (std::size_t c = 0; c < values_.size(); ++c) {
      t.push_int(0, static_cast<std::int64_t>(c) + 1);
      t.push_float(1, values_[c]);
    }
    return t;
  }

  Table loadings_table() const override {
    if (!o_.loadings) throw UsageError("pca: loadings were not asked for");
    const int k = o_.components;
    Table t;
    auto labels = [](const std::vector<std::string>& v) {
      return std::make_shared<const std::vector<std::string>>(v);
    };
    t.add("chrom", Column::Kind::Label, labels(retained_.chrom));
    t.add("pos", Column::Kind::Int);
    t.add("id", Column::Kind::Label, labels(retained_.id));
    t.add("ref", Column::Kind::Label, labels(retained_.ref));
    t.add("alt", Column::Kind::Label, labels(retained_.alt));
    t.add("alt_freq", Column::Kind::Float);
    for (int c = 0; c < k; ++c) t.add("pc" + std::to_string(c + 1), Column::Kind::Float);
    for (std::int64_t v = 0; v < retained_.variants(); ++v) {
      for (int c : {0, 2, 3, 4}) t.push_int(c, v);
      t.push_int(1, retained_.pos[static_cast<std::size_t>(v)]);
      t.push_float(5, retained_.alt_freq[static_cast<std::size_t>(v)]);
      for (int c = 0; c < k; ++c)
        t.push_float(6 + c, weights_[static_cast<std::size_t>(v * k + c)]);
    }
    t.note = "eigenvalues " + eigen_text();
    return t;
  }

 private:
  bool keeps_genotypes() const { return method_ == PcaMethod::Approx || o_.loadings; }

  /// The products of the kept genotypes: on the run's GPU for the randomized method (the
  /// exact method's loadings stay on the CPU), made on first use.
  stats::PackedProduct& product() {
    if (!product_) {
      const stats::PackedMatrixView x{retained_.rows.data(), retained_.words,
                                      retained_.values.data(), retained_.variants(), n_};
      product_ = method_ == PcaMethod::Approx ? backend_.packed_product(x)
                                              : stats::make_cpu_packed_product(x);
    }
    return *product_;
  }

  std::string eigen_text() const {
    std::ostringstream s;  // (not string +=: GCC 12 warns -Wrestrict on it)
    s.precision(17);
    for (std::size_t c = 0; c < values_.size(); ++c) s << (c ? "," : "") << values_[c];
    return s.str();
  }

  std::string_view sample_name(std::int64_t i) const {
    return q_.store.sample_ids()[q_.samples.indices[static_cast<std::size_t>(i)]];
  }

  void exact(int k) {
    if (!have_grm_) grm_ = SampleMatrixSums::zeros(request_, n_);
    variants_ = grm_.variants;
    if (variants_ == 0)
      throw UsageError("pca: no variants selected (check the regions, samples and filters)");
    const auto& nm = grm_.counts[static_cast<std::size_t>(PairCount::NonMissing)];
    std::vector<double> lower(static_cast<std::size_t>(n_ * n_), 0.0);
    for (std::int64_t i = 0; i < n_; ++i)
      for (std::int64_t j = 0; j <= i; ++j) {
        const auto at = static_cast<std::size_t>(i * n_ + j);
        const double v = grm_.product[at] / nm[at];
        if (!std::isfinite(v))
          throw UsageError("pca: the GRM is not defined between samples " +
                           std::string(sample_name(j)) + " and " + std::string(sample_name(i)) +
                           " (no variant both have called); leave such samples out");
        lower[at] = v;
      }
    grm_ = SampleMatrixSums{};  // no longer needed
    stats::linalg::set_threads(static_cast<int>(hardware_threads()));
    stats::linalg::top_eigen(n_, k, lower, values_, vectors_);
  }

  void approx(int k) {
    // plink2 --pca approx: L = 2k random directions, k power iterations, the Krylov block
    // [XG_0 .. XG_k] (variants x (k + 1) L), its orthonormal basis Q, then the SVD of X^T Q.
    stats::linalg::set_threads(1);
    const std::int64_t m = retained_.variants();
    variants_ = m;
    const std::int64_t l = 2 * k, q = l * (k + 1);
    if (m < q)
      throw UsageError("pca --approx: " + std::to_string(k) + " components need at least " +
                       std::to_string(q) + " variants (" + std::to_string(m) + " kept)");
    std::vector<double> g(static_cast<std::size_t>(n_ * l));
    std::mt19937_64 rng(o_.seed);
    std::normal_distribution<double> normal;
    for (auto& x : g) x = normal(rng);
    std::vector<double> h(static_cast<std::size_t>(m * q));
    for (int it = 0; it <= k; ++it) {
      product().x_times(g.data(), l, h.data(), q, it * l);
      if (it < k) {
        product().xt_times(h.data(), q, it * l, l, g.data());
        for (auto& x : g) x /= static_cast<double>(m);
      }
    }
    stats::linalg::orthonormalize(m, q, h);
    std::vector<double> t(static_cast<std::size_t>(n_ * q));
    product().xt_times(h.data(), q, 0, q, t.data());  // n x q
    std::vector<double> s, u;
    stats::linalg::thin_svd(n_, q, t, s, u);
    values_.resize(static_cast<std::size_t>(k));
    vectors_.resize(static_cast<std::size_t>(n_ * k));
    for (int c = 0; c < k; ++c)
      values_[static_cast<std::size_t>(c)] =
          s[static_cast<std::size_t>(c)] * s[static_cast<std::size_t>(c)] / static_cast<double>(m);
    const std::int64_t rank = std::min(n_, q);  // u: n x rank
    for (std::int64_t i = 0; i < n_; ++i)
      for (int c = 0; c < k; ++c)
        vectors_[static_cast<std::size_t>(i * k + c)] = u[static_cast<std::size_t>(i * rank + c)];
  }

  /// w[v][c] = sum_i x_vi vec_ic / sqrt(lambda_c) (plink2's variant weights).
  void loadings(int k) {
    weights_.assign(static_cast<std::size_t>(retained_.variants() * k), 0.0);
    product().x_times(vectors_.data(), k, weights_.data(), k, 0);
    for (std::int64_t v = 0; v < retained_.variants(); ++v)
      for (int c = 0; c < k; ++c)
        weights_[static_cast<std::size_t>(v * k + c)] /=
            std::sqrt(values_[static_cast<std::size_t>(c)]);
  }

  const Query& q_;
  PcaOptions o_;
  std::int64_t n_;
  PcaMethod method_;
  SampleMatrixRequest request_;
  SampleMatrixSums grm_;
  bool have_grm_ = false;
  Retained retained_;
  std::int64_t threads_ = 1;           // the run's CPU threads (attach)
  Backend backend_ = Backend::cpu(0);  // the run's (attach); the randomized method's products
  std::unique_ptr<stats::PackedProduct> product_;
  std::int64_t variants_ = 0;
  std::vector<double> values_, vectors_, weights_;
};

// ---- projection -----------------------------------------------------------------------------

class Projection final : public Statistic {
 public:
  Projection(const Query& q, const PcaLoadings& l)
      : q_(q), l_(l), n_(q.samples.size()), k_(l.components) {
    for (std::size_t v = 0; v < l_.pos.size(); ++v)
      index_[std::make_tuple(l_.chrom[v], l_.pos[v], l_.ref[v], l_.alt[v])] =
          static_cast<std::int64_t>(v);
    scores_.assign(static_cast<std::size_t>(n_ * k_), stats::StagedSum{});
    called_.assign(static_cast<std::size_t>(n_), 0);
  }
  std::string name() const override { return "pca-projection"; }
  PassNeeds needs() const override {
    PassNeeds n;
    n.packed = n.positions = n.alleles = true;
    return n;
  }
  void accumulate(const UnitData& u) override {
    if (!u.packed) return;
    const vcz::VariantBlock& b = *u.variants;
    bool matched = false;
    for (std::int64_t r = 0; r < u.rows(); ++r) {
      if (!u.selected(r)) continue;
      const auto it = index_.find(std::make_tuple(
          q_.store.contig_ids()[static_cast<std::size_t>(b.contig[static_cast<std::size_t>(r)])],
          b.position[static_cast<std::size_t>(r)], b.allele(r, 0), alt_alleles(b, r)));
      if (it == index_.end()) continue;
      const std::int64_t v = it->second;
      const double f = l_.alt_freq[static_cast<std::size_t>(v)], variance = 2 * f * (1 - f);
      // A monomorphic variant adds 0 but counts in n_variants, as in the GRM's denominators.
      const bool informative = variance > stats::matrix::kSmallEpsilon;
      ++matched_;
      matched = true;
      const double slope = informative ? 1 / std::sqrt(variance) : 0, intercept = -2 * f * slope;
      const double* w = l_.weights.data() + v * k_;
      const std::uint64_t* row = u.packed->words + r * u.packed->words_per_row;
      for (std::int64_t i = 0; i < n_; ++i) {
        const auto code = static_cast<int>((row[i / 32] >> (2 * (i % 32))) & 3);
        if (code == kPackedMissing) continue;
        ++called_[static_cast<std::size_t>(i)];
        if (!informative) continue;
        const double x = code * slope + intercept;
        stats::StagedSum* s = scores_.data() + i * k_;
        for (int c = 0; c < k_; ++c) s[c] += x * w[c];
      }
    }
    if (matched)  // the unit ends: MPI's shares of whole units add up exactly
      for (auto& s : scores_) s.flush();
  }
  void merge(Statistic& later) override {
    auto& o = stats::detail::same_statistic(*this, later);
    for (std::size_t i = 0; i < scores_.size(); ++i) scores_[i] += o.scores_[i];
    for (std::size_t i = 0; i < called_.size(); ++i) called_[i] += o.called_[i];
    matched_ += o.matched_;
  }
  void save(ByteWriter& w) const override {
    w.put_string(name());
    w.put_vector(scores_);
    w.put_vector(called_);
    w.put(matched_);
  }
  void load(ByteReader& r) override {
    r.expect(name());
    auto s = r.get_vector<stats::StagedSum>();
    auto c = r.get_vector<std::int64_t>();
    if (s.size() != scores_.size() || c.size() != called_.size())
      throw FormatError("statistic state: a projection of other samples");
    scores_ = std::move(s);
    called_ = std::move(c);
    matched_ = r.get<std::int64_t>();
  }
  Table finish() override {
    auto names = std::make_shared<std::vector<std::string>>();
    for (auto i : q_.samples.indices) names->emplace_back(q_.store.sample_ids()[i]);
    Table t;
    t.add("sample", Column::Kind::Label, names);
    t.add("n_variants", Column::Kind::Int);
    for (int c = 0; c < k_; ++c) t.add("pc" + std::to_string(c + 1), Column::Kind::Float);
    for (std::int64_t i = 0; i < n_; ++i) {
      t.push_int(0, i);
      const std::int64_t called = called_[static_cast<std::size_t>(i)];
      t.push_int(1, called);
      for (int c = 0; c < k_; ++c)
        t.push_float(c + 2, scores_[static_cast<std::size_t>(i * k_ + c)].value() /
                                (static_cast<double>(called) *
                                 std::sqrt(l_.eigenvalues[static_cast<std::size_t>(c)])));
    }
    t.note = "projected onto " + std::to_string(matched_) + " of " + std::to_string(l_.pos.size()) +
             " loadings variants";
    return t;
  }

 private:
  const Query& q_;
  const PcaLoadings& l_;
  std::int64_t n_;
  int k_;
  std::map<std::tuple<std::string, std::int64_t, std::string, std::string>, std::int64_t> index_;
  /// Per sample and component: sum_k x_k w_k, a double per unit, the units' subtotals exactly
  std::vector<stats::StagedSum> scores_;
  std::vector<std::int64_t> called_;
  std::int64_t matched_ = 0;
};

}  // namespace

std::unique_ptr<PcaStatistic> make_pca(const Query& q, const PcaOptions& o) {
  return std::make_unique<Pca>(q, o);
}

std::unique_ptr<Statistic> make_pca_projection(const Query& q, const PcaLoadings& loadings) {
  return std::make_unique<Projection>(q, loadings);
}

PcaLoadings PcaLoadings::read(const std::string& path) {
  std::istringstream in(vcz::read_text_file(path));
  PcaLoadings l;
  std::string line;
  std::vector<std::string> header;
  std::int64_t line_no = 0;
  auto fail = [&](const std::string& why) {
    throw FormatError(path + ": line " + std::to_string(line_no) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    if (line[0] == '#') {
      const auto at = line.find("eigenvalues ");
      if (at != std::string::npos)
        for (const auto& v : vcz::split_list(line.substr(at + 12)))
          l.eigenvalues.push_back(std::stod(v));
      continue;
    }
    std::vector<std::string> cells;
    std::istringstream words(line);
    for (std::string w; std::getline(words, w, '\t');) cells.push_back(w);
    if (header.empty()) {
      header = cells;
      if (header.size() < 7 || header[0] != "chrom" || header[1] != "pos" ||
          header[5] != "alt_freq")
        fail("not a loadings table (chrom pos id ref alt alt_freq pc1 ...)");
      l.components = static_cast<int>(header.size()) - 6;
      continue;
    }
    if (cells.size() != header.size())
      fail("expected " + std::to_string(header.size()) + " columns");
    try {
      l.chrom.push_back(cells[0]);
      l.pos.push_back(std::stoll(cells[1]));
      l.id.push_back(cells[2]);
      l.ref.push_back(cells[3]);
      l.alt.push_back(cells[4]);
      l.alt_freq.push_back(std::stod(cells[5]));
      for (int c = 0; c < l.components; ++c) l.weights.push_back(std::stod(cells[6 + c]));
    } catch (const std::exception&) {
      fail("not a number");
    }
  }
  if (header.empty()) throw FormatError(path + ": empty loadings table");
  if (l.eigenvalues.empty()) {
    // The eigenvalues beside the table (pca --loadings writes PATH.eigenval: pc, eigenvalue);
    // files of earlier versions list them on a '# eigenvalues ...' line instead.
    const std::string sidecar = path + ".eigenval";
    std::istringstream ev(vcz::read_text_file(sidecar));
    bool first = true;
    while (std::getline(ev, line)) {
      if (line.empty() || line[0] == '#') continue;
      if (std::exchange(first, false)) continue;  // the header
      const auto tab = line.find('\t');
      try {
        l.eigenvalues.push_back(std::stod(line.substr(tab == std::string::npos ? 0 : tab + 1)));
      } catch (const std::exception&) {
        throw FormatError(sidecar + ": not a number: '" + line + "'");
      }
    }
  }
  if (static_cast<int>(l.eigenvalues.size()) != l.components)
    throw FormatError(path + ": its eigenvalues (" + path +
                      ".eigenval, or a '# eigenvalues ...' line) must list one per PC");
  return l;
}

}  // namespace vczstats
