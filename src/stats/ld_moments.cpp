// ld-stats for two to four populations (vczstats/ld.hpp): moments.LD's multi-population basis
// (DD_i_j, Dz_i_j_k, pi2_i_j_k_l and the one-locus H_i_j) from phased haplotype counts; and, with
// --genotypes, for one to four populations from unphased genotype tables.
//
// The pair band counts one set of haplotypes per pass, so the statistic asks for several bands
// over the same units: band 0 over every selected haplotype (the union of the populations; it
// names the pairs: both sites polymorphic among them) and band k over population k - 1 alone
// (a haplotype mask), k = 1 .. P - 1; the last population's counts are the union's minus the
// others' (sites are complete, so the counts add). A population band leaves out a pair whose r²
// is undefined in that population (a site monomorphic there): its counts then follow from the
// sites' counts. The bands' batches of a unit may come at different times (GPU); a unit is
// summed once every band has handed over its batch. Each band keeps its rows and boundary planes
// as the other pair statistics do (stats/pair_statistic.hpp), so partitions merge by adding the
// pairs across their boundary band by band.
//
// Phased, band 0 has a reducer (Reducer, stats/banded_pairs.hpp): the band counts a pair's
// haplotypes non-REF at both in total and within each population but the last (their masks),
// and adds the pair to a part's bins where it counts it (the CPU band: a row's pairs at a time;
// the GPU band: a kernel summing into 128-bit sums on the device, through Reducer::device(),
// while every population is narrow); a unit's sum comes in the batch, and the population bands
// hand over rows and boundary planes only. The per-pair numerators are one code for both
// (stats/ld_moments_terms.hpp). Otherwise (--genotypes; the GPU band of a population of
// kNarrowHaplotypes or more; pairs across a partition boundary) a unit's pairs
// are summed in one walk over the bands' pairs in one order (by second variant, then first: the
// CPU band's own; the GPU band's are sorted first), which finds a union pair's population pairs
// without hashing. Every statistic of the basis is a product of population
// factors, each an integer numerator over a falling factorial of its population's size (sites
// are complete, so the sizes are the same for every pair): a bin sums the pairs' integer
// numerators exactly (64-bit products, 128-bit sums) and finish() divides once by the
// statistic's constant denominator, so the result does not depend on the order or grouping of
// the pairs (threads, units, ranks, devices). The walk is cut into parts on the run's threads,
// each summing into bins of its own.
//
// Estimators (Ragsdale & Gravel 2019, 2020): within a population the unbiased estimators of
// stats/ld_moments.hpp and their three-haplotype relatives; across populations the samples are
// independent, so a product's estimator is the product of each population's unbiased factor.
//
// --genotypes: the bands count samples (genotype planes) and hand over every pair of their reach
// with its 3 x 3 genotype table (PairMeasure::GenotypeTable), so a population band holds exactly
// the union band's pairs; the last population's table is the union's less the others' (the
// populations' samples are disjoint, and each table counts the samples called at both sites, so
// the tables add whatever is missing). Sites need not be complete: a site is used when it is
// polymorphic among the union's called alleles and called in every population, a pair when
// every population has four samples called at both; each population's factors are the
// polynomials of stats/ld_genotype_terms.hpp.

#include <algorithm>
#include <array>
#include <bit>
#include <deque>
#include <type_traits>

#include "stats/banded_pairs.hpp"
#include "stats/ld_genotype_terms.hpp"
#include "stats/ld_moments.hpp"
#include "stats/ld_moments_terms.hpp"
#include "stats/pair_statistic.hpp"
#include "vczstats/bins.hpp"
#include "vczstats/exact_sum.hpp"
#include "vczstats/ld.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::stats::moments {
namespace {

__extension__ typedef __int128 Wide;
__extension__ typedef unsigned __int128 UWide;

struct BandRow {
  PairRow meta;
};

/// One band's rows, head and tail (a PairStatistic used as the state of one band). Its pairs
/// stay in the batch: the owner sums a unit's pairs once every band has handed it over.
class BandState final : public pairs::PairStatistic<BandRow> {
 public:
  /// @p width: the selected haplotypes (the planes' width).
  BandState(const Query& q, const PairRequest& request, std::int64_t width)
      : PairStatistic(q, "ld-stats") {
    request_ = request;
    width_ = width;
  }

  std::string name() const override { return "ld_stats_band"; }
  bool resolved() const { return resolved_; }

  /// Take a batch's rows; whether it brought rows (and pairs).
  bool take(const PairBatch& batch) {
    return take_batch(batch, [](const PairRow& r) { return BandRow{r}; });
  }

  /// Absorb the later partition's band; @p on_pair(const PairValue&) gets the pairs across.
  template <class OnPair>
  void absorb(BandState& later, OnPair&& on_pair) {
    merge_partition(
        later, [](BandRow&, std::int64_t) {}, on_pair);
  }

  /// Drop the rows no later variant pairs with (a partition that starts the run).
  void drop_done() {
    if (resolved_) drop_rows(count_ - 1);
  }

  void merge(Statistic&) override { throw Error("ld-stats: a band state is merged by its owner"); }
  Table finish() override { return {}; }
  void save(ByteWriter& w) const override {
    save_rows(w, [](ByteWriter& to, const BandRow& r) { to.put(r.meta); });
  }
  void load(ByteReader& r) override {
    load_rows(r, [](ByteReader& from) { return BandRow{from.get<PairRow>()}; });
  }
};

/// A site's counts per population: haplotypes called, and non-REF among them.
struct SiteCounts {
  std::int64_t variant = 0;
  std::int64_t pos = 0;
  double coord = 0;  // PairBinner::coordinate()
  std::int32_t contig = 0;
  std::int32_t complete = 0;  // called at every selected haplotype
  std::int64_t alt = 0;       // non-REF among every selected haplotype
  std::array<std::int64_t, kMaxPops> pop_n{}, pop_alt{};
};

/// A population's size n (the pairs summed are of complete sites: n haplotypes at both) and the
/// falling factorials (n)_k, k = 0 .. 4: the denominators of its unbiased estimators.
struct PopScale {
  std::array<Wide, 5> fall{};
  bool narrow = true;           // counts below kNarrowHaplotypes: 64-bit numerators
  std::uint32_t need = 0xffff;  // (--genotypes) the sets S whose PopFactors::g[S] the basis uses
  PopScale() = default;
  explicit PopScale(std::int64_t n) : narrow(n < kNarrowHaplotypes) {
    Wide f = 1;
    for (std::size_t k = 0; k < fall.size(); ++k) {
      fall[k] = f;
      f *= n - static_cast<std::int64_t>(k);
    }
  }
};

/// @p num / @p den as a double (den > 0): the integer part exactly, then the remainder's share.
double ratio(Wide num, Wide den) {
  const Wide q = num / den, r = num % den;
  return static_cast<double>(q) + static_cast<double>(r) / static_cast<double>(den);
}

/// moments.LD's names and order for @p pops populations (moments.LD.Util.ld_names and
/// het_names): DD_i_j (i <= j), Dz_i_j_k (j <= k), pi2_i_j_k_l (i <= j, k <= l, (i, j) <= (k, l)).
struct Basis {
  std::vector<std::array<int, 2>> dd;
  std::vector<std::array<int, 3>> dz;
  std::vector<std::array<int, 4>> pi2;
  std::vector<std::array<int, 2>> h;
  /// pi2_i_j_k_l = 1/4 [p_i (1 - p_j) + p_j (1 - p_i)] [q_k (1 - q_l) + q_l (1 - q_k)]: each of
  /// the four products draws an A haplotype, an a, a B and a b from the populations named; per
  /// product, each population's set of draws (PopFactors::g; stats/ld_moments_terms.hpp's
  /// basis_table() has the same for the integer numerators).
  std::vector<std::array<std::array<std::uint8_t, kMaxPops>, 4>> pi2_sets;

  explicit Basis(int pops) {
    for (int i = 0; i < pops; ++i)
      for (int j = i; j < pops; ++j) {
        dd.push_back({i, j});
        h.push_back({i, j});
      }
    for (int i = 0; i < pops; ++i)
      for (int j = 0; j < pops; ++j)
        for (int k = j; k < pops; ++k) dz.push_back({i, j, k});
    for (const auto& x : dd)
      for (const auto& y : dd)
        if (x <= y) pi2.push_back({x[0], x[1], y[0], y[1]});
    for (const auto& [i, j, k, l] : pi2) {
      std::array<std::array<std::uint8_t, kMaxPops>, 4> sets{};
      std::size_t at = 0;
      for (const auto& [pa, pna] : {std::array<int, 2>{i, j}, std::array<int, 2>{j, i}})
        for (const auto& [pb, pnb] : {std::array<int, 2>{k, l}, std::array<int, 2>{l, k}}) {
          auto& set = sets[at++];
          set[static_cast<std::size_t>(pa)] |= 1;
          set[static_cast<std::size_t>(pna)] |= 2;
          set[static_cast<std::size_t>(pb)] |= 4;
          set[static_cast<std::size_t>(pnb)] |= 8;
        }
      pi2_sets.push_back(sets);
    }
  }
  /// "DD_0_1" and the like: population indices are single digits.
  template <std::size_t N>
  static std::string join(const char* stem, const std::array<int, N>& idx) {
    std::string r = stem;
    for (int i : idx) {
      r.push_back('_');
      r.push_back(static_cast<char>('0' + i));
    }
    return r;
  }
  std::vector<std::string> ld_names() const {
    std::vector<std::string> out;
    for (const auto& x : dd) out.push_back(join("DD", x));
    for (const auto& x : dz) out.push_back(join("Dz", x));
    for (const auto& x : pi2) out.push_back(join("pi2", x));
    return out;
  }
  std::vector<std::string> h_names() const {
    std::vector<std::string> out;
    for (const auto& x : h) out.push_back(join("H", x));
    return out;
  }
  std::size_t size() const { return dd.size() + dz.size() + pi2.size(); }
};

/// A statistic of basis_table()'s by Basis' names ("DD_0_1" and the like).
std::string stat_name(const Stat& s) {
  const auto at = [&s](std::size_t k) { return static_cast<int>(s.pops[k]); };
  if (s.kind == 0) return Basis::join("DD", std::array<int, 2>{at(0), at(1)});
  if (s.kind == 1) return Basis::join("Dz", std::array<int, 3>{at(0), at(1), at(2)});
  return Basis::join("pi2", std::array<int, 4>{at(0), at(1), at(2), at(3)});
}

struct PendingUnit {
  std::vector<std::vector<PairRow>> rows;         // per band
  std::vector<std::vector<PairValue>> pairs;      // per band
  std::vector<char> filled;                       // per band
  std::shared_ptr<const pairs::PairSum> reduced;  // band 0's sums, when its band reduced them
};

/// The order of a band's pairs that sum_pairs() walks: by second, then first variant (the CPU
/// band's own order).
bool pair_before(const PairValue& x, const PairValue& y) {
  return x.b != y.b ? x.b < y.b : x.a < y.a;
}

/// @p in stably ordered by @p key(const PairValue&), whose values lie in [lo, lo + span), into
/// @p out (a counting sort).
template <class Key>
void counting_sort(const std::vector<PairValue>& in, std::vector<PairValue>& out, Key&& key,
                   std::int64_t lo, std::size_t span) {
  std::vector<std::size_t> start(span + 1, 0);
  for (const PairValue& v : in) ++start[static_cast<std::size_t>(key(v) - lo) + 1];
  for (std::size_t k = 1; k <= span; ++k) start[k] += start[k - 1];
  out.resize(in.size());
  for (const PairValue& v : in) out[start[static_cast<std::size_t>(key(v) - lo)]++] = v;
}

/// A band's pairs in pair_before() order: as they are (the CPU band's), or sorted (the GPU
/// band's come in the order its threads found them): by first variant and then, stably, by
/// second when the variants span few more than the pairs, else by comparison.
void sort_pairs(std::vector<PairValue>& pairs) {
  if (std::is_sorted(pairs.begin(), pairs.end(), pair_before)) return;
  std::int64_t a0 = pairs[0].a, a1 = a0, b0 = pairs[0].b, b1 = b0;
  for (const PairValue& v : pairs) {
    a0 = std::min(a0, v.a);
    a1 = std::max(a1, v.a);
    b0 = std::min(b0, v.b);
    b1 = std::max(b1, v.b);
  }
  const auto limit = static_cast<std::int64_t>(4 * pairs.size() + (std::size_t{1} << 16));
  if (a1 - a0 >= limit || b1 - b0 >= limit) {
    std::sort(pairs.begin(), pairs.end(), pair_before);
    return;
  }
  std::vector<PairValue> by_a;
  counting_sort(
      pairs, by_a, [](const PairValue& v) { return v.a; }, a0,
      static_cast<std::size_t>(a1 - a0 + 1));
  counting_sort(
      by_a, pairs, [](const PairValue& v) { return v.b; }, b0,
      static_cast<std::size_t>(b1 - b0 + 1));
}

class LdMomentsPopsStatistic final : public Statistic, public pairs::BandedPairs {
 public:
  LdMomentsPopsStatistic(const Query& q, const LdStatsOptions& o)
      : options_(o),
        binner_(q, o),
        pops_(std::max(q.pops.count(), 1)),
        basis_(pops_),
        genotypes_(o.genotypes) {
    if (pops_ > kMaxPops || (pops_ < 2 && !genotypes_))
      throw UsageError("ld-stats: one to four populations");
    const std::int64_t ploidy = q.store.ploidy();
    if (genotypes_ && ploidy != 2)
      throw UsageError("ld-stats --genotypes: diploid genotypes only (the store's ploidy is " +
                       std::to_string(ploidy) + ")");
    // Plane bits: a sample's genotype, or its allele slots.
    const std::int64_t per = genotypes_ ? 1 : ploidy;
    const std::int64_t slots = q.samples.size() * per;
    if (genotypes_ && slots >= ld::kTableLimit)
      throw UsageError("ld-stats --genotypes: at most " + std::to_string(ld::kTableLimit - 1) +
                       " samples");
    width_[0] = slots;
    const std::int64_t words = (slots + 63) / 64;
    PairRequest base;
    base.measure = genotypes_ ? PairMeasure::GenotypeTable : PairMeasure::Haplotype;
    base.max_bp = binner_.max_bp();
    base.min_r2 = 0;
    requests_.push_back({base, {}, nullptr, false});
    for (int k = 0; k < pops_; ++k) {
      std::vector<std::uint64_t> mask(static_cast<std::size_t>(words));
      std::int64_t n = 0;
      for (std::int64_t i = 0; i < q.samples.size(); ++i)
        if (q.pops.of.empty() || q.pops.of[static_cast<std::size_t>(i)] == k)
          for (std::int64_t j = 0; j < per; ++j) {
            const std::int64_t bit = i * per + j;
            mask[static_cast<std::size_t>(bit / 64)] |= std::uint64_t{1} << (bit % 64);
            ++n;
          }
      if (n < 4) {
        const std::string what = genotypes_ ? "samples" : "haplotypes";
        throw UsageError(q.pops.count() <= 1
                             ? "ld-stats needs at least four " + what
                             : "ld-stats: population " + q.pops.names[static_cast<std::size_t>(k)] +
                                   " has fewer than four " + what);
      }
      width_[static_cast<std::size_t>(k) + 1] = n;
      scale_[static_cast<std::size_t>(k)] = PopScale(n);
      scale_[static_cast<std::size_t>(k)].need = 1;  // (g[0])
      if (k + 1 == pops_) break;  // the last population: the union less the others
      requests_.push_back({base, std::move(mask), nullptr, !genotypes_});
    }
    // Band 0 sums its pairs where the backend counts them (the CPU band: every population's
    // counts through the population bands' masks, which then hand over rows alone); a backend
    // that does not reduce hands over every band's pairs, summed by sum_pairs().
    // (--genotypes: every band hands over its pairs with their genotype tables.)
    if (!genotypes_) {
      std::vector<std::vector<std::uint64_t>> masks;
      for (std::size_t k = 1; k < requests_.size(); ++k) masks.push_back(requests_[k].mask);
      requests_[0].reducer = std::make_shared<Reducer>(*this, std::move(masks));
    }
    for (std::size_t k = 0; k < requests_.size(); ++k)
      bands_.push_back(std::make_unique<BandState>(q, requests_[k].request, slots));
    for (const auto& sets : basis_.pi2_sets)
      for (const auto& set : sets)
        for (std::size_t k = 0; k < scale_.size(); ++k) scale_[k].need |= 1u << set[k];
    narrow_ = std::all_of(scale_.begin(), scale_.begin() + pops_,
                          [](const PopScale& x) { return x.narrow; });
    denominators();
    if (!genotypes_) {  // the phased numerators (stats/ld_moments_terms.hpp), in basis_' order
      device_.basis = basis_table(pops_);
      const auto names = basis_.ld_names();
      for (int k = 0; k < device_.basis.stats; ++k)
        if (stat_name(device_.basis.s[k]) != names[static_cast<std::size_t>(k)])
          throw Error("ld-stats: the basis' tables disagree");
      device_.width = width_[0];
      for (int k = 0; k < pops_; ++k) device_.pop_width[k] = width_[idx(k) + 1];
      device_.edges = binner_.edges();
    }
    if (genotypes_)
      for (int k = 0; k < pops_; ++k)
        estimators_[idx(k)] =
            std::make_shared<const GenotypeEstimators>(pops_ > 1, scale_[idx(k)].need);
    bins_.assign(binner_.bins() * stride(), {});
    h_.assign(basis_.h.size(), {});
  }

  std::string name() const override { return "ld_stats"; }
  PassNeeds needs() const override { return {}; }
  void attach(const Backend& b) override {
    threads_ = static_cast<std::int64_t>(b.threads() ? b.threads() : hardware_threads());
  }
  std::vector<const pairs::PairBandRequest*> pair_bands() const override {
    std::vector<const pairs::PairBandRequest*> out;
    for (const auto& r : requests_) out.push_back(&r);
    return out;
  }
  void begin(const SiteCursor& cursor) override {
    for (auto& b : bands_) b->begin(cursor);
  }

  void accumulate_band(std::size_t k, PairBatch&& batch) override {
    if (k >= bands_.size()) throw Error("ld-stats: a batch of an unknown band");
    BandState& band = *bands_[k];
    if (!band.take(batch)) return;
    if (next_[k] == pending_.size()) {
      PendingUnit u;
      u.rows.resize(bands_.size());
      u.pairs.resize(bands_.size());
      u.filled.assign(bands_.size(), 0);
      pending_.push_back(std::move(u));
    }
    PendingUnit& u = pending_[next_[k]++];
    u.rows[k] = std::move(batch.rows);
    u.pairs[k] = std::move(batch.pairs);
    if (k == 0) u.reduced = std::move(batch.reduced);
    band.drop_done();
    u.filled[k] = 1;
    while (!pending_.empty() &&
           std::all_of(pending_.front().filled.begin(), pending_.front().filled.end(),
                       [](char f) { return f != 0; })) {
      sum_unit(pending_.front());
      pending_.pop_front();
      for (auto& n : next_) --n;
    }
  }

  void merge(Statistic& later_base) override {
    auto& later = detail::same_statistic(*this, later_base);
    if (!pending_.empty() || !later.pending_.empty())
      throw Error("ld-stats: merging a partition with units not summed");
    for (std::size_t i = 0; i < bins_.size(); ++i) {
      bins_[i] += later.bins_[i];
    }
    for (std::size_t i = 0; i < h_.size(); ++i) h_[i] += later.h_[i];
    sites_ += later.sites_;
    later.bins_.assign(later.bins_.size(), {});
    later.h_.assign(later.h_.size(), {});
    later.sites_ = 0;
    for (const SiteCounts& s : later.rows_) keep_row(s);
    later.rows_.clear();
    PendingUnit cross;
    cross.pairs.resize(bands_.size());
    for (std::size_t k = 0; k < bands_.size(); ++k) {
      bands_[k]->absorb(*later.bands_[k], [&](const PairValue& v) { cross.pairs[k].push_back(v); });
      bands_[k]->drop_done();
    }
    sum_pairs(cross);
    trim_rows();
  }

  Table finish() override {
    Table t;
    binner_.add_columns(t);
    t.add("pairs", Column::Kind::Int);
    const auto ld = basis_.ld_names(), h = basis_.h_names();
    for (const auto& c : ld) t.add(c, Column::Kind::Float);
    t.add("sites", Column::Kind::Int);
    for (const auto& c : h) t.add(c, Column::Kind::Float);
    t.note =
        "moments.LD statistics of " + std::to_string(pops_) +
        (genotypes_ ? " populations (sums over pairs of sites polymorphic in their union, over "
                      "the samples called at both), unphased genotypes, "
                    : " populations (sums over pairs of complete sites polymorphic in their "
                      "union), phased haplotypes, ") +
        binner_.what();
    for (std::size_t k = 0; k < binner_.bins(); ++k) {
      binner_.push_edges(t, k);
      int c = 2;
      t.push_int(c++, bins_[k * stride()].pairs);
      for (std::size_t s = 0; s < basis_.size(); ++s)
        t.push_float(c++, genotypes_ ? bins_[k * stride() + 1 + s].exact.value()
                                     : ratio(bins_[k * stride() + 1 + s].sum, den_[s]));
      t.push_int(c++, sites_);
      for (const auto& x : h_) t.push_float(c++, x.value());
    }
    return t;
  }

  void save(ByteWriter& w) const override {
    if (!pending_.empty()) throw Error("ld-stats: saving a partition with units not summed");
    w.put_string(name());
    for (const auto& b : bands_) b->save(w);
    w.put<std::uint64_t>(rows_.size());
    for (const SiteCounts& s : rows_) w.put(s);
    w.put_vector(bins_);
    w.put_vector(h_);
    w.put(sites_);
  }

  void load(ByteReader& r) override {
    r.expect(name());
    for (auto& b : bands_) b->load(r);
    rows_.clear();
    const auto n = r.get<std::uint64_t>();
    for (std::uint64_t i = 0; i < n; ++i) keep_row(r.get<SiteCounts>());
    const std::size_t bins = bins_.size(), hs = h_.size();
    bins_ = r.get_vector<Bin>();
    h_ = r.get_vector<ExactSum>();
    if (bins_.size() != bins || h_.size() != hs)
      throw FormatError("statistic state: ld_stats bins do not match the options");
    sites_ = r.get<std::int64_t>();
  }

 private:
  struct Bin {
    std::int64_t pairs = 0;  // (the first of a bin's entries only)
    Wide sum = 0;            // numerators over den_ (exact: any order of pairs, the same sum)
    ExactSum exact;          // --genotypes: each pair's own quotients (its sample sizes vary)
    Bin& operator+=(const Bin& o) {
      pairs += o.pairs;
      sum += o.sum;
      exact += o.exact;
      return *this;
    }
  };
  /// Band 0's reducer (stats/banded_pairs.hpp): a pair's counts in every population come with it,
  /// so it is summed where it is counted. Per bin: the pairs, then the basis' numerators (the
  /// layout of stats/ld_moments_terms.hpp's DeviceReduction, whose sums come back as such).
  class Sum final : public pairs::PairSum {
   public:
    explicit Sum(const LdMomentsPopsStatistic& s) : s_(s), sums(s.binner_.bins() * s.stride(), 0) {}
    void add(const pairs::ReducedRow& i, const pairs::ReducedRow& j, std::int64_t ab,
             const std::array<std::int64_t, 3>& masked_ab) override {
      const std::int64_t x[4] = {ab, masked_ab[0], masked_ab[1], masked_ab[2]};
      s_.reduce_row(sums.data(), &i, 1, j, x);
    }
    void add_row(const pairs::ReducedRow* i, std::int64_t count, const pairs::ReducedRow& j,
                 const std::int64_t* x) override {
      s_.reduce_row(sums.data(), i, count, j, x);
    }
    void merge(const pairs::PairSum& other) override {
      const auto& o = dynamic_cast<const Sum&>(other);
      for (std::size_t k = 0; k < sums.size(); ++k) sums[k] += o.sums[k];
    }

   private:
    const LdMomentsPopsStatistic& s_;

   public:
    std::vector<Wide> sums;
  };
  class Reducer final : public pairs::PairReducer {
   public:
    Reducer(const LdMomentsPopsStatistic& s, std::vector<std::vector<std::uint64_t>> masks)
        : s_(s), masks_(std::move(masks)) {}
    const std::vector<std::vector<std::uint64_t>>& count_masks() const override { return masks_; }
    double coordinate(std::int32_t contig, std::int64_t pos) const override {
      return s_.binner_.coordinate(contig, pos);
    }
    std::unique_ptr<pairs::PairSum> start() const override { return std::make_unique<Sum>(s_); }
    /// Every population narrow: the device sums 64-bit numerators. Otherwise (a population of
    /// kNarrowHaplotypes haplotypes or more: 128-bit numerators) the device band keeps handing
    /// over its pairs, summed on the host.
    const DeviceReduction* device() const override { return s_.narrow_ ? &s_.device_ : nullptr; }
    std::unique_ptr<pairs::PairSum> device_sum(const std::uint64_t* words) const override {
      if (!device()) return nullptr;
      auto sum = std::make_unique<Sum>(s_);
      for (std::size_t k = 0; k < sum->sums.size(); ++k)  // two's complement, low word first
        sum->sums[k] =
            static_cast<Wide>((static_cast<UWide>(words[2 * k + 1]) << 64) | words[2 * k]);
      return sum;
    }

   private:
    const LdMomentsPopsStatistic& s_;
    std::vector<std::vector<std::uint64_t>> masks_;
  };

  /// The pairs (i[k], j), k < @p count, the reducer counted (@p x: four counts a pair): those of
  /// sites complete and polymorphic in the union (the pairs sum_range() sums), their
  /// populations' numerators into their bins of @p sums (Sum's layout).
  void reduce_row(Wide* sums, const pairs::ReducedRow* i, std::int64_t count,
                  const pairs::ReducedRow& j, const std::int64_t* x) const {
    with_pops([&]<int P>() {
      if (narrow_)
        reduce_row_in<P, std::int64_t>(sums, i, count, j, x);
      else
        reduce_row_in<P, Wide>(sums, i, count, j, x);
    });
  }

  template <int P, class I>
  void reduce_row_in(Wide* sums, const pairs::ReducedRow* is, std::int64_t count,
                     const pairs::ReducedRow& j, const std::int64_t* x) const {
    const std::int64_t width = width_[0];
    if (!row_used(j.n, j.alt, width)) return;
    const BinEdges edges = binner_.edges();
    const std::size_t slots = stride();
    std::int64_t bin = -1;
    for (std::int64_t k = 0; k < count; ++k, x += 4) {
      const pairs::ReducedRow& i = is[k];
      if (!row_used(i.n, i.alt, width)) continue;
      bin = pair_bin(edges, i.pos, j.pos, i.coord, j.coord, bin);
      if (bin < 0) continue;
      Wide* out = sums + static_cast<std::size_t>(bin) * slots;
      ++out[0];
      reduce_pair<P, I>(device_, kBasis<P>, i.alt, i.masked_alt.data(), j.alt, j.masked_alt.data(),
                        x[0], x + 1, [out](int s, I v) { out[1 + s] += v; });
    }
  }

  /// @p f.template operator()<P>() with the populations as a constant (two to four: phased).
  template <class F>
  void with_pops(F&& f) const {
    switch (pops_) {
      case 2:
        f.template operator()<2>();
        break;
      case 3:
        f.template operator()<3>();
        break;
      case 4:
        f.template operator()<4>();
        break;
      default:
        throw Error("ld-stats: phased pairs of two to four populations");
    }
  }

  /// A unit's pairs per part summed on a thread of their own (their partial sums then added:
  /// exact sums, so the same bits as one pass).
  static constexpr std::size_t kPairsPerPart = std::size_t{1} << 14;

  /// Entries per bin: pairs, then the basis' sums.
  std::size_t stride() const { return basis_.size() + 1; }

  /// The unit's sites (their counts per population, H), then its pairs.
  void sum_unit(PendingUnit& u) {
    const auto& all = u.rows[0];
    for (std::size_t k = 1; k < u.rows.size(); ++k)
      if (u.rows[k].size() != all.size()) throw Error("ld-stats: bands of different rows");
    for (std::size_t r = 0; r < all.size(); ++r) {
      SiteCounts s;
      s.variant = all[r].variant;
      s.pos = all[r].pos;
      s.contig = all[r].contig;
      s.coord = binner_.coordinate(s.contig, s.pos);
      s.complete = all[r].n == width_[0];
      s.alt = all[r].sum;
      std::int64_t n = all[r].n, alt = all[r].sum;
      for (int k = 0; k + 1 < pops_; ++k) {
        const PairRow& x = u.rows[static_cast<std::size_t>(k) + 1][r];
        if (x.variant != all[r].variant) throw Error("ld-stats: bands of different rows");
        s.pop_n[idx(k)] = x.n;
        s.pop_alt[idx(k)] = x.sum;
        n -= x.n;
        alt -= x.sum;
      }
      s.pop_n[idx(pops_ - 1)] = n;
      s.pop_alt[idx(pops_ - 1)] = alt;
      if (genotypes_) s.complete = site_used(s, all[r]);
      keep_row(s);
      if (genotypes_ ? s.complete : s.complete && all[r].sum > 0 && all[r].sum < all[r].n)
        add_site(s);
    }
    if (u.reduced) {  // per bin: the pairs, then the numerators
      const auto& sums = dynamic_cast<const Sum&>(*u.reduced).sums;
      for (std::size_t i = 0; i < bins_.size(); ++i)
        if (i % stride() == 0)
          bins_[i].pairs += static_cast<std::int64_t>(sums[i]);
        else
          bins_[i].sum += sums[i];
    }
    sum_pairs(u);
    trim_rows();
  }

  /// With genotypes, whether site @p s (band 0's row @p all) is used (SiteCounts::complete):
  /// polymorphic among the union's called alleles, and called at a sample of every population.
  bool site_used(const SiteCounts& s, const PairRow& all) const {
    if (!(all.sum > 0 && all.sum < 2 * all.n)) return false;
    for (int k = 0; k < pops_; ++k)
      if (s.pop_n[idx(k)] < 1) return false;
    return true;
  }

  /// H_i_j: p_i (1 - p_j) + p_j (1 - p_i), unbiased (2 c_A c_a / (n (n - 1)) within one), from
  /// the allele counts (genotypes: 2 alleles a called sample, as moments.LD counts them).
  void add_site(const SiteCounts& s) {
    ++sites_;
    const std::int64_t per = genotypes_ ? 2 : 1;
    for (std::size_t x = 0; x < basis_.h.size(); ++x) {
      const auto i = static_cast<std::size_t>(basis_.h[x][0]);
      const auto j = static_cast<std::size_t>(basis_.h[x][1]);
      const auto ri = static_cast<double>(per * s.pop_n[i] - s.pop_alt[i]);
      const auto ai = static_cast<double>(s.pop_alt[i]);
      const auto rj = static_cast<double>(per * s.pop_n[j] - s.pop_alt[j]);
      const auto aj = static_cast<double>(s.pop_alt[j]);
      const auto ni = static_cast<double>(per * s.pop_n[i]);
      const auto nj = static_cast<double>(per * s.pop_n[j]);
      h_[x] += i == j ? 2 * ri * ai / (ni * (ni - 1)) : (ri * aj + rj * ai) / (ni * nj);
    }
  }

  /// The union band's pairs of @p u, with the populations' counts from the other bands: each
  /// band's pairs in pair_before() order (a population band's are among the union's), walked
  /// together; in parts on the run's threads when there are many.
  void sum_pairs(PendingUnit& u) {
    // Each band on its own thread (the GPU band's pairs need sorting: a serial sort per band
    // was most of a GPU run's host time).
    if (threads_ > 1 && u.pairs.size() > 1)
      ThreadPool::shared().run_claimed(
          static_cast<unsigned>(std::min<std::int64_t>(threads_, std::ssize(u.pairs))),
          static_cast<std::int64_t>(u.pairs.size()),
          [&](std::int64_t k) { sort_pairs(u.pairs[static_cast<std::size_t>(k)]); });
    else
      for (auto& band : u.pairs) sort_pairs(band);
    const std::size_t total = u.pairs[0].size();
    const auto parts = static_cast<std::size_t>(
        std::clamp<std::int64_t>(static_cast<std::int64_t>(total / kPairsPerPart), 1, threads_));
    if (parts == 1) {
      sum_range(u, 0, total, bins_.data());
      return;
    }
    std::vector<std::vector<Bin>> partial(parts, std::vector<Bin>(bins_.size()));
    ThreadPool::shared().run_claimed(
        static_cast<unsigned>(parts), static_cast<std::int64_t>(parts), [&](std::int64_t k) {
          const auto p = static_cast<std::size_t>(k);
          sum_range(u, total * p / parts, total * (p + 1) / parts, partial[p].data());
        });
    for (const auto& part : partial)
      for (std::size_t i = 0; i < bins_.size(); ++i) {
        bins_[i] += part[i];
      }
  }

  /// sum_pairs() of the union band's pairs [begin, end) into @p bins.
  void sum_range(const PendingUnit& u, std::size_t begin, std::size_t end, Bin* bins) const {
    if (genotypes_) {
      sum_range_in<0, double>(u, begin, end, bins);
      return;
    }
    with_pops([&]<int P>() {
      if (narrow_)
        sum_range_in<P, std::int64_t>(u, begin, end, bins);
      else
        sum_range_in<P, Wide>(u, begin, end, bins);
    });
  }

  /// (P = 0: --genotypes, any number of populations; else P phased populations, numerators in
  /// @p I.)
  template <int P, class I>
  void sum_range_in(const PendingUnit& u, std::size_t begin, std::size_t end, Bin* bins) const {
    if (begin >= end) return;
    const auto& all = u.pairs[0];
    std::array<std::size_t, kMaxPops> at{};  // per population band: its next pair
    for (std::size_t k = 1; k < u.pairs.size(); ++k)
      at[k - 1] = static_cast<std::size_t>(
          std::lower_bound(u.pairs[k].begin(), u.pairs[k].end(), all[begin], pair_before) -
          u.pairs[k].begin());
    std::size_t hint_i = 0, hint_j = 0, first_i = 0;
    for (std::size_t x = begin; x < end; ++x) {
      const PairValue& v = all[x];
      const SiteCounts& j = site(v.b, hint_j);
      const bool next_b = x == begin || v.b != all[x - 1].b;
      if (next_b) hint_i = first_i;  // a later site's first partner: at or after the last one's
      const SiteCounts& i = site(v.a, hint_i);
      if (next_b) first_i = hint_i;
      if (!i.complete || !j.complete) continue;
      const std::int64_t bin = binner_.bin_at(i.pos, j.pos, i.coord, j.coord);
      if (bin < 0) continue;
      Bin* out = bins + static_cast<std::size_t>(bin) * stride();
      if constexpr (P == 0) {
        std::array<PopFactors, kMaxPops> pf;
        if (genotype_factors(u, v, at, pf)) add_pair(out, pf.data());
        continue;
      } else {
        phased_pair<P, I>(u, v, i, j, at, out);
      }
    }
  }

  /// The union band's pair @p v of sites @p i and @p j, of P phased populations: its
  /// populations' counts from the bands' pairs (band k: population k - 1, @p at its next pair;
  /// the last population's counts are the union's less the others'), their numerators into the
  /// pair's bin @p out.
  template <int P, class I>
  void phased_pair(const PendingUnit& u, const PairValue& v, const SiteCounts& i,
                   const SiteCounts& j, std::array<std::size_t, kMaxPops>& at, Bin* out) const {
    I F[P][kFactors];
    std::int64_t last = ref_at_both(v.n, i.alt, j.alt, v.d);
    for (int k = 0; k < P; ++k) {
      const auto p = static_cast<std::size_t>(k);
      const std::int64_t n = i.pop_n[p], a = i.pop_alt[p], b = j.pop_alt[p];
      std::int64_t x11 = 0;
      if (k + 1 == P) {
        x11 = last;
      } else {
        const auto& band = u.pairs[p + 1];
        std::size_t& c = at[p];
        while (c < band.size() && pair_before(band[c], v)) ++c;
        if (c < band.size() && band[c].a == v.a && band[c].b == v.b) {
          x11 = ref_at_both(band[c].n, a, b, band[c].d);
        } else if (a == 0 || b == 0) {  // a site without non-REF alleles in the population
          x11 = a == 0 ? n - b : n - a;
        } else if (a != n && b != n) {
          throw Error("ld-stats: a population band left out a pair of polymorphic sites");
        }  // else a site without REF alleles there: none REF at both
        last -= x11;
      }
      pop_factors<I>(x11, (n - a) - x11, (n - b) - x11, x11 - (n - a - b), kBasis<P>.need[k], F[k]);
    }
    ++out->pairs;
    add_basis_terms<P>(kBasis<P>, F, [out](int s, I x) { out[1 + s].sum += x; });
  }

  /// The populations' factors of the union band's pair @p v from the genotype tables (band k:
  /// population k - 1, @p at its next pair; the last population's table is the union's less
  /// the others', the samples of the populations being disjoint); false when a population has
  /// fewer than GenotypeEstimators::kMinSamples samples called at both sites.
  bool genotype_factors(const PendingUnit& u, const PairValue& v,
                        std::array<std::size_t, kMaxPops>& at,
                        std::array<PopFactors, kMaxPops>& pp) const {
    std::array<GenotypeTable, kMaxPops> t;
    GenotypeTable last = genotype_table(ld::unpack_genotype_table(v));
    for (int k = 0; k + 1 < pops_; ++k) {
      const auto p = idx(k);
      const auto& band = u.pairs[p + 1];
      std::size_t& c = at[p];
      while (c < band.size() && pair_before(band[c], v)) ++c;
      if (!(c < band.size() && band[c].a == v.a && band[c].b == v.b))
        throw Error("ld-stats: a population band left out a pair");
      t[p] = genotype_table(ld::unpack_genotype_table(band[c]));
      last.n -= t[p].n;
      for (std::size_t x = 0; x < 9; ++x) last.cell[x] -= t[p].cell[x];
    }
    t[idx(pops_ - 1)] = last;
    for (int k = 0; k < pops_; ++k)
      if (t[idx(k)].n < GenotypeEstimators::kMinSamples) return false;
    for (int k = 0; k < pops_; ++k) estimators_[idx(k)]->factors(t[idx(k)], pp[idx(k)]);
    return true;
  }

  /// --genotypes: a pair's factors @p p (doubles, over each pair's own sample sizes), the
  /// basis' products of them (pi2: the mean of its four), into its bin's exact sums @p out.
  void add_pair(Bin* out, const PopFactors* p) const {
    ++out->pairs;
    ++out;
    for (const auto& [i, j] : basis_.dd)
      (out++)->exact += i == j ? p[idx(i)].dd : p[idx(i)].d * p[idx(j)].d;
    for (const auto& [i, j, k] : basis_.dz) {
      const PopFactors& x = p[idx(i)];
      double v = 0;
      if (j == i && k == i)
        v = x.dz;
      else if (j == i)
        v = x.dzp * p[idx(k)].zq;
      else if (k == i)
        v = x.dzq * p[idx(j)].zp;
      else
        v = x.d * (j == k ? p[idx(j)].zz : p[idx(j)].zp * p[idx(k)].zq);
      (out++)->exact += v;
    }
    for (const auto& sets : basis_.pi2_sets) {
      double v = 0;
      for (const auto& set : sets) {
        double prod = 1;
        for (int q = 0; q < pops_; ++q) prod *= p[idx(q)].g[set[idx(q)]];
        v += prod;
      }
      (out++)->exact += v / 4;
    }
  }

  /// The basis' denominators (the phased numerators over them): products of the populations'
  /// falling factorials, (n)_k for k distinct haplotypes drawn from each; pi2 also over 4 (the
  /// mean of its four products).
  void denominators() {
    auto f = [&](int pop, std::size_t k) { return scale_[idx(pop)].fall[k]; };
    den_.clear();
    for (const auto& [i, j] : basis_.dd) den_.push_back(i == j ? f(i, 4) : f(i, 2) * f(j, 2));
    for (const auto& [i, j, k] : basis_.dz) {
      if (j == i && k == i)
        den_.push_back(f(i, 4));
      else if (j == i)
        den_.push_back(f(i, 3) * f(k, 1));
      else if (k == i)
        den_.push_back(f(i, 3) * f(j, 1));
      else
        den_.push_back(f(i, 2) * (j == k ? f(j, 2) : f(j, 1) * f(k, 1)));
    }
    for (const auto& sets : basis_.pi2_sets) {
      Wide d = 4;  // every product draws as many haplotypes from each population
      for (int q = 0; q < pops_; ++q)
        d *= f(q, static_cast<std::size_t>(std::popcount(sets[0][idx(q)])));
      den_.push_back(d);
    }
  }

  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }

  /// The kept site of variant @p v; @p hint, where the last one was, is tried first (and the
  /// few after it: a second site's pairs come in the order of their first sites).
  const SiteCounts& site(std::int64_t v, std::size_t& hint) const {
    for (std::size_t k = hint; k < rows_.size() && k < hint + 4; ++k)
      if (rows_[k].variant == v) {
        hint = k;
        return rows_[k];
      }
    const auto it =
        std::lower_bound(rows_.begin(), rows_.end(), v,
                         [](const SiteCounts& s, std::int64_t x) { return s.variant < x; });
    if (it == rows_.end() || it->variant != v)
      throw Error("ld-stats: a pair names a site the statistic has not kept");
    hint = static_cast<std::size_t>(it - rows_.begin());
    return *it;
  }

  /// Keep site @p s, in the order of variants (a later site's again: replaced).
  void keep_row(const SiteCounts& s) {
    if (rows_.empty() || rows_.back().variant < s.variant) {
      rows_.push_back(s);
      return;
    }
    const auto it =
        std::lower_bound(rows_.begin(), rows_.end(), s.variant,
                         [](const SiteCounts& x, std::int64_t v) { return x.variant < v; });
    if (it != rows_.end() && it->variant == s.variant)
      *it = s;
    else
      rows_.insert(it, s);
  }

  /// Keep the sites a later site may pair with (all of them while the partition does not start
  /// the run: a merge adds the pairs across its start).
  void trim_rows() {
    if (!bands_[0]->resolved() || rows_.empty()) return;
    const SiteCounts& last = rows_.back();
    const std::int64_t reach = binner_.max_bp();
    while (rows_.size() > 1) {
      const SiteCounts& s = rows_.front();
      if (s.contig == last.contig && last.pos - s.pos <= reach) break;
      rows_.pop_front();
    }
  }

  LdStatsOptions options_;
  PairBinner binner_;
  int pops_ = 0;
  Basis basis_;
  bool genotypes_ = false;  // --genotypes: genotype tables, not haplotype counts
  std::array<std::shared_ptr<const GenotypeEstimators>, kMaxPops> estimators_;  // (genotypes)
  std::int64_t threads_ = 1;                        // the run's CPU threads (attach)
  std::array<std::int64_t, kMaxPops + 1> width_{};  // haplotypes: all, then of each population
  std::array<PopScale, kMaxPops> scale_{};          // per population
  std::vector<pairs::PairBandRequest> requests_;    // band 0: every haplotype; k: population k - 1
  std::vector<std::unique_ptr<BandState>> bands_;
  std::array<std::size_t, kMaxPops> next_{};  // per band: its next unit in pending_
  std::deque<PendingUnit> pending_;
  std::deque<SiteCounts> rows_;  // kept sites, by variant
  std::vector<Bin> bins_;        // per bin: pairs, then the basis' sums
  std::vector<Wide> den_;        // per statistic of the basis: its sums' denominator
  DeviceReduction device_;       // (phased) the numerators' tables, widths and bins
  bool narrow_ = true;           // every population's numerators in 64 bits
  std::vector<ExactSum> h_;
  std::int64_t sites_ = 0;
};

}  // namespace

std::unique_ptr<Statistic> make_ld_stats_pops(const Query& q, const LdStatsOptions& options) {
  return std::make_unique<LdMomentsPopsStatistic>(q, options);
}

}  // namespace vczstats::stats::moments
