// Haplotype statistics per window and population: the number of distinct haplotypes over the
// window's usable sites, haplotype diversity, Garud's H1, H12, H123 and H2/H1 (Garud et al.
// 2015). Windows are the query's (windows.hpp); a window's haplotype groups come from the
// segment kernels' Garud events (stats/haplo_kernel.hpp) once it has closed, from the rows
// kept while it was open or, after a merge, read again from the store. Definitions:
// tests/tools/POPGEN.md §11.4.

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/haplo_rows.hpp"
#include "stats/haplo_runner.hpp"
#include "stats/statistic_support.hpp"
#include "vczstats/haplotypes.hpp"

namespace vczstats {
namespace {

using namespace stats::haplo;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The usable sites of one population in a window: global variant indices of the first and the
/// last, and their number.
struct Span {
  std::int64_t first = -1, last = -1, used = 0;
  void merge(const Span& o) {
    if (o.used == 0) return;
    if (used == 0 || o.first < first) first = o.first;
    last = std::max(last, o.last);
    used += o.used;
  }
};

struct Spans {
  std::vector<Span> pop;
  void merge(const Spans& o) {
    for (std::size_t p = 0; p < pop.size(); ++p) pop[p].merge(o.pop[p]);
  }
};

using Acc = stats::WindowAccumulator<Spans>;

/// A closed window and, once computed, its haplotype groups per population.
struct Closed {
  Acc::Window window;
  std::vector<GarudResult> groups;
  bool computed = false;
};

class HaplotypeWindows final : public Statistic {
 public:
  explicit HaplotypeWindows(const Query& q)
      : filter_(q), contigs_(contig_names(q)), acc_(q.windows, [pops = q.pops.count()] {
          return Spans{std::vector<Span>(static_cast<std::size_t>(pops))};
        }) {
    store_ = std::make_shared<StoreRows>(q);
    for (int p = 0; p < q.pops.count(); ++p) {
      HapSet set = population_set(q, p);
      n_.push_back(set.n);
      rows_.push_back(std::make_unique<RowSource>(
          q, RowExtractor(std::move(set), RowFilter{}, nullptr, contigs_), store_));
    }
    acc_.on_backlog([this] { take_closed(); });
    table_.add("chrom", Column::Kind::Label, contigs_);
    table_.add("start", Column::Kind::Int);
    table_.add("end", Column::Kind::Int);
    table_.add("population", Column::Kind::Label, stats::detail::population_labels(q));
    for (const char* c : {"n_sites", "n_used", "n_haplotypes", "n_distinct"})
      table_.add(c, Column::Kind::Int);
    for (const char* c : {"hap_diversity", "h1", "h12", "h123", "h2_h1"})
      table_.add(c, Column::Kind::Float);
    table_.note =
        "windows: start and end are 1-based and inclusive; haplotypes compared over the window's "
        "sites where every haplotype of the population is called with at most two alleles "
        "(n_used); h1 = sum of squared haplotype frequencies (Garud et al. 2015)";
  }

  std::string name() const override { return "haplotypes"; }

  PassNeeds needs() const override {
    PassNeeds n;
    n.need(ProductNeed(kPhasedHaplotypes));
    n.positions = true;
    n.alleles = filter_.needs_ref_length();
    n.data_spans = filter_.uses_data_spans();
    return n;
  }

  void attach(const Backend& b) override { runner_ = b.segment_runner(); }

  void begin(const stats::SiteCursor& cursor) override { acc_.begin(cursor); }

  void accumulate(const UnitData& u) override {
    std::vector<std::int64_t> from(rows_.size());
    for (std::size_t p = 0; p < rows_.size(); ++p) {
      rows_[p]->append(u);
      from[p] = rows_[p]->fresh_from();
    }
    const auto& vb = *u.variants;
    for (std::int64_t r = 0; r < u.rows(); ++r) {
      if (!u.selected(r)) continue;
      const auto i = static_cast<std::size_t>(r);
      const auto g = filter_.group(vb.contig[i], vb.position[i],
                                   static_cast<std::int64_t>(vb.allele(r, 0).size()));
      const std::int64_t variant = u.unit->begin + r;
      // Which populations can use the site (their fresh rows follow the unit's order).
      std::vector<std::uint8_t> used(rows_.size(), 0);
      for (std::size_t p = 0; p < rows_.size(); ++p)
        if (from[p] < rows_[p]->size() && rows_[p]->info(from[p]).variant == variant) {
          used[p] = 1;
          ++from[p];
        }
      if (!g) continue;
      acc_.add(*g, vb.position[i], [&](Spans& s) {
        for (std::size_t p = 0; p < used.size(); ++p)
          if (used[p]) s.pop[p].merge(Span{variant, variant, 1});
      });
    }
    for (auto& r : rows_) r->take_fresh();
    take_closed();
    std::int64_t waiting = 0;
    for (const auto& c : closed_) waiting += !c.computed;
    if (waiting >= 4 * runner().preferred_segments()) compute();
    trim();
  }

  Table take_rows() override {
    Table out = table_.empty_like();
    std::size_t k = 0;
    for (; k < closed_.size() && closed_[k].computed; ++k) rows_of(closed_[k], out);
    closed_.erase(closed_.begin(), closed_.begin() + static_cast<std::ptrdiff_t>(k));
    return out;
  }

  void merge(Statistic& later) override {
    auto& o = stats::detail::same_statistic(*this, later);
    // As the windowed scans: our open windows absorb the later partition's heads; its closed
    // windows follow ours (and, if it has any, our open ones are closed now).
    const std::size_t mine = acc_.pending() - acc_.heads();
    acc_.merge(o.acc_);
    if (!o.closed_.empty()) {
      for (auto& w : acc_.take_front(mine)) closed_.push_back({std::move(w), {}, false});
      for (auto& c : o.closed_) closed_.push_back(std::move(c));
      o.closed_.clear();
    }
  }

  void save(ByteWriter& w) const override {
    w.put_string(name());
    auto put_spans = [](ByteWriter& out, const Spans& s) { out.put_vector(s.pop); };
    w.put<std::uint64_t>(closed_.size());
    for (const auto& c : closed_) {
      put_window(w, c.window);
      put_spans(w, c.window.sums);
      w.put<std::uint8_t>(c.computed);
      w.put_vector(c.groups);
    }
    acc_.save(w, put_spans);
  }

  void load(ByteReader& r) override {
    r.expect(name());
    auto get_spans = [&](ByteReader& in, Spans& s) {
      auto pop = in.get_vector<Span>();
      if (pop.size() != rows_.size())
        throw FormatError("statistic state: haplotype windows of other populations");
      s.pop = std::move(pop);
    };
    closed_.clear();
    const auto n = r.get<std::uint64_t>();
    for (std::uint64_t k = 0; k < n; ++k) {
      Closed c{get_window(r), {}, false};
      get_spans(r, c.window.sums);
      c.computed = r.get<std::uint8_t>() != 0;
      c.groups = r.get_vector<GarudResult>();
      closed_.push_back(std::move(c));
    }
    acc_.load(r, get_spans);
  }

  Table finish() override {
    for (auto& w : acc_.finish()) closed_.push_back({std::move(w), {}, false});
    compute();
    return take_rows();
  }

 private:
  SegmentRunner& runner() {
    if (!runner_) runner_ = make_cpu_runner(0);
    return *runner_;
  }

  static void put_window(ByteWriter& w, const Acc::Window& x) {
    w.put(x.contig);
    w.put(x.start);
    w.put(x.end);
    w.put(x.sites);
    w.put(x.group_key);
    w.put(x.index);
  }
  Acc::Window get_window(ByteReader& r) const {
    Acc::Window x{0, 0, 0, 0, Spans{std::vector<Span>(rows_.size())}, -1, 0, true, false};
    x.contig = r.get<std::int32_t>();
    x.start = r.get<std::int64_t>();
    x.end = r.get<std::int64_t>();
    x.sites = r.get<std::int64_t>();
    x.group_key = r.get<std::int64_t>();
    x.index = r.get<std::int64_t>();
    return x;
  }

  void take_closed() {
    for (auto& w : acc_.take_closed()) closed_.push_back({std::move(w), {}, false});
  }

  /// Compute the groups of every closed window not computed yet, population by population.
  void compute() {
    for (auto& c : closed_)
      if (!c.computed) c.groups.assign(rows_.size(), GarudResult{});
    for (std::size_t p = 0; p < rows_.size(); ++p) {
      std::vector<Closed*> todo;
      for (auto& c : closed_)
        if (!c.computed && c.window.sums.pop[p].used > 0) todo.push_back(&c);
      std::sort(todo.begin(), todo.end(), [&](const Closed* a, const Closed* b) {
        return a->window.sums.pop[p].first < b->window.sums.pop[p].first;
      });
      std::size_t k = 0;
      while (k < todo.size()) k = compute_from(p, todo, k);
    }
    for (auto& c : closed_) c.computed = true;
  }

  /// Compute windows todo[k..] whose rows are (made) present in the run; returns the next.
  std::size_t compute_from(std::size_t p, std::vector<Closed*>& todo, std::size_t k) {
    RowSource& rows = *rows_[p];
    auto span = [&](std::size_t j) { return todo[j]->window.sums.pop[p]; };
    if (rows.find(span(k).first) < 0) rows.seek(span(k).first);
    // The windows whose rows are all in the run (after reading forward what the first lacks).
    {
      const std::int64_t i = rows.find(span(k).first);
      if (i < 0) throw Error("haplotypes: a window's first site is missing from its unit");
      if (rows.find(span(k).last) < 0) rows.extend_front(i, span(k).used - 1);
    }
    std::vector<Segment> segments;
    std::vector<GarudEvent> events;
    std::vector<Closed*> out;
    constexpr std::int64_t kSegmentRows = 4096;
    std::size_t j = k;
    while (j < todo.size()) {
      const std::int64_t first = rows.find(span(j).first);
      if (first < 0) break;
      Segment seg;
      seg.first = first;
      seg.dir = 1;
      seg.event_begin = static_cast<std::int64_t>(events.size());
      std::int64_t last_row = first;
      std::vector<GarudEvent> mine;
      while (j < todo.size()) {
        const std::int64_t a = rows.find(span(j).first), b = rows.find(span(j).last);
        if (a < 0 || b < 0) break;
        if (!mine.empty() && b - first >= kSegmentRows && b > last_row) break;
        mine.push_back({b - first, b - a + 1, static_cast<std::int64_t>(out.size())});
        out.push_back(todo[j]);
        last_row = std::max(last_row, b);
        ++j;
      }
      if (mine.empty()) break;
      std::sort(mine.begin(), mine.end(),
                [](const GarudEvent& x, const GarudEvent& y) { return x.step < y.step; });
      events.insert(events.end(), mine.begin(), mine.end());
      seg.steps = last_row - first + 1;
      seg.event_end = static_cast<std::int64_t>(events.size());
      segments.push_back(seg);
    }
    if (segments.empty()) throw Error("haplotypes: a window's rows are missing");
    std::vector<GarudResult> results(out.size());
    BatchView b = batch_over(rows, n_[p], n_[p]);
    b.params.mode = kModeGarud;
    b.segments = segments.data();
    b.nsegments = static_cast<std::int64_t>(segments.size());
    for (const auto& s : segments) b.max_steps = std::max(b.max_steps, s.steps);
    b.events = events.data();
    b.garud = results.data();
    runner().run(b);
    for (std::size_t r = 0; r < out.size(); ++r) out[r]->groups[p] = results[r];
    return j;
  }

  /// Drop the rows no open or waiting window needs.
  void trim() {
    for (std::size_t p = 0; p < rows_.size(); ++p) {
      RowSource& rows = *rows_[p];
      std::int64_t keep = std::numeric_limits<std::int64_t>::max();
      auto need = [&](const Span& s) {
        if (s.used > 0) keep = std::min(keep, s.first);
      };
      acc_.for_each_pending([&](const Acc::Window& w) { need(w.sums.pop[p]); });
      for (const auto& c : closed_)
        if (!c.computed) need(c.window.sums.pop[p]);
      if (rows.size() == 0) continue;
      if (keep == std::numeric_limits<std::int64_t>::max()) {
        rows.trim(rows.size());
        continue;
      }
      std::int64_t i = 0;
      while (i < rows.size() && rows.info(i).variant < keep) ++i;
      rows.trim(i);
    }
  }

  void rows_of(const Closed& c, Table& t) const {
    const auto& w = c.window;
    for (std::size_t p = 0; p < rows_.size(); ++p) {
      const Span& s = w.sums.pop[p];
      const GarudResult& g = c.groups.empty() ? GarudResult{} : c.groups[p];
      const auto n = static_cast<double>(n_[p]);
      int k = 0;
      t.push_int(k++, w.contig);
      t.push_int(k++, w.start);
      t.push_int(k++, w.end);
      t.push_int(k++, static_cast<std::int64_t>(p));
      t.push_int(k++, w.sites);
      t.push_int(k++, s.used);
      t.push_int(k++, n_[p]);
      t.push_int(k++, s.used > 0 ? g.distinct : 0);
      if (s.used == 0) {
        for (int x = 0; x < 5; ++x) t.push_float(k++, kNaN);
        continue;
      }
      const double h1 = static_cast<double>(g.sumsq) / (n * n);
      const double p1 = static_cast<double>(g.top[0]) / n, p2 = static_cast<double>(g.top[1]) / n,
                   p3 = static_cast<double>(g.top[2]) / n;
      t.push_float(k++, n > 1 ? n / (n - 1) * (1 - h1) : kNaN);
      t.push_float(k++, h1);
      t.push_float(k++, h1 + 2 * p1 * p2);
      t.push_float(k++, h1 + 2 * (p1 * p2 + p1 * p3 + p2 * p3));
      t.push_float(k++, (h1 - p1 * p1) / h1);
    }
  }

  SiteFilter filter_;
  std::shared_ptr<const std::vector<std::string>> contigs_;
  std::shared_ptr<StoreRows> store_;
  std::vector<std::unique_ptr<RowSource>> rows_;
  std::vector<std::int64_t> n_;
  Acc acc_;
  std::vector<Closed> closed_;
  Table table_;
  std::unique_ptr<SegmentRunner> runner_;
};

}  // namespace

std::unique_ptr<Statistic> make_haplotype_windows(const Query& q) {
  return std::make_unique<HaplotypeWindows>(q);
}

}  // namespace vczstats
