// LD summaries that write no pairs (vczstats/ld.hpp): `ld --decay`, r² summed in distance bins,
// and `ld --ld-scores`, ldsc's per-variant sums of adjusted r². Both take the pairs of the same
// variant-pair band as `ld` (CPU popcounts, or the GPU band's kernels: the pairs come back to
// the host, where they are reduced here) and keep the rows of the band's reach, as `ld` does, so
// that a partition's pairs with its neighbours are added when partitions merge
// (stats/pair_statistic.hpp). Sums are ExactSum, so any split gives the same bits.
// `ld --decay -P` takes one band per population (stats/banded_pairs.hpp): each band masks the
// planes to its population's samples, so the store is read once for every curve.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "stats/banded_pairs.hpp"
#include "stats/haplo_rows.hpp"
#include "stats/ld_math.hpp"
#include "stats/ld_moments.hpp"
#include "stats/pair_statistic.hpp"
#include "vczstats/bins.hpp"
#include "vczstats/exact_sum.hpp"
#include "vczstats/ld.hpp"

namespace vczstats {
namespace {

using stats::ExactSum;

void check_measure(PairMeasure m, const char* what) {
  if (m != PairMeasure::GenotypeR2 && m != PairMeasure::Haplotype)
    throw UsageError(std::string(what) + ": r2 of allele counts (--r2) or of haplotypes (--hap)");
}

std::int64_t pair_width(const Query& q, const PairRequest& r) {
  return r.haplotypes() ? q.samples.size() * q.store.ploidy() : q.samples.size();
}

/// The rows of a summary: the band's row only.
struct MetaRow {
  PairRow meta;
};

/// A summary that sums its pairs into bins and keeps only the rows within the band's reach
/// (ld --decay, ld-stats). @p Derived gives add_pair(const PairValue&), merge_sums(Derived&
/// later) (adding the later partition's sums to its own, leaving the later one's empty),
/// save_sums(ByteWriter&), load_sums(ByteReader&), and may give add_rows(rows) (sums over
/// sites).
template <class Derived>
class BinnedPairStatistic : public stats::pairs::PairStatistic<MetaRow> {
 public:
  void accumulate_pairs(PairBatch&& batch) override {
    if (!take_batch(batch, [](const PairRow& r) { return MetaRow{r}; })) return;
    self().add_rows(batch.rows);
    for (const PairValue& v : batch.pairs) self().add_pair(v);
    drop_done();
  }

  void merge(Statistic& later_base) override {
    auto& later = stats::detail::same_statistic(self(), later_base);
    self().merge_sums(later);
    merge_partition(
        later, [](MetaRow&, std::int64_t) {}, [&](const PairValue& v) { self().add_pair(v); });
    drop_done();
  }

  void save(ByteWriter& w) const override {
    save_rows(w, [](ByteWriter& to, const MetaRow& r) { to.put(r.meta); });
    static_cast<const Derived&>(*this).save_sums(w);
  }

  void load(ByteReader& r) override {
    load_rows(r, [](ByteReader& from) { return MetaRow{from.get<PairRow>()}; });
    self().load_sums(r);
  }

 protected:
  using PairStatistic::PairStatistic;
  void add_rows(const std::vector<PairRow>&) {}

  std::int64_t hint_a_ = 0, hint_b_ = 0;  // ordinal_near()'s guesses for a pair's rows

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  /// Drop the rows no later variant pairs with (a partition that starts the run only: the others
  /// keep theirs for the merge); the last row stays, for place().
  void drop_done() {
    if (resolved_) drop_rows(count_ - 1);
  }
};

// ---- ld --decay -------------------------------------------------------------------------------

struct DecayBin {
  std::int64_t pairs = 0;
  ExactSum sum;
};

class LdDecayStatistic final : public BinnedPairStatistic<LdDecayStatistic> {
 public:
  LdDecayStatistic(const Query& q, const LdDecayOptions& o)
      : BinnedPairStatistic(q, "ld --decay"), options_(o) {
    check_measure(o.measure, "ld --decay");
    const auto& e = o.edges;
    check_bin_edges(e, "--decay");
    if (o.window_variants < 1) throw UsageError("--ld-window must be at least 1");
    if (o.window_size < 0) throw UsageError("--window-size must not be negative");
    request_.measure = o.measure;
    request_.max_variants = o.window_variants - 1;
    request_.max_bp = e.back() - 1;  // distances below the last edge
    request_.min_r2 = 0;             // every pair whose r² is defined
    width_ = pair_width(q, request_);
  }

  std::string name() const override { return "ld_decay"; }

  Table finish() override {
    Table t;
    const bool windows = options_.window_size > 0;
    if (windows) {
      t.add("chrom", Column::Kind::Label, contigs_);
      t.add("window_start", Column::Kind::Int);
      t.add("window_end", Column::Kind::Int);
    }
    t.add("bin_start", Column::Kind::Int);
    t.add("bin_end", Column::Kind::Int);
    t.add("pairs", Column::Kind::Int);
    t.add("sum_r2", Column::Kind::Float);
    t.add("mean_r2", Column::Kind::Float);
    t.note = options_.measure == PairMeasure::Haplotype
                 ? "r2 of phased haplotypes (as ld --hap) binned by bp distance pos_b - pos_a"
                 : "r2 of non-REF allele counts (as ld --r2) binned by bp distance pos_b - pos_a";
    auto curve = [&](const std::vector<DecayBin>& bins, std::int32_t contig, std::int64_t k) {
      for (std::size_t b = 0; b + 1 < options_.edges.size(); ++b) {
        int c = 0;
        if (windows) {
          t.push_int(c++, contig);
          t.push_int(c++, k * options_.window_size + 1);
          t.push_int(c++, (k + 1) * options_.window_size);
        }
        t.push_int(c++, options_.edges[b]);
        t.push_int(c++, options_.edges[b + 1]);
        const double sum = bins[b].sum.value();
        t.push_int(c++, bins[b].pairs);
        t.push_float(c++, sum);
        t.push_float(c++, bins[b].pairs ? sum / static_cast<double>(bins[b].pairs)
                                        : std::numeric_limits<double>::quiet_NaN());
      }
    };
    if (!windows && groups_.empty()) groups_[{0, 0}] = empty_bins();  // one curve, maybe empty
    for (const auto& [key, bins] : groups_) curve(bins, key.first, key.second);
    return t;
  }

 private:
  friend BinnedPairStatistic;

  void merge_sums(LdDecayStatistic& later) {
    for (const auto& [key, bins] : later.groups_) {
      auto& ours = group(key);
      for (std::size_t b = 0; b < bins.size(); ++b) {
        ours[b].pairs += bins[b].pairs;
        ours[b].sum += bins[b].sum;
      }
    }
    later.groups_.clear();
  }

  void save_sums(ByteWriter& w) const {
    w.put<std::uint64_t>(groups_.size());
    for (const auto& [key, bins] : groups_) {
      w.put(key.first);
      w.put(key.second);
      w.put_vector(bins);
    }
  }

  void load_sums(ByteReader& r) {
    groups_.clear();
    const auto n = r.get<std::uint64_t>();
    for (std::uint64_t g = 0; g < n; ++g) {
      const auto contig = r.get<std::int32_t>();
      const auto k = r.get<std::int64_t>();
      auto bins = r.get_vector<DecayBin>();
      if (bins.size() + 1 != options_.edges.size())
        throw FormatError("statistic state: ld_decay bins do not match the edges");
      groups_[{contig, k}] = std::move(bins);
    }
  }

  using Key = std::pair<std::int32_t, std::int64_t>;  // contig, window (0, 0: the one curve)

  std::vector<DecayBin> empty_bins() const {
    return std::vector<DecayBin>(options_.edges.size() - 1);
  }
  std::vector<DecayBin>& group(const Key& key) {
    auto it = groups_.find(key);
    if (it == groups_.end()) it = groups_.emplace(key, empty_bins()).first;
    return it->second;
  }

  void add_pair(const PairValue& v) {
    const PairRow& a = at(ordinal_near(v.a, hint_a_)).meta;
    const PairRow& b = at(ordinal_near(v.b, hint_b_)).meta;
    const std::int64_t bin = bin_of(options_.edges, b.pos - a.pos);
    if (bin < 0) return;
    const Key key =
        options_.window_size > 0 ? Key{a.contig, (a.pos - 1) / options_.window_size} : Key{0, 0};
    DecayBin& x = group(key)[static_cast<std::size_t>(bin)];
    ++x.pairs;
    x.sum += v.r2;
  }

  LdDecayOptions options_;
  std::map<Key, std::vector<DecayBin>> groups_;
};

/// ld --decay -P: one curve per population, each an LdDecayStatistic fed by its own band, whose
/// mask keeps the population's samples (haplotypes with --hap); the rows and the merges across
/// partitions are each curve's own. Table: pop, then a curve's columns, populations in order.
class LdDecayPopsStatistic final : public Statistic, public stats::pairs::BandedPairs {
 public:
  LdDecayPopsStatistic(const Query& q, const LdDecayOptions& o)
      : pops_(stats::detail::population_labels(q)) {
    const bool haplotypes = o.measure == PairMeasure::Haplotype;
    const std::int64_t ploidy = haplotypes ? q.store.ploidy() : 1;  // plane bits per sample
    const std::int64_t words = (q.samples.size() * ploidy + 63) / 64;
    for (int k = 0; k < q.pops.count(); ++k) {
      const auto p = static_cast<std::size_t>(k);
      if (q.pops.sizes[p] < 2)
        throw UsageError("ld --decay: population " + q.pops.names[p] +
                         " has fewer than two samples");
      curves_.push_back(std::make_unique<LdDecayStatistic>(q, o));
      stats::pairs::PairBandRequest band{*curves_.back()->pair_request(), {}, nullptr, false};
      if (q.pops.sizes[p] < q.samples.size()) {  // else every plane bit: no mask
        band.mask.assign(static_cast<std::size_t>(words), 0);
        for (std::int64_t i = 0; i < q.samples.size(); ++i)
          if (q.pops.of[static_cast<std::size_t>(i)] == k)
            for (std::int64_t j = 0; j < ploidy; ++j) {
              const std::int64_t bit = i * ploidy + j;
              band.mask[static_cast<std::size_t>(bit / 64)] |= std::uint64_t{1} << (bit % 64);
            }
      }
      bands_.push_back(std::move(band));
    }
  }

  std::string name() const override { return "ld_decay_pops"; }
  PassNeeds needs() const override { return {}; }
  void begin(const stats::SiteCursor& cursor) override {
    for (auto& c : curves_) c->begin(cursor);
  }
  std::vector<const stats::pairs::PairBandRequest*> pair_bands() const override {
    std::vector<const stats::pairs::PairBandRequest*> out;
    for (const auto& b : bands_) out.push_back(&b);
    return out;
  }
  void accumulate_band(std::size_t band, PairBatch&& batch) override {
    if (band >= curves_.size()) throw Error("ld --decay: a batch of an unknown band");
    curves_[band]->accumulate_pairs(std::move(batch));
  }

  void merge(Statistic& later_base) override {
    auto& later = stats::detail::same_statistic(*this, later_base);
    for (std::size_t k = 0; k < curves_.size(); ++k) curves_[k]->merge(*later.curves_[k]);
  }

  Table finish() override {
    Table all;
    for (std::size_t k = 0; k < curves_.size(); ++k) {
      Table t = curves_[k]->finish();
      Column pop;
      pop.name = "pop";
      pop.kind = Column::Kind::Label;
      pop.labels = pops_;
      pop.ints.assign(static_cast<std::size_t>(t.rows()), static_cast<std::int64_t>(k));
      t.columns.insert(t.columns.begin(), std::move(pop));
      if (k == 0)
        all = std::move(t);
      else
        all.append(t);
    }
    return all;
  }

  void save(ByteWriter& w) const override {
    w.put_string(name());
    for (const auto& c : curves_) c->save(w);
  }
  void load(ByteReader& r) override {
    r.expect(name());
    for (auto& c : curves_) c->load(r);
  }

 private:
  std::shared_ptr<const std::vector<std::string>> pops_;
  std::vector<std::unique_ptr<LdDecayStatistic>> curves_;  // one per population
  std::vector<stats::pairs::PairBandRequest> bands_;       // curve k's request, population k's mask
};

// ---- ld --ld-scores ---------------------------------------------------------------------------

struct ScoreRow {
  PairRow meta;
  ExactSum l2;
  std::int64_t pairs = 0;
  double cm = 0;  // genetic position (cM windows)
};

/// The largest bp distance between two selected variants of one contig at most @p w cM apart
/// on @p map (the band's reach for a cM window): the variants of the plan's units, filters
/// aside (a superset of the rows), two pointers per contig.
std::int64_t cm_window_bp(const Query& q, const stats::haplo::GeneticMap& map, double w,
                          const std::vector<std::string>& contigs) {
  const vcz::VariantReader reader(q.store, false, false);
  std::int64_t reach = 0;
  std::int32_t contig = -1;
  std::vector<std::pair<double, std::int64_t>> at;  // cM, bp of the contig's variants so far
  std::size_t lo = 0;
  for (const vcz::WorkUnit& u : q.plan.units) {
    const vcz::VariantBlock b = reader.read(u.begin, u.end);
    for (std::int64_t r = 0; r < b.size(); ++r) {
      if (!u.mask.empty() && !u.mask[static_cast<std::size_t>(r)]) continue;
      const auto k = static_cast<std::size_t>(r);
      if (b.contig[k] != contig) {
        contig = b.contig[k];
        at.clear();
        lo = 0;
      }
      const double cm = map.at(contigs[static_cast<std::size_t>(contig)], b.position[k]);
      at.emplace_back(cm, b.position[k]);
      while (at.back().first - at[lo].first > w) ++lo;
      reach = std::max(reach, at.back().second - at[lo].second);
    }
  }
  return reach;
}

}  // namespace

namespace stats::moments {

PairBinner::PairBinner(const Query& q, const LdStatsOptions& o)
    : edges_(o.edges), r_edges_(o.r_edges), r_(!o.r_edges.empty()) {
  if (r_) {
    if (!o.edges.empty()) throw UsageError("ld-stats: give --bp-bins or --r-bins, not both");
    if (o.map.empty()) throw UsageError("ld-stats: --r-bins needs --map");
    if (r_edges_.size() < 2) throw UsageError("--r-bins: at least two bin edges are needed");
    if (!(r_edges_.front() >= 0)) throw UsageError("--r-bins: bin edges must not be negative");
    for (std::size_t k = 1; k < r_edges_.size(); ++k)
      if (!(r_edges_[k] > r_edges_[k - 1])) throw UsageError("--r-bins: bin edges must increase");
    map_ = std::make_shared<const haplo::GeneticMap>(o.map);
    contigs_ = stats::detail::contig_labels(q);
    max_bp_ = cm_window_bp(q, *map_, r_edges_.back() * 100, *contigs_);
  } else {
    if (!o.map.empty()) throw UsageError("ld-stats: --map goes with --r-bins");
    check_bin_edges(o.edges, "--bp-bins");
    max_bp_ = o.edges.back() - 1;
  }
}

double PairBinner::coordinate(std::int32_t contig, std::int64_t pos) const {
  return r_ ? map_->at((*contigs_)[static_cast<std::size_t>(contig)], pos) : 0.0;
}

std::int64_t PairBinner::bin_at(std::int64_t a, std::int64_t b, double ca, double cb) const {
  if (!r_) return bin_of(edges_, b - a);
  const double r = std::fabs(cb - ca) / 100;
  if (!(r >= r_edges_.front() && r < r_edges_.back())) return -1;
  return std::upper_bound(r_edges_.begin(), r_edges_.end(), r) - r_edges_.begin() - 1;
}

void PairBinner::add_columns(Table& t) const {
  const auto kind = r_ ? Column::Kind::Float : Column::Kind::Int;
  t.add("bin_start", kind);
  t.add("bin_end", kind);
}

void PairBinner::push_edges(Table& t, std::size_t k) const {
  if (r_) {
    t.push_float(0, r_edges_[k]);
    t.push_float(1, r_edges_[k + 1]);
  } else {
    t.push_int(0, edges_[k]);
    t.push_int(1, edges_[k + 1]);
  }
}

std::string PairBinner::what() const {
  return r_ ? "bins of recombination distance |cM_b - cM_a| / 100 on the map"
            : "bins of bp distance pos_b - pos_a";
}

}  // namespace stats::moments

namespace {

class LdScoreStatistic final
    : public stats::pairs::ReleasingPairStatistic<LdScoreStatistic, ScoreRow> {
 public:
  LdScoreStatistic(const Query& q, const LdScoreOptions& o)
      : ReleasingPairStatistic(q, "ld --ld-scores"), options_(o) {
    check_measure(o.measure, "ld --ld-scores");
    if ((o.window_variants >= 0) + (o.window_bp >= 0) + (o.window_cm >= 0) != 1)
      throw UsageError(
          "ld --ld-scores: give one window, --ld-wind-kb, --ld-wind-snps or --ld-wind-cm");
    if ((o.window_cm >= 0) != !o.map.empty())
      throw UsageError("ld --ld-scores: --ld-wind-cm needs --map, and --map --ld-wind-cm");
    request_.measure = o.measure;
    request_.min_r2 = 0;
    if (o.window_variants >= 0) request_.max_variants = o.window_variants;
    if (o.window_bp >= 0) request_.max_bp = o.window_bp;
    if (o.window_cm >= 0) {
      map_ = std::make_shared<const stats::haplo::GeneticMap>(o.map);
      request_.max_bp = cm_window_bp(q, *map_, o.window_cm, *contigs_);
    }
    width_ = pair_width(q, request_);
  }

  std::string name() const override { return "ld_scores"; }

  void accumulate_pairs(PairBatch&& batch) override {
    auto row = [&](const PairRow& r) {
      ScoreRow x{r, {}, 0, 0};
      if (map_) x.cm = map_->at((*contigs_)[static_cast<std::size_t>(r.contig)], r.pos);
      return x;
    };
    if (!take_batch(batch, row)) return;
    for (const PairValue& v : batch.pairs) add_pair(v);
  }

  void save(ByteWriter& w) const override {
    save_released(w, [](ByteWriter& to, const ScoreRow& r) { to.put(r); });
  }

  void load(ByteReader& r) override {
    load_released(r, [](ByteReader& from) { return from.get<ScoreRow>(); });
  }

 private:
  friend ReleasingPairStatistic;

  void add_pair(const PairValue& v) {
    if (v.a == v.b || v.n <= 2) return;
    ScoreRow &a = at(ordinal_near(v.a, hint_a_)), &b = at(ordinal_near(v.b, hint_b_));
    if (map_ && std::fabs(b.cm - a.cm) > options_.window_cm) return;
    // r²_adj = r² - (1 - r²) / (n - 2), ldsc's unbiased estimate of r²
    const double adj = v.r2 - (1 - v.r2) / static_cast<double>(v.n - 2);
    for (ScoreRow* row : {&a, &b}) {
      row->l2 += adj;
      ++row->pairs;
    }
  }

  /// Whether a row's own r² is defined (its allele counts vary among its calls).
  bool varies(const PairRow& m) const {
    if (request_.haplotypes()) return m.sum > 0 && m.sum < m.n;
    return m.n * m.ssq != m.sum * m.sum;  // n Σx² = (Σx)² only when every x is the same
  }

  Table empty_table() const {
    Table t;
    t.add("variant", Column::Kind::Int);
    t.add("chrom", Column::Kind::Label, contigs_);
    t.add("pos", Column::Kind::Int);
    t.add("pairs", Column::Kind::Int);
    t.add("l2", Column::Kind::Float);
    t.note = "LD scores (ldsc --l2): 1 + sum of r2 - (1 - r2) / (n - 2) over the window";
    return t;
  }

  /// A released row's LD score into @p t.
  void emit(const ScoreRow& r, Table& t) const {
    t.push_int(0, r.meta.variant);
    t.push_int(1, r.meta.contig);
    t.push_int(2, r.meta.pos);
    t.push_int(3, r.pairs);
    ExactSum l2 = r.l2;
    l2 += 1.0;  // the variant itself
    t.push_float(4, varies(r.meta) ? l2.value() : std::numeric_limits<double>::quiet_NaN());
  }

  LdScoreOptions options_;
  std::shared_ptr<const stats::haplo::GeneticMap> map_;  // cM windows
  std::int64_t hint_a_ = 0, hint_b_ = 0;                 // ordinal_near()'s guesses
};

// ---- ld-stats -----------------------------------------------------------------------------------

/// One bin of ld-stats: pairs and the sums of moments.LD's DD, Dz, pi2.
struct MomentsBin {
  std::int64_t pairs = 0;
  ExactSum dd, dz, pi2;
};

class LdMomentsStatistic final : public BinnedPairStatistic<LdMomentsStatistic> {
 public:
  LdMomentsStatistic(const Query& q, const LdStatsOptions& o)
      : BinnedPairStatistic(q, "ld-stats"), options_(o), binner_(q, o) {
    request_.measure = PairMeasure::Haplotype;  // its n and D give the four counts back
    request_.max_bp = binner_.max_bp();
    request_.min_r2 = 0;
    width_ = pair_width(q, request_);
    if (width_ < 4) throw UsageError("ld-stats needs at least four haplotypes");
    bins_.resize(binner_.bins());
  }

  std::string name() const override { return "ld_stats"; }

  Table finish() override {
    Table t;
    binner_.add_columns(t);
    t.add("pairs", Column::Kind::Int);
    for (const char* c : {"DD_0_0", "Dz_0_0_0", "pi2_0_0_0_0"}) t.add(c, Column::Kind::Float);
    t.add("sites", Column::Kind::Int);
    t.add("H_0_0", Column::Kind::Float);
    t.note =
        "moments.LD statistics (sums over pairs of complete polymorphic sites), phased "
        "haplotypes, " +
        binner_.what();
    for (std::size_t k = 0; k < bins_.size(); ++k) {
      const MomentsBin& b = bins_[k];
      binner_.push_edges(t, k);
      t.push_int(2, b.pairs);
      t.push_float(3, b.dd.value());
      t.push_float(4, b.dz.value());
      t.push_float(5, b.pi2.value());
      t.push_int(6, sites_);
      t.push_float(7, h_.value());
    }
    return t;
  }

 private:
  friend BinnedPairStatistic;

  /// H over the complete polymorphic sites: 2 a (n - a) / (n (n - 1)).
  void add_rows(const std::vector<PairRow>& rows) {
    for (const PairRow& r : rows)
      if (r.n == width_ && r.sum > 0 && r.sum < r.n) {
        ++sites_;
        h_ += 2.0 * static_cast<double>(r.sum) * static_cast<double>(r.n - r.sum) /
              (static_cast<double>(r.n) * static_cast<double>(r.n - 1));
      }
  }

  void merge_sums(LdMomentsStatistic& later) {
    for (std::size_t k = 0; k < bins_.size(); ++k) {
      bins_[k].pairs += later.bins_[k].pairs;
      bins_[k].dd += later.bins_[k].dd;
      bins_[k].dz += later.bins_[k].dz;
      bins_[k].pi2 += later.bins_[k].pi2;
    }
    sites_ += later.sites_;
    h_ += later.h_;
    later.bins_.assign(bins_.size(), {});
    later.sites_ = 0;
    later.h_ = {};
  }

  void save_sums(ByteWriter& w) const {
    w.put_vector(bins_);
    w.put(sites_);
    w.put(h_);
  }

  void load_sums(ByteReader& r) {
    bins_ = r.get_vector<MomentsBin>();
    if (bins_.size() != binner_.bins())
      throw FormatError("statistic state: ld_stats bins do not match the edges");
    sites_ = r.get<std::int64_t>();
    h_ = r.get<ExactSum>();
  }

  void add_pair(const PairValue& v) {
    const PairRow& i = at(ordinal_near(v.a, hint_a_)).meta;
    const PairRow& j = at(ordinal_near(v.b, hint_b_)).meta;
    if (i.n != width_ || j.n != width_) return;  // complete sites only
    const std::int64_t bin = binner_.bin(i.contig, i.pos, j.pos);
    if (bin < 0) return;
    const std::int64_t n = v.n, a = i.sum, b = j.sum;
    const std::int64_t x11 = stats::moments::ref_at_both(n, a, b, v.d);  // REF at both
    const auto m =
        stats::moments::moments_terms(x11, (n - a) - x11, (n - b) - x11, x11 - (n - a - b));
    MomentsBin& s = bins_[static_cast<std::size_t>(bin)];
    ++s.pairs;
    s.dd += m.dd;
    s.dz += m.dz;
    s.pi2 += m.pi2;
  }

  LdStatsOptions options_;
  stats::moments::PairBinner binner_;
  std::vector<MomentsBin> bins_;
  std::int64_t sites_ = 0;
  ExactSum h_;
};

}  // namespace

std::unique_ptr<Statistic> make_ld_decay(const Query& q, const LdDecayOptions& options) {
  if (options.per_population) return std::make_unique<LdDecayPopsStatistic>(q, options);
  return std::make_unique<LdDecayStatistic>(q, options);
}

std::unique_ptr<Statistic> make_ld_scores(const Query& q, const LdScoreOptions& options) {
  return std::make_unique<LdScoreStatistic>(q, options);
}

std::unique_ptr<Statistic> make_ld_stats(const Query& q, const LdStatsOptions& options) {
  if (q.pops.count() > 1 || options.genotypes)
    return stats::moments::make_ld_stats_pops(q, options);
  return std::make_unique<LdMomentsStatistic>(q, options);
}

}  // namespace vczstats
