// ld-stats for two or three populations (vczstats/ld.hpp): moments.LD's multi-population basis
// (DD_i_j, Dz_i_j_k, pi2_i_j_k_l and the one-locus H_i_j) from phased haplotype counts.
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
// Estimators (Ragsdale & Gravel 2019, 2020): within a population the unbiased estimators of
// stats/ld_moments.hpp and their three-haplotype relatives; across populations the samples are
// independent, so a product's estimator is the product of each population's unbiased factor.

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <unordered_map>

#include "stats/banded_pairs.hpp"
#include "stats/ld_moments.hpp"
#include "stats/pair_statistic.hpp"
#include "vczstats/bins.hpp"
#include "vczstats/exact_sum.hpp"
#include "vczstats/ld.hpp"

namespace vczstats::stats::moments {
namespace {

__extension__ typedef __int128 Wide;

struct BandRow {
  PairRow meta;
};

/// One band's rows, head and tail (a PairStatistic used as the state of one band).
class BandState final : public pairs::PairStatistic<BandRow> {
 public:
  /// @p width: the selected haplotypes (the planes' width); @p counted: those the band counts.
  BandState(const Query& q, const PairRequest& request, std::int64_t width, std::int64_t counted)
      : PairStatistic(q, "ld-stats"), counted_(counted) {
    request_ = request;
    width_ = width;
  }

  std::string name() const override { return "ld_stats_band"; }
  bool resolved() const { return resolved_; }

  /// Take a batch; @p on_pair(v, x11) gets each pair of complete sites with its haplotypes REF
  /// at both (the statistic leaves out the other pairs).
  template <class OnPair>
  void take(const PairBatch& batch, OnPair&& on_pair) {
    if (!take_batch(batch, [](const PairRow& r) { return BandRow{r}; })) return;
    for (const PairValue& v : batch.pairs) pass(v, on_pair);
  }

  /// Absorb the later partition's band; @p on_pair as take().
  template <class OnPair>
  void absorb(BandState& later, OnPair&& on_pair) {
    merge_partition(
        later, [](BandRow&, std::int64_t) {}, [&](const PairValue& v) { pass(v, on_pair); });
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

 private:
  template <class OnPair>
  void pass(const PairValue& v, OnPair& on_pair) const {
    const PairRow &a = at(ordinal(v.a)).meta, &b = at(ordinal(v.b)).meta;
    if (a.n == counted_ && b.n == counted_) on_pair(v, ref_at_both(v.n, a.sum, b.sum, v.d));
  }

  std::int64_t counted_ = 0;
};

/// A site's counts per population: haplotypes called, and non-REF among them.
struct SiteCounts {
  std::int64_t pos = 0;
  std::int32_t contig = 0;
  std::int32_t complete = 0;  // called at every selected haplotype
  std::array<std::int64_t, 3> n{}, alt{};
};

/// One population's factors for a pair: counts c1 (AB), c2 (Ab), c3 (aB), c4 (ab), A and B the
/// REF alleles, and the unbiased estimators of the products the basis needs.
struct PopPair {
  double d = 0;                // D
  double dzp = 0;              // D (1 - 2p)
  double dzq = 0;              // D (1 - 2q)
  double zp = 0;               // 1 - 2p
  double zq = 0;               // 1 - 2q
  double zz = 0;               // (1 - 2p)(1 - 2q)
  MomentsTerms same;           // D², D (1 - 2p)(1 - 2q), p (1 - p) q (1 - q)
  std::array<double, 16> g{};  // products of A, a, B, b frequencies (below)

  PopPair(std::int64_t c1, std::int64_t c2, std::int64_t c3, std::int64_t c4) {
    const Wide a = c1, b = c2, c = c3, e = c4, n = a + b + c + e;
    const Wide det = a * e - b * c;
    const Wide sa = c + e - a - b, sb = b + e - a - c;  // n (1 - 2p), n (1 - 2q)
    const auto n2 = static_cast<double>(n * (n - 1)),
               n3 = static_cast<double>(n * (n - 1) * (n - 2));
    d = static_cast<double>(det) / n2;
    // Sums over ordered triples of distinct haplotypes: the third one's sign over the n - 2 left.
    dzp = static_cast<double>(det * sa) / n3;
    dzq = static_cast<double>(det * sb) / n3;
    zp = static_cast<double>(sa) / static_cast<double>(n);
    zq = static_cast<double>(sb) / static_cast<double>(n);
    zz = static_cast<double>(sa * sb - (a - b - c + e)) / n2;
    same = moments_terms(c1, c2, c3, c4);
    // g[S]: S a set of draws (bit 0: an A haplotype, 1: a, 2: B, 3: b), distinct haplotypes;
    // the ordered tuples are the product of the class sizes less the tuples where a left draw
    // (A or a) and a right draw (B or b) are one haplotype (inclusion-exclusion over matchings,
    // the only coincidences possible), over (n)_|S|.
    const std::array<Wide, 4> size{a + b, c + e, a + c, b + e};  // A, a, B, b
    auto both = [&](int l, int r) {                              // A∩B, A∩b, a∩B, a∩b
      return l == 0 ? (r == 2 ? a : b) : (r == 2 ? c : e);
    };
    for (int s = 1; s < 16; ++s) {
      auto has = [&](int k) { return ((s >> k) & 1) != 0; };
      auto prod_except = [&](int x, int y, int z, int w) {
        Wide p = 1;
        for (int k = 0; k < 4; ++k)
          if (has(k) && k != x && k != y && k != z && k != w)
            p *= size[static_cast<std::size_t>(k)];
        return p;
      };
      Wide f = prod_except(-1, -1, -1, -1);
      for (int l = 0; l < 2; ++l)
        for (int r = 2; r < 4; ++r)
          if (has(l) && has(r)) f -= both(l, r) * prod_except(l, r, -1, -1);
      if (s == 15) f += a * e + b * c;  // both pairs matched: {A=B, a=b} and {A=b, a=B}
      const int k = __builtin_popcount(static_cast<unsigned>(s));
      Wide den = 1;
      for (int i = 0; i < k; ++i) den *= n - i;
      g[static_cast<std::size_t>(s)] = static_cast<double>(f) / static_cast<double>(den);
    }
    g[0] = 1;
  }
};

/// moments.LD's names and order for @p pops populations (moments.LD.Util.ld_names and
/// het_names): DD_i_j (i <= j), Dz_i_j_k (j <= k), pi2_i_j_k_l (i <= j, k <= l, (i, j) <= (k, l)).
struct Basis {
  std::vector<std::array<int, 2>> dd;
  std::vector<std::array<int, 3>> dz;
  std::vector<std::array<int, 4>> pi2;
  std::vector<std::array<int, 2>> h;

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

struct PendingUnit {
  std::vector<std::vector<PairRow>> rows;  // per band
  std::vector<std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, std::int64_t>>>
      pairs;                 // per band: (a, b), REF at both
  std::vector<char> filled;  // per band
};

class LdMomentsPopsStatistic final : public Statistic, public pairs::BandedPairs {
 public:
  LdMomentsPopsStatistic(const Query& q, const LdStatsOptions& o)
      : options_(o), binner_(q, o), pops_(q.pops.count()), basis_(pops_) {
    if (pops_ < 2 || pops_ > 3) throw UsageError("ld-stats: one, two or three populations");
    const std::int64_t ploidy = q.store.ploidy();
    const std::int64_t slots = q.samples.size() * ploidy;
    width_[0] = slots;
    const std::int64_t words = (slots + 63) / 64;
    PairRequest base;
    base.measure = PairMeasure::Haplotype;
    base.max_bp = binner_.max_bp();
    base.min_r2 = 0;
    requests_.push_back({base, {}});
    for (int k = 0; k < pops_; ++k) {
      std::vector<std::uint64_t> mask(static_cast<std::size_t>(words));
      std::int64_t n = 0;
      for (std::int64_t i = 0; i < q.samples.size(); ++i)
        if (q.pops.of[static_cast<std::size_t>(i)] == k)
          for (std::int64_t j = 0; j < ploidy; ++j) {
            const std::int64_t bit = i * ploidy + j;
            mask[static_cast<std::size_t>(bit / 64)] |= std::uint64_t{1} << (bit % 64);
            ++n;
          }
      if (n < 4)
        throw UsageError("ld-stats: population " + q.pops.names[static_cast<std::size_t>(k)] +
                         " has fewer than four haplotypes");
      width_[static_cast<std::size_t>(k) + 1] = n;
      if (k + 1 == pops_) break;  // the last population: the union less the others
      requests_.push_back({base, std::move(mask)});
    }
    for (std::size_t k = 0; k < requests_.size(); ++k)
      bands_.push_back(std::make_unique<BandState>(q, requests_[k].request, slots, width_[k]));
    bins_.assign(binner_.bins() * (basis_.size() + 1), {});
    h_.assign(basis_.h.size(), {});
  }

  std::string name() const override { return "ld_stats"; }
  PassNeeds needs() const override { return {}; }
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
    if (batch.unit < 0) {
      band.take(batch, [](const PairValue&, std::int64_t) {});
      return;
    }
    if (next_[k] == pending_.size()) {
      PendingUnit u;
      u.rows.resize(bands_.size());
      u.pairs.resize(bands_.size());
      u.filled.assign(bands_.size(), 0);
      pending_.push_back(std::move(u));
    }
    PendingUnit& u = pending_[next_[k]++];
    u.rows[k] = batch.rows;
    band.take(batch, [&](const PairValue& v, std::int64_t x11) {
      u.pairs[k].push_back({{v.a, v.b}, x11});
    });
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
      bins_[i].pairs += later.bins_[i].pairs;
      bins_[i].sum += later.bins_[i].sum;
    }
    for (std::size_t i = 0; i < h_.size(); ++i) h_[i] += later.h_[i];
    sites_ += later.sites_;
    later.bins_.assign(later.bins_.size(), {});
    later.h_.assign(later.h_.size(), {});
    later.sites_ = 0;
    for (auto& [v, s] : later.rows_) rows_[v] = s;
    later.rows_.clear();
    PendingUnit cross;
    cross.pairs.resize(bands_.size());
    for (std::size_t k = 0; k < bands_.size(); ++k) {
      bands_[k]->absorb(*later.bands_[k], [&](const PairValue& v, std::int64_t x11) {
        cross.pairs[k].push_back({{v.a, v.b}, x11});
      });
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
    t.note = "moments.LD statistics of " + std::to_string(pops_) +
             " populations (sums over pairs of complete sites polymorphic in their union), phased "
             "haplotypes, " +
             binner_.what();
    const std::size_t stride = basis_.size() + 1;
    for (std::size_t k = 0; k < binner_.bins(); ++k) {
      binner_.push_edges(t, k);
      int c = 2;
      t.push_int(c++, bins_[k * stride].pairs);
      for (std::size_t s = 0; s < basis_.size(); ++s)
        t.push_float(c++, bins_[k * stride + 1 + s].sum.value());
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
    for (const auto& [v, s] : rows_) {
      w.put(v);
      w.put(s);
    }
    w.put_vector(bins_);
    w.put_vector(h_);
    w.put(sites_);
  }

  void load(ByteReader& r) override {
    r.expect(name());
    for (auto& b : bands_) b->load(r);
    rows_.clear();
    const auto n = r.get<std::uint64_t>();
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto v = r.get<std::int64_t>();
      rows_[v] = r.get<SiteCounts>();
    }
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
    ExactSum sum;
  };

  /// The unit's sites (their counts per population, H), then its pairs.
  void sum_unit(const PendingUnit& u) {
    const auto& all = u.rows[0];
    for (std::size_t k = 1; k < u.rows.size(); ++k)
      if (u.rows[k].size() != all.size()) throw Error("ld-stats: bands of different rows");
    for (std::size_t r = 0; r < all.size(); ++r) {
      SiteCounts s;
      s.pos = all[r].pos;
      s.contig = all[r].contig;
      s.complete = all[r].n == width_[0];
      std::int64_t n = all[r].n, alt = all[r].sum;
      for (int k = 0; k + 1 < pops_; ++k) {
        const PairRow& x = u.rows[static_cast<std::size_t>(k) + 1][r];
        if (x.variant != all[r].variant) throw Error("ld-stats: bands of different rows");
        s.n[static_cast<std::size_t>(k)] = x.n;
        s.alt[static_cast<std::size_t>(k)] = x.sum;
        n -= x.n;
        alt -= x.sum;
      }
      s.n[static_cast<std::size_t>(pops_ - 1)] = n;
      s.alt[static_cast<std::size_t>(pops_ - 1)] = alt;
      rows_[all[r].variant] = s;
      if (s.complete && all[r].sum > 0 && all[r].sum < all[r].n) add_site(s);
    }
    sum_pairs(u);
    trim_rows();
  }

  /// H_i_j: p_i (1 - p_j) + p_j (1 - p_i), unbiased (2 c_A c_a / (n (n - 1)) within one).
  void add_site(const SiteCounts& s) {
    ++sites_;
    for (std::size_t x = 0; x < basis_.h.size(); ++x) {
      const auto i = static_cast<std::size_t>(basis_.h[x][0]);
      const auto j = static_cast<std::size_t>(basis_.h[x][1]);
      const auto ri = static_cast<double>(s.n[i] - s.alt[i]), ai = static_cast<double>(s.alt[i]);
      const auto rj = static_cast<double>(s.n[j] - s.alt[j]), aj = static_cast<double>(s.alt[j]);
      const auto ni = static_cast<double>(s.n[i]), nj = static_cast<double>(s.n[j]);
      h_[x] += i == j ? 2 * ri * ai / (ni * (ni - 1)) : (ri * aj + rj * ai) / (ni * nj);
    }
  }

  /// The union band's pairs of @p u, with the populations' counts from the other bands.
  void sum_pairs(const PendingUnit& u) {
    using Key = std::pair<std::int64_t, std::int64_t>;
    struct Hash {
      std::size_t operator()(const Key& k) const {
        return std::hash<std::int64_t>()(k.first * 1000003 + k.second);
      }
    };
    std::vector<std::unordered_map<Key, std::int64_t, Hash>> found(u.pairs.size());
    for (std::size_t k = 1; k < u.pairs.size(); ++k)
      for (const auto& [key, x11] : u.pairs[k]) found[k][key] = x11;
    for (const auto& [key, x11_all] : u.pairs[0]) {
      const SiteCounts& i = site(key.first);
      const SiteCounts& j = site(key.second);
      if (!i.complete || !j.complete) continue;
      const std::int64_t bin = binner_.bin(i.contig, i.pos, j.pos);
      if (bin < 0) continue;
      std::vector<PopPair> pp;
      std::int64_t last = x11_all;
      for (int k = 0; k < pops_; ++k) {
        const auto p = static_cast<std::size_t>(k);
        const std::int64_t n = i.n[p], a = i.alt[p], b = j.alt[p];
        std::int64_t x11 = 0;
        if (k + 1 == pops_) {
          x11 = last;
        } else {
          const auto it = found[p + 1].find(key);
          if (it != found[p + 1].end()) {
            x11 = it->second;
          } else if (a == 0 || b == 0) {  // a site without non-REF alleles in the population
            x11 = a == 0 ? n - b : n - a;
          } else if (a != n && b != n) {
            throw Error("ld-stats: a population band left out a pair of polymorphic sites");
          }  // else a site without REF alleles there: none REF at both
          last -= x11;
        }
        pp.emplace_back(x11, (n - a) - x11, (n - b) - x11, x11 - (n - a - b));
      }
      add_pair(static_cast<std::size_t>(bin), pp);
    }
  }

  void add_pair(std::size_t bin, const std::vector<PopPair>& p) {
    Bin* out = &bins_[bin * (basis_.size() + 1)];
    ++out->pairs;
    ++out;
    for (const auto& [i, j] : basis_.dd)
      (out++)->sum += i == j ? p[u(i)].same.dd : p[u(i)].d * p[u(j)].d;
    for (const auto& [i, j, k] : basis_.dz) {
      const PopPair& x = p[u(i)];
      double v = 0;
      if (j == i && k == i)
        v = x.same.dz;
      else if (j == i)
        v = x.dzp * p[u(k)].zq;
      else if (k == i)
        v = x.dzq * p[u(j)].zp;
      else
        v = x.d * (j == k ? p[u(j)].zz : p[u(j)].zp * p[u(k)].zq);
      (out++)->sum += v;
    }
    // pi2_i_j_k_l = 1/4 [p_i (1 - p_j) + p_j (1 - p_i)] [q_k (1 - q_l) + q_l (1 - q_k)]: each of
    // the four products draws an A haplotype, an a, a B and a b from the populations named.
    for (const auto& [i, j, k, l] : basis_.pi2) {
      double v = 0;
      for (const auto& [pa, pna] : {std::array<int, 2>{i, j}, std::array<int, 2>{j, i}})
        for (const auto& [pb, pnb] : {std::array<int, 2>{k, l}, std::array<int, 2>{l, k}}) {
          std::array<int, 3> set{};
          set[u(pa)] |= 1;
          set[u(pna)] |= 2;
          set[u(pb)] |= 4;
          set[u(pnb)] |= 8;
          double prod = 1;
          for (int q = 0; q < pops_; ++q) prod *= p[u(q)].g[static_cast<std::size_t>(set[u(q)])];
          v += prod;
        }
      (out++)->sum += v / 4;
    }
  }

  static std::size_t u(int i) { return static_cast<std::size_t>(i); }

  const SiteCounts& site(std::int64_t v) const {
    const auto it = rows_.find(v);
    if (it == rows_.end()) throw Error("ld-stats: a pair names a site the statistic has not kept");
    return it->second;
  }

  /// Keep the sites a later site may pair with (all of them while the partition does not start
  /// the run: a merge adds the pairs across its start).
  void trim_rows() {
    if (!bands_[0]->resolved() || rows_.empty()) return;
    const SiteCounts& last = rows_.rbegin()->second;
    const std::int64_t reach = binner_.max_bp();
    while (rows_.size() > 1) {
      const SiteCounts& s = rows_.begin()->second;
      if (s.contig == last.contig && last.pos - s.pos <= reach) break;
      rows_.erase(rows_.begin());
    }
  }

  LdStatsOptions options_;
  PairBinner binner_;
  int pops_ = 0;
  Basis basis_;
  std::array<std::int64_t, 4> width_{};           // haplotypes: all, then of each population
  std::vector<pairs::PairBandRequest> requests_;  // band 0: every haplotype; k: population k - 1
  std::vector<std::unique_ptr<BandState>> bands_;
  std::array<std::size_t, 3> next_{};  // per band: its next unit in pending_
  std::deque<PendingUnit> pending_;
  std::map<std::int64_t, SiteCounts> rows_;  // by variant
  std::vector<Bin> bins_;                    // per bin: pairs, then the basis' sums
  std::vector<ExactSum> h_;
  std::int64_t sites_ = 0;
};

}  // namespace

std::unique_ptr<Statistic> make_ld_stats_pops(const Query& q, const LdStatsOptions& options) {
  return std::make_unique<LdMomentsPopsStatistic>(q, options);
}

}  // namespace vczstats::stats::moments
