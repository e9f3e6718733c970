// Windowed scans over the allele counts: diversity (per population), divergence (per pair of
// populations) and the `stats` scan (several statistics, long format). Definitions:
// tests/tools/POPGEN.md; windows and their partitions: include/vczstats/windows.hpp.

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/statistic_support.hpp"
#include "vczstats/ancestral.hpp"
#include "vczstats/popgen.hpp"
#include "vczstats/statistics.hpp"

namespace vczstats {
namespace {

using stats::detail::ratio;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Sums of every window of a scan: per population diversity, per pair divergence (and the
/// three pairs of pbs).
struct ScanSums {
  std::vector<stats::DiversitySums> div;
  std::vector<stats::DivergenceSums> pair, pbs;
  void merge(const ScanSums& o) {
    for (std::size_t i = 0; i < div.size(); ++i) div[i].merge(o.div[i]);
    for (std::size_t i = 0; i < pair.size(); ++i) pair[i].merge(o.pair[i]);
    for (std::size_t i = 0; i < pbs.size(); ++i) pbs[i].merge(o.pbs[i]);
  }
  void flush() {
    for (auto& s : div) s.flush();
    for (auto& s : pair) s.flush();
    for (auto& s : pbs) s.flush();
  }
};

/// What the three windowed statistics share: the site filter, the window accumulator, the
/// per-site loop, and turning closed windows into rows. A subclass says which sums a site adds
/// and which rows a window gives.
class WindowedStatistic : public Statistic {
 public:
  using Acc = stats::WindowAccumulator<ScanSums>;

  WindowedStatistic(const Query& q, std::size_t pops, std::size_t pairs, std::size_t pbs_pairs)
      : q_(q),
        filter_(q),
        contigs_(stats::detail::contig_labels(q)),
        acc_(q.windows, [pops, pairs, pbs_pairs] {
          return ScanSums{std::vector<stats::DiversitySums>(pops),
                          std::vector<stats::DivergenceSums>(pairs),
                          std::vector<stats::DivergenceSums>(pbs_pairs)};
        }) {
    // Long gaps between sites close many empty windows at once: turn them into rows as they go.
    acc_.on_backlog([this] { rows_of(acc_.take_closed()); });
  }

  PassNeeds needs() const override {
    PassNeeds n;
    n.counts = true;
    n.positions = true;
    // REF's length for record overlap with regions; alleles to match an ancestral allele.
    n.alleles = filter_.needs_ref_length() || (uses_ancestral() && q_.ancestral != "ref");
    n.ancestral = uses_ancestral();
    n.tallies = uses_tallies();
    n.data_spans = filter_.uses_data_spans();
    return n;
  }

  void begin(const stats::SiteCursor& cursor) override { acc_.begin(cursor); }

  void accumulate(const UnitData& u) override {
    stats::detail::for_each_windowed_site(
        filter_, u, [&](const stats::WindowGroup& g, std::int64_t pos, std::int64_t r) {
          const int anc = u.ancestral.empty() ? 0 : u.ancestral[static_cast<std::size_t>(r)];
          acc_.add(g, pos, [&](ScanSums& s) { add_site(s, u, r, anc); });
        });
    acc_.for_each_sums([](ScanSums& s) { s.flush(); });  // the unit ends (StagedSum)
  }

  Table take_rows() override {
    return stats::detail::take_window_rows(rows_, acc_.take_closed(),
                                           [this](auto w) { rows_of(std::move(w)); });
  }

  void merge(Statistic& later) override {
    auto* o = dynamic_cast<WindowedStatistic*>(&later);
    if (!o || o->name() != name()) throw Error("cannot merge " + later.name() + " into " + name());
    stats::detail::merge_windows(acc_, rows_, o->acc_, o->rows_,
                                 [this](auto w) { rows_of(std::move(w)); });
  }

  void save(ByteWriter& w) const override {
    w.put_string(name());
    rows_.save(w);
    acc_.save(w, [](ByteWriter& out, const ScanSums& s) {
      out.put_vector(s.div);
      out.put_vector(s.pair);
      out.put_vector(s.pbs);
    });
  }
  void load(ByteReader& r) override {
    r.expect(name());
    rows_.load(r);
    acc_.load(r, [](ByteReader& in, ScanSums& s) {
      auto div = in.get_vector<stats::DiversitySums>();
      auto pair = in.get_vector<stats::DivergenceSums>();
      auto pbs = in.get_vector<stats::DivergenceSums>();
      if (div.size() != s.div.size() || pair.size() != s.pair.size() || pbs.size() != s.pbs.size())
        throw FormatError("statistic state: windows of other populations or pairs");
      s.div = std::move(div);
      s.pair = std::move(pair);
      s.pbs = std::move(pbs);
    });
  }

  Table finish() override {
    return stats::detail::take_window_rows(rows_, acc_.finish(),
                                           [this](auto w) { rows_of(std::move(w)); });
  }

 protected:
  virtual bool uses_ancestral() const { return false; }
  /// Weir & Cockerham's Fst needs the tallies of complete diploid calls.
  virtual bool uses_tallies() const { return false; }
  virtual void add_site(ScanSums& s, const UnitData& u, std::int64_t r, int anc) = 0;
  /// Append the rows of one window to rows_.
  virtual void window_rows(const Acc::Window& w, double length) = 0;

  /// The note of windowed tables (-v, --log): window conventions and polarisation.
  std::string note() const {
    return std::string("windows: start and end are 1-based and inclusive; ") +
           (q_.windows.span == stats::WindowSpan::Data
                ? "windows span the first to the last selected site of each contig (a "
                  "region's own bounds where it gives them)"
                : "windows span each contig from base 1 to its length (or each region)") +
           "; a window without sites has NA values; per_bp values divide by " +
           (q_.accessible_path.empty() ? std::string("end - start + 1")
                                       : "the window's accessible bases in " + q_.accessible_path +
                                             " (sites outside it are left out)") +
           "; " + vcz::AncestralAlleles::describe(q_.ancestral);
  }

  /// Start rows_ with the columns chrom, start, end, then @p labels, then @p numbers.
  void columns(const std::vector<std::string>& labels, const std::vector<std::string>& numbers,
               std::shared_ptr<const std::vector<std::string>> label_names) {
    rows_.add("chrom", Column::Kind::Label, contigs_);
    rows_.add("start", Column::Kind::Int);
    rows_.add("end", Column::Kind::Int);
    for (const auto& l : labels) rows_.add(l, Column::Kind::Label, label_names);
    for (const auto& n : numbers) rows_.add(n, Column::Kind::Float);
    rows_.note = note();
  }
  /// Make a column integer-valued (printed without a decimal point).
  void integral(const char* name) {
    rows_.columns[static_cast<std::size_t>(rows_.find(name))].kind = Column::Kind::Int;
  }
  /// Push a value to column c, an Int or a Float column. A window without sites (@p empty)
  /// has counts of 0 and no values (NaN, printed NA).
  void push(int c, double v, bool empty) {
    auto& col = rows_.columns[static_cast<std::size_t>(c)];
    if (col.kind == Column::Kind::Int)
      col.ints.push_back(static_cast<std::int64_t>(v));
    else
      col.floats.push_back(empty ? kNaN : v);
  }
  /// Start a row: chrom, start, end. Returns the next column.
  int row_start(const Acc::Window& w) {
    rows_.push_int(0, w.contig);
    rows_.push_int(1, w.start);
    rows_.push_int(2, w.end);
    return 3;
  }

  const Query& q_;
  Table rows_;

 private:
  void rows_of(std::vector<Acc::Window> windows) {
    for (const auto& w : windows) window_rows(w, q_.accessible->length(w.contig, w.start, w.end));
  }

  SiteFilter filter_;
  std::shared_ptr<const std::vector<std::string>> contigs_;
  Acc acc_;
};

double num(std::int64_t v) {
  return static_cast<double>(v);
}

class Diversity final : public WindowedStatistic {
 public:
  explicit Diversity(const Query& q)
      : WindowedStatistic(q, static_cast<std::size_t>(q.pops.count()), 0, 0) {
    columns({"population"},
            {"n_sites", "n_seg", "pi_sum", "pi_per_bp", "theta_w", "theta_w_per_bp", "n_max",
             "tajima_d", "singletons", "n_unfolded", "s_unfolded", "theta_pi_u", "theta_h",
             "theta_l", "fay_wu_h", "fay_wu_h_norm", "zeng_e"},
            stats::detail::population_labels(q));
    for (const char* c : {"n_sites", "n_seg", "n_max", "singletons", "n_unfolded", "s_unfolded"})
      integral(c);
  }
  std::string name() const override { return "diversity"; }

 protected:
  bool uses_ancestral() const override { return true; }
  void add_site(ScanSums& s, const UnitData& u, std::int64_t r, int anc) override {
    for (int p = 0; p < u.layout.pops; ++p)
      s.div[static_cast<std::size_t>(p)].add(u.site(r, p), u.layout.alleles, harmonic_, anc);
  }
  void window_rows(const Acc::Window& w, double length) override {
    for (std::size_t p = 0; p < w.sums.div.size(); ++p) {
      const auto& s = w.sums.div[p];
      const auto r = stats::finish_diversity(s, harmonic_);
      int c = row_start(w);
      rows_.push_int(c++, static_cast<std::int64_t>(p));
      for (double v :
           {num(s.n_sites), num(s.n_seg), s.pi_sum.value(), s.pi_sum.value() / length,
            s.theta_w.value(), s.theta_w.value() / length, num(s.n_max), r.tajima_d,
            num(s.singletons), num(s.n_unfolded), num(s.s_unfolded), s.theta_pi_u.value(),
            s.theta_h.value(), s.theta_l.value(), r.fay_wu_h, r.fay_wu_h_norm, r.zeng_e})
        push(c++, v, w.sites == 0);
    }
  }

 private:
  stats::Harmonic harmonic_;
};

class Divergence final : public WindowedStatistic {
 public:
  Divergence(const Query& q, const std::string& pairs) : Divergence(q, q.population_pairs(pairs)) {}
  std::string name() const override { return "divergence"; }

 protected:
  bool uses_tallies() const override { return true; }
  void add_site(ScanSums& s, const UnitData& u, std::int64_t r, int) override {
    for (std::size_t k = 0; k < pairs_.size(); ++k) {
      const auto [a, b] = pairs_[k];
      s.pair[k].add(u.site(r, a), u.site(r, b), u.layout.alleles, u.site_tallies(r, a),
                    u.site_tallies(r, b));
    }
  }
  void window_rows(const Acc::Window& w, double length) override {
    for (std::size_t k = 0; k < pairs_.size(); ++k) {
      const auto& s = w.sums.pair[k];
      const double da = s.dxy_sum.value() - (s.pi1_sum.value() + s.pi2_sum.value()) / 2;
      int c = row_start(w);
      rows_.push_int(c++, pairs_[k].first);
      rows_.push_int(c++, pairs_[k].second);
      for (double v :
           {num(s.n_sites), s.dxy_sum.value(), s.dxy_sum.value() / length, s.pi1_sum.value(),
            s.pi2_sum.value(), da, da / length, num(s.n_hudson), s.hudson_num.value(),
            s.hudson_den.value(), ratio(s.hudson_num.value(), s.hudson_den.value()), num(s.n_wc),
            s.wc_a.value(), s.wc_abc.value(), ratio(s.wc_a.value(), s.wc_abc.value()),
            s.n_wc ? s.wc_fst_sum.value() / static_cast<double>(s.n_wc) : kNaN,
            ratio(s.nei_num.value(), s.nei_ht.value())})
        push(c++, v, w.sites == 0);
    }
  }

 private:
  Divergence(const Query& q, std::vector<std::pair<int, int>> pairs)
      : WindowedStatistic(q, 0, pairs.size(), 0), pairs_(std::move(pairs)) {
    columns({"pop1", "pop2"},
            {"n_sites", "dxy_sum", "dxy_per_bp", "pi1_sum", "pi2_sum", "da_sum", "da_per_bp",
             "n_hudson", "hudson_num", "hudson_den", "hudson_fst", "n_wc", "wc_a", "wc_abc",
             "wc_fst", "wc_fst_mean", "nei_gst"},
            stats::detail::population_labels(q));
    for (const char* c : {"n_sites", "n_hudson", "n_wc"}) integral(c);
  }
  std::vector<std::pair<int, int>> pairs_;
};

constexpr ScanStatisticInfo kScanStatistics[] = {
    {"pi", false, "pi per bp"},
    {"theta_w", false, "Watterson's theta per bp"},
    {"tajima_d", false, "Tajima's D"},
    {"n_seg", false, "segregating sites"},
    {"singletons", false, "sites with a singleton"},
    {"fay_wu_h", false, "Fay & Wu's H (REF ancestral)"},
    {"zeng_e", false, "Zeng's E (REF ancestral)"},
    {"dxy", true, "dxy per bp"},
    {"da", true, "da per bp"},
    {"fst_hudson", true, "Hudson Fst (ratio of sums)"},
    {"fst_wc", true, "Weir & Cockerham Fst (weighted)"},
    {"gst", true, "Nei's Gst"},
    {"pbs", false, "population branch statistic of A for --pbs A,B,C (from Hudson Fst)"},
};

/// The statistic ids of the scan, in kScanStatistics order.
enum ScanId {
  kPi,
  kThetaW,
  kTajimaD,
  kNSeg,
  kSingletons,
  kFayWuH,
  kZengE,
  kDxy,
  kDa,
  kFstHudson,
  kFstWc,
  kGst,
  kPbs
};

/// What the scan was asked for, resolved against the query.
struct ScanPlan {
  std::vector<int> chosen;  // ScanId, in the order given
  std::vector<std::pair<int, int>> pairs, pbs_pairs;
  std::string pbs_label;
  bool any_diversity = false;
  bool wc = false;  // fst_wc asked: the tallies are needed
};

ScanPlan plan_scan(const Query& q, const ScanOptions& o) {
  ScanPlan p;
  bool any_pairwise = false, want_pbs = false;
  for (const auto& n : o.statistics) {
    int id = -1;
    for (std::size_t k = 0; k < std::size(kScanStatistics); ++k)
      if (n == kScanStatistics[k].name) id = static_cast<int>(k);
    if (id < 0) throw UsageError("--stats: unknown statistic '" + n + "'");
    p.chosen.push_back(id);
    any_pairwise = any_pairwise || kScanStatistics[id].pairwise;
    p.any_diversity = p.any_diversity || !kScanStatistics[id].pairwise;
    want_pbs = want_pbs || id == kPbs;
    p.wc = p.wc || id == kFstWc;
  }
  if (p.chosen.empty()) throw UsageError("--stats: no statistic given");
  if (any_pairwise) p.pairs = q.population_pairs(o.pairs);
  if (want_pbs != !o.pbs.empty()) throw UsageError("the pbs statistic and --pbs A,B,C go together");
  if (want_pbs) {
    const auto abc = vcz::split_list(o.pbs);
    if (abc.size() != 3) throw UsageError("--pbs: expected A,B,C, got '" + o.pbs + "'");
    p.pbs_pairs = q.population_pairs(abc[0] + "," + abc[1] + ";" + abc[0] + "," + abc[2] + ";" +
                                     abc[1] + "," + abc[2]);
    p.pbs_label = abc[0] + ";" + abc[1] + "," + abc[2];
  }
  return p;
}

class Scan final : public WindowedStatistic {
 public:
  Scan(const Query& q, ScanPlan plan)
      : WindowedStatistic(q, static_cast<std::size_t>(q.pops.count()), plan.pairs.size(),
                          plan.pbs_pairs.size()),
        plan_(std::move(plan)) {
    auto names = std::make_shared<std::vector<std::string>>();
    for (const auto& s : kScanStatistics) names->push_back(s.name);
    // populations: each population, then each pair "A,B", then the pbs label
    auto pops = std::make_shared<std::vector<std::string>>(q.pops.names);
    for (const auto& [a, b] : plan_.pairs)
      pops->push_back(q.pops.names[static_cast<std::size_t>(a)] + "," +
                      q.pops.names[static_cast<std::size_t>(b)]);
    pops->push_back(plan_.pbs_label);
    rows_.add("chrom", Column::Kind::Label, stats::detail::contig_labels(q));
    rows_.add("start", Column::Kind::Int);
    rows_.add("end", Column::Kind::Int);
    rows_.add("statistic", Column::Kind::Label, std::move(names));
    rows_.add("populations", Column::Kind::Label, std::move(pops));
    rows_.add("value", Column::Kind::Float);
    rows_.note = note();
  }
  std::string name() const override { return "stats"; }

 protected:
  bool uses_ancestral() const override { return true; }
  bool uses_tallies() const override { return plan_.wc; }
  void add_site(ScanSums& s, const UnitData& u, std::int64_t r, int anc) override {
    const int alleles = u.layout.alleles;
    if (plan_.any_diversity)
      for (int p = 0; p < u.layout.pops; ++p)
        s.div[static_cast<std::size_t>(p)].add(u.site(r, p), alleles, harmonic_, anc);
    for (std::size_t k = 0; k < plan_.pairs.size(); ++k) {
      const auto [a, b] = plan_.pairs[k];
      s.pair[k].add(u.site(r, a), u.site(r, b), alleles, plan_.wc ? u.site_tallies(r, a) : nullptr,
                    plan_.wc ? u.site_tallies(r, b) : nullptr);
    }
    for (std::size_t k = 0; k < plan_.pbs_pairs.size(); ++k)
      s.pbs[k].add(u.site(r, plan_.pbs_pairs[k].first), u.site(r, plan_.pbs_pairs[k].second),
                   alleles);
  }
  void window_rows(const Acc::Window& w, double length) override {
    const auto npops = static_cast<std::int64_t>(w.sums.div.size());
    auto row = [&](int id, std::int64_t populations, double v) {
      int c = row_start(w);
      rows_.push_int(c++, id);
      rows_.push_int(c++, populations);
      // A window without sites: counts of 0, no values.
      rows_.push_float(c, w.sites == 0 && id != kNSeg && id != kSingletons ? kNaN : v);
    };
    for (const int id : plan_.chosen) {
      if (id == kPbs) {
        double t[3];
        for (int k = 0; k < 3; ++k) {
          const auto& s = w.sums.pbs[static_cast<std::size_t>(k)];
          const double f = ratio(s.hudson_num.value(), s.hudson_den.value());
          t[k] = f < 1 ? -std::log(1 - f) : kNaN;
        }
        row(id, npops + static_cast<std::int64_t>(plan_.pairs.size()), (t[0] + t[1] - t[2]) / 2);
      } else if (!kScanStatistics[id].pairwise) {
        for (std::int64_t p = 0; p < npops; ++p) {
          const auto& s = w.sums.div[static_cast<std::size_t>(p)];
          double v;
          switch (id) {
            case kPi:
              v = s.pi_sum.value() / length;
              break;
            case kThetaW:
              v = s.theta_w.value() / length;
              break;
            case kNSeg:
              v = static_cast<double>(s.n_seg);
              break;
            case kSingletons:
              v = static_cast<double>(s.singletons);
              break;
            default: {
              const auto r = stats::finish_diversity(s, harmonic_);
              v = id == kTajimaD ? r.tajima_d : id == kFayWuH ? r.fay_wu_h : r.zeng_e;
            }
          }
          row(id, p, v);
        }
      } else {
        for (std::size_t k = 0; k < plan_.pairs.size(); ++k) {
          const auto& s = w.sums.pair[k];
          double v;
          switch (id) {
            case kDxy:
              v = s.dxy_sum.value() / length;
              break;
            case kDa:
              v = (s.dxy_sum.value() - (s.pi1_sum.value() + s.pi2_sum.value()) / 2) / length;
              break;
            case kFstHudson:
              v = ratio(s.hudson_num.value(), s.hudson_den.value());
              break;
            case kFstWc:
              v = ratio(s.wc_a.value(), s.wc_abc.value());
              break;
            default:
              v = ratio(s.nei_num.value(), s.nei_ht.value());
          }
          row(id, npops + static_cast<std::int64_t>(k), v);
        }
      }
    }
  }

 private:
  ScanPlan plan_;
  stats::Harmonic harmonic_;
};

}  // namespace

std::unique_ptr<Statistic> make_diversity(const Query& q) {
  return std::make_unique<Diversity>(q);
}

std::unique_ptr<Statistic> make_divergence(const Query& q, const std::string& pairs) {
  return std::make_unique<Divergence>(q, pairs);
}

std::span<const ScanStatisticInfo> scan_statistics() {
  return kScanStatistics;
}

std::unique_ptr<Statistic> make_scan(const Query& q, const ScanOptions& options) {
  return std::make_unique<Scan>(q, plan_scan(q, options));
}

}  // namespace vczstats
