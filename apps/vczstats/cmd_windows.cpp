// Windowed scans over the allele counts: diversity (per population) and divergence (per pair of
// populations). Definitions: tests/tools/POPGEN.md; windows: src/stats/windows.hpp.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/ancestral.hpp"
#include "vczstats/error.hpp"
#include "vczstats/popgen.hpp"
#include "vczstats/variants.hpp"
#include "vczstats/windows.hpp"

namespace vczstats::cli {
namespace {

struct WindowOptions {
  CommonOptions common;
  std::int64_t size = 0, step = 0, variants = 0;
  std::string windows_file;
  std::string ancestral = "ref";
  std::string accessible;
  std::string pairs;
};

void add_window_options(CLI::App& cmd, WindowOptions& o) {
  add_common_options(cmd, o.common);
  add_population_option(cmd, o.common);
  cmd.add_option("--window-size", o.size,
                 "Windows of this many bp, from the region start (else base 1), clipped at the "
                 "region end or contig length; 1-based inclusive start and end")
      ->check(CLI::PositiveNumber)
      ->group("Windows");
  cmd.add_option("--window-step", o.step, "Step between window starts [default: window size]")
      ->check(CLI::PositiveNumber)
      ->group("Windows");
  cmd.add_option("--ancestral", o.ancestral,
                 "Ancestral allele of the unfolded statistics: ref, aa (the store's "
                 "variant_AA, INFO/AA) or a FASTA file of the ancestral sequence")
      ->capture_default_str()
      ->group("Selection");
  cmd.add_option("--accessible", o.accessible,
                 "Accessibility mask: BED (*.bed) or CHROM BEG END file of the callable bases; "
                 "sites outside it are left out and per_bp values divide by the window's "
                 "accessible bases")
      ->group("Windows");
  cmd.add_option("--windows-file", o.windows_file,
                 "Windows from a file: BED (*.bed, 0-based half-open) or CHROM BEG END "
                 "(1-based inclusive); windows may overlap; every window of a contig with sites "
                 "is listed")
      ->group("Windows");
  cmd.add_option("--window-variants", o.variants, "Windows of this many consecutive sites")
      ->check(CLI::PositiveNumber)
      ->group("Windows");
}

/// Assigns each site to its window group: the first region of the query (in the order given)
/// that selects it, else its contig. Regions are indexed per contig by start, with the running
/// maximum of their ends, so a lookup visits only regions that can overlap the site.
class Grouper {
 public:
  explicit Grouper(const Query& q)
      : store_(q.store), regions_(q.regions), pos_overlap_(q.overlap == vcz::RegionOverlap::Pos) {
    by_contig_.resize(store_.contig_ids().size());
    for (std::size_t k = 0; k < regions_.size(); ++k) {
      auto c = store_.find_contig(regions_[k].contig);
      if (!c) c = store_.find_contig(regions_[k].spec);
      if (c)
        by_contig_[static_cast<std::size_t>(*c)].entries.push_back(
            {regions_[k].start, regions_[k].end, k});
    }
    for (auto& idx : by_contig_) {
      std::sort(idx.entries.begin(), idx.entries.end(),
                [](const Entry& a, const Entry& b) { return a.start < b.start; });
      std::int64_t m = std::numeric_limits<std::int64_t>::min();
      for (const auto& e : idx.entries) idx.max_end.push_back(m = std::max(m, e.end));
    }
  }

  /// The group of a site, or nullopt when no region selects it.
  std::optional<stats::WindowGroup> group(std::int32_t contig, std::int64_t pos,
                                          std::int64_t ref_length) const {
    const auto& lengths = store_.contig_lengths();
    // A length of 0 (or less) means unknown: writers fill it for header lines without one.
    const bool has_length = lengths && static_cast<std::size_t>(contig) < lengths->size() &&
                            (*lengths)[static_cast<std::size_t>(contig)] > 0;
    stats::WindowGroup g;
    g.contig = contig;
    if (regions_.empty()) {
      g.key = contig;
      g.start = 1;
      if (has_length) {
        g.end = (*lengths)[static_cast<std::size_t>(contig)];
        g.known_end = true;
      }
      return g;
    }
    // Regions selecting the site: start <= (POS, or the record's end) and end >= POS.
    const std::int64_t last = pos_overlap_ ? pos : pos + std::max<std::int64_t>(ref_length, 1) - 1;
    const auto& idx = by_contig_[static_cast<std::size_t>(contig)];
    auto it = std::upper_bound(idx.entries.begin(), idx.entries.end(), last,
                               [](std::int64_t v, const Entry& e) { return v < e.start; });
    std::size_t best = regions_.size();
    for (auto i = it - idx.entries.begin();
         i-- > 0 && idx.max_end[static_cast<std::size_t>(i)] >= pos;)
      if (idx.entries[static_cast<std::size_t>(i)].end >= pos)
        best = std::min(best, idx.entries[static_cast<std::size_t>(i)].k);
    if (best == regions_.size()) return std::nullopt;
    const auto& r = regions_[best];
    g.key = static_cast<std::int64_t>(best);
    g.start = r.start;
    if (r.end != std::numeric_limits<std::int64_t>::max()) {
      g.end = r.end;
      g.known_end = true;
    } else if (has_length) {
      g.end = (*lengths)[static_cast<std::size_t>(contig)];
      g.known_end = true;
    }
    return g;
  }

 private:
  struct Entry {
    std::int64_t start, end;
    std::size_t k;  // index in the order given
  };
  struct ContigIndex {
    std::vector<Entry> entries;         // by start
    std::vector<std::int64_t> max_end;  // running maximum of entries[0..i].end
  };
  const vcz::VczStore& store_;
  const std::vector<vcz::Region>& regions_;
  std::vector<ContigIndex> by_contig_;
  bool pos_overlap_ = false;
};

/// The accessible bases of each contig (merged, sorted intervals), or everything when no mask.
class AccessibleMask {
 public:
  AccessibleMask(const vcz::VczStore& store, const std::string& path) {
    if (path.empty()) return;
    active_ = true;
    intervals_.resize(store.contig_ids().size());
    for (const auto& r : vcz::read_regions_file(path))
      if (const auto c = store.find_contig(r.contig))
        intervals_[static_cast<std::size_t>(*c)].emplace_back(r.start, r.end);
    for (auto& iv : intervals_) {  // sort and merge
      std::sort(iv.begin(), iv.end());
      std::vector<std::pair<std::int64_t, std::int64_t>> merged;
      for (const auto& [a, b] : iv) {
        if (!merged.empty() && a <= merged.back().second + 1)
          merged.back().second = std::max(merged.back().second, b);
        else
          merged.emplace_back(a, b);
      }
      iv = std::move(merged);
    }
  }
  bool contains(std::int32_t contig, std::int64_t pos) const {
    if (!active_) return true;
    const auto& iv = intervals_[static_cast<std::size_t>(contig)];
    auto it = std::upper_bound(iv.begin(), iv.end(), std::make_pair(pos, std::int64_t{INT64_MAX}));
    return it != iv.begin() && std::prev(it)->second >= pos;
  }
  /// Bases of [start, end] that are accessible (all of them without a mask).
  double length(std::int32_t contig, std::int64_t start, std::int64_t end) const {
    if (!active_) return static_cast<double>(end - start + 1);
    std::int64_t n = 0;
    for (const auto& [a, b] : intervals_[static_cast<std::size_t>(contig)]) {
      if (a > end) break;
      const std::int64_t lo = std::max(a, start), hi = std::min(b, end);
      if (lo <= hi) n += hi - lo + 1;
    }
    return static_cast<double>(n);
  }

 private:
  bool active_ = false;
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> intervals_;
};

stats::WindowSpec window_spec(const WindowOptions& o, const vcz::VczStore& store) {
  const int kinds = (o.variants > 0) + (o.size > 0) + !o.windows_file.empty();
  if (kinds > 1)
    throw UsageError("give one of --window-size, --window-variants and --windows-file");
  if (o.step > 0 && o.size == 0) throw UsageError("--window-step needs --window-size");
  stats::WindowSpec spec{o.size, o.step, o.variants, {}};
  if (!o.windows_file.empty()) {
    spec.intervals.resize(store.contig_ids().size());
    std::int64_t n = 0;
    for (const auto& r : vcz::read_regions_file(o.windows_file)) {
      const auto c = store.find_contig(r.contig);
      if (!c) continue;  // a contig the store does not have
      spec.intervals[static_cast<std::size_t>(*c)].emplace_back(r.start, r.end);
      ++n;
    }
    if (n == 0) throw UsageError(o.windows_file + ": no window on a contig of " + store.path());
    for (auto& iv : spec.intervals) std::stable_sort(iv.begin(), iv.end());
  }
  return spec;
}

/// What every windowed command sets up: the query, its windows, mask, ancestral alleles (a
/// FASTA is read once) and heavy pass.
struct Scan {
  Query q;
  stats::WindowSpec spec;
  AccessibleMask mask;
  vcz::AncestralAlleles ancestral;
  stats::AlleleCountsPass pass;
  explicit Scan(const WindowOptions& o)
      : q(build_query(o.common)),
        spec(window_spec(o, q.store)),
        mask(q.store, o.accessible),
        ancestral(q.store, o.ancestral),
        pass(allele_counts_pass(q)) {}

  /// The header comment of a TSV: window conventions and polarisation.
  std::string note(const WindowOptions& o) const {
    return "windows: start and end are 1-based and inclusive; per_bp values divide by " +
           (o.accessible.empty() ? std::string("end - start + 1")
                                 : "the window's accessible bases in " + o.accessible +
                                       " (sites outside it are left out)") +
           "; " + ancestral.description();
  }

  /// Runs the heavy pass and feeds every selected site to @p add_site(group, pos, counts) in
  /// genome order.
  template <class AddSite>
  RunStats run(const WindowOptions& o, AddSite&& add_site) {
    // Alleles only when something uses them: REF's length for record overlap with regions, and
    // the match of an ancestral allele.
    const bool regions = !q.regions.empty();
    const vcz::VariantReader reader(q.store, /*with_alleles=*/regions || o.ancestral != "ref",
                                    /*with_ids=*/false);
    const Grouper grouper(q);
    const auto& layout = pass.layout();
    RunStats rs;
    run_allele_counts(
        q.store, q.plan, q.samples, pass, run_options(o.common), &rs,
        [&](std::int64_t, const vcz::WorkUnit& unit, std::span<const std::int32_t> counts) {
          const auto vb = reader.read(unit.begin, unit.end);
          const auto anc = ancestral.indices(vb);
          for (std::int64_t r = 0; r < unit.size(); ++r) {
            if (!unit.mask.empty() && !unit.mask[static_cast<std::size_t>(r)]) continue;
            const auto i = static_cast<std::size_t>(r);
            auto g = grouper.group(vb.contig[i], vb.position[i],
                                   static_cast<std::int64_t>(vb.allele(r, 0).size()));
            if (!g || !mask.contains(vb.contig[i], vb.position[i])) continue;
            if (!spec.intervals.empty()) g->key = g->contig;  // file windows: one group per contig
            add_site(*g, vb.position[i], counts.data() + r * layout.site_width(), anc[i]);
          }
        });
    return rs;
  }
};

std::string num(double v) {
  return format_number(v);
}
std::string num(std::int64_t v) {
  return std::to_string(v);
}

std::vector<TableWriter::Column> window_columns(std::vector<std::string> names,
                                                std::vector<std::string> text_names) {
  std::vector<TableWriter::Column> cols{{"chrom", false}, {"start", true}, {"end", true}};
  for (auto& n : text_names) cols.push_back({n, false});
  for (auto& n : names) cols.push_back({n, true});
  return cols;
}

void add_diversity(CLI::App& app) {
  auto o = std::make_shared<WindowOptions>();
  auto* cmd = app.add_subcommand(
      "diversity",
      "Diversity per population and window: pi (mean pairwise difference of called "
      "haplotypes, summed over sites and per bp), segregating sites, Watterson's theta, "
      "Tajima's D, singletons, and the unfolded theta_pi, theta_H, theta_L, Fay & Wu's H "
      "(raw and normalised) and Zeng's E with REF as the ancestral allele. Missing alleles are "
      "left out site by site. Definitions: tests/tools/POPGEN.md.");
  add_window_options(*cmd, *o);
  cmd->callback([o] {
    Scan scan(*o);
    const Query& q = scan.q;
    const stats::WindowSpec& spec = scan.spec;
    const AccessibleMask& mask = scan.mask;
    const stats::AlleleCountsPass& pass = scan.pass;
    const stats::CountsLayout& layout = pass.layout();
    Output out(o->common.output);
    TableWriter table(
        out, o->common.format,
        window_columns({"n_sites", "n_seg", "pi_sum", "pi_per_bp", "theta_w", "theta_w_per_bp",
                        "n_max", "tajima_d", "singletons", "n_unfolded", "s_unfolded", "theta_pi_u",
                        "theta_h", "theta_l", "fay_wu_h", "fay_wu_h_norm", "zeng_e"},
                       {"population"}),
        o->common.format == "tsv" ? scan.note(*o) : "");
    stats::Harmonic harmonic;
    using Acc = std::vector<stats::DiversitySums>;
    stats::WindowScanner<Acc> scanner(
        spec, [&] { return Acc(static_cast<std::size_t>(layout.pops)); },
        [&](const stats::WindowScanner<Acc>::Window& w) {
          const double length = mask.length(w.contig, w.start, w.end);
          for (int p = 0; p < layout.pops; ++p) {
            const auto& s = w.acc[static_cast<std::size_t>(p)];
            const auto r = stats::finish_diversity(s, harmonic);
            table.row({q.store.contig_ids()[static_cast<std::size_t>(w.contig)],
                       num(w.start),
                       num(w.end),
                       q.pops.names[static_cast<std::size_t>(p)],
                       num(s.n_sites),
                       num(s.n_seg),
                       num(s.pi_sum),
                       num(s.pi_sum / length),
                       num(s.theta_w),
                       num(s.theta_w / length),
                       num(s.n_max),
                       num(r.tajima_d),
                       num(s.singletons),
                       num(s.n_unfolded),
                       num(s.s_unfolded),
                       num(s.theta_pi_u),
                       num(s.theta_h),
                       num(s.theta_l),
                       num(r.fay_wu_h),
                       num(r.fay_wu_h_norm),
                       num(r.zeng_e)});
          }
        });
    const RunStats rs = scan.run(
        *o, [&](const stats::WindowGroup& g, std::int64_t pos, const std::int32_t* c, int anc) {
          scanner.add(g, pos, [&](Acc& acc) {
            for (int p = 0; p < layout.pops; ++p)
              acc[static_cast<std::size_t>(p)].add(c + std::int64_t{p} * layout.width(),
                                                   layout.alleles, harmonic, anc);
          });
        });
    scanner.finish();
    table.finish();
    out.commit();
    report_run(o->common, rs);
  });
}

std::vector<std::pair<int, int>> population_pairs(const vcz::Populations& pops,
                                                  const std::string& spec) {
  std::vector<std::pair<int, int>> pairs;
  if (spec.empty()) {
    for (int i = 0; i < pops.count(); ++i)
      for (int j = i + 1; j < pops.count(); ++j) pairs.emplace_back(i, j);
  } else {
    auto index = [&](const std::string& name) { return population_index(pops, name, "--pairs"); };
    for (const auto& item : vcz::split_list(spec, ';')) {
      const auto two = vcz::split_list(item, ',');
      if (two.size() != 2) throw UsageError("--pairs: expected A,B;C,D, got '" + item + "'");
      pairs.emplace_back(index(two[0]), index(two[1]));
    }
  }
  if (pairs.empty()) throw UsageError("divergence needs at least two populations (-P/--pops FILE)");
  return pairs;
}

void add_divergence(CLI::App& app) {
  auto o = std::make_shared<WindowOptions>();
  auto* cmd = app.add_subcommand(
      "divergence",
      "Divergence per pair of populations and window: dxy, da, Hudson Fst (ratio of sums), "
      "Weir & Cockerham Fst (weighted = ratio of sums, as vcftools; and the mean of per-site "
      "values; sites with REF and at most one ALT), Nei's Gst. Needs -P/--pops. Definitions: "
      "tests/tools/POPGEN.md.");
  add_window_options(*cmd, *o);
  cmd->add_option("--pairs", o->pairs,
                  "Population pairs A,B;C,D [default: every pair, in file order]")
      ->group("Selection");
  cmd->callback([o] {
    Scan scan(*o);
    const Query& q = scan.q;
    const stats::WindowSpec& spec = scan.spec;
    const AccessibleMask& mask = scan.mask;
    const stats::AlleleCountsPass& pass = scan.pass;
    const auto pairs = population_pairs(q.pops, o->pairs);
    const stats::CountsLayout& layout = pass.layout();
    Output out(o->common.output);
    TableWriter table(
        out, o->common.format,
        window_columns({"n_sites", "dxy_sum", "dxy_per_bp", "pi1_sum", "pi2_sum", "da_sum",
                        "da_per_bp", "n_hudson", "hudson_num", "hudson_den", "hudson_fst", "n_wc",
                        "wc_a", "wc_abc", "wc_fst", "wc_fst_mean", "nei_gst"},
                       {"pop1", "pop2"}),
        o->common.format == "tsv" ? scan.note(*o) : "");
    using Acc = std::vector<stats::DivergenceSums>;
    auto ratio = [](double a, double b) {
      return b != 0 ? a / b : std::numeric_limits<double>::quiet_NaN();
    };
    stats::WindowScanner<Acc> scanner(
        spec, [&] { return Acc(pairs.size()); },
        [&](const stats::WindowScanner<Acc>::Window& w) {
          const double length = mask.length(w.contig, w.start, w.end);
          for (std::size_t k = 0; k < pairs.size(); ++k) {
            const auto& s = w.acc[k];
            const double da = s.dxy_sum - (s.pi1_sum + s.pi2_sum) / 2;
            table.row({q.store.contig_ids()[static_cast<std::size_t>(w.contig)],
                       num(w.start),
                       num(w.end),
                       q.pops.names[static_cast<std::size_t>(pairs[k].first)],
                       q.pops.names[static_cast<std::size_t>(pairs[k].second)],
                       num(s.n_sites),
                       num(s.dxy_sum),
                       num(s.dxy_sum / length),
                       num(s.pi1_sum),
                       num(s.pi2_sum),
                       num(da),
                       num(da / length),
                       num(s.n_hudson),
                       num(s.hudson_num),
                       num(s.hudson_den),
                       num(ratio(s.hudson_num, s.hudson_den)),
                       num(s.n_wc),
                       num(s.wc_a),
                       num(s.wc_abc),
                       num(ratio(s.wc_a, s.wc_abc)),
                       num(s.n_wc ? s.wc_fst_sum / static_cast<double>(s.n_wc)
                                  : std::numeric_limits<double>::quiet_NaN()),
                       num(ratio(s.nei_num, s.nei_ht))});
          }
        });
    const RunStats rs = scan.run(
        *o, [&](const stats::WindowGroup& g, std::int64_t pos, const std::int32_t* c, int) {
          scanner.add(g, pos, [&](Acc& acc) {
            for (std::size_t k = 0; k < pairs.size(); ++k)
              acc[k].add(c + std::int64_t{pairs[k].first} * layout.width(),
                         c + std::int64_t{pairs[k].second} * layout.width(), layout.alleles);
          });
        });
    scanner.finish();
    table.finish();
    out.commit();
    report_run(o->common, rs);
  });
}

// vczstats stats: several statistics in one pass, long format.
struct StatDef {
  const char* name;
  bool pairwise;
  const char* help;
};
constexpr StatDef kStats[] = {
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

void add_stats(CLI::App& app) {
  auto o = std::make_shared<WindowOptions>();
  std::string names;
  for (const auto& d : kStats) names += std::string(names.empty() ? "" : ", ") + d.name;
  auto* cmd = app.add_subcommand(
      "stats",
      "Several diversity and divergence statistics in one pass over the genotypes, per window: "
      "one row per window, statistic and population (or population pair, 'A,B'), columns "
      "chrom, start, end, statistic, populations, value. Statistics: " +
          names + ". Definitions: tests/tools/POPGEN.md (as diversity and divergence).");
  add_window_options(*cmd, *o);
  auto list = std::make_shared<std::string>("pi,theta_w,tajima_d,dxy,fst_hudson");
  cmd->add_option("--stats", *list, "Comma-separated statistics")->capture_default_str();
  cmd->add_option("--pairs", o->pairs, "Population pairs A,B;C,D [default: every pair]")
      ->group("Selection");
  auto pbs_spec = std::make_shared<std::string>();
  cmd->add_option("--pbs", *pbs_spec,
                  "Populations A,B,C of the pbs statistic (Yi et al. 2010): T = -ln(1 - Fst) "
                  "from windowed Hudson Fst, PBS_A = (T_AB + T_AC - T_BC) / 2")
      ->group("Selection");
  cmd->callback([o, list, pbs_spec] {
    std::vector<const StatDef*> chosen;
    bool any_pairwise = false;
    for (const auto& n : vcz::split_list(*list)) {
      const StatDef* d = nullptr;
      for (const auto& k : kStats)
        if (n == k.name) d = &k;
      if (!d) throw UsageError("--stats: unknown statistic '" + n + "'");
      chosen.push_back(d);
      any_pairwise = any_pairwise || d->pairwise;
    }
    if (chosen.empty()) throw UsageError("--stats: no statistic given");
    Scan scan(*o);
    const Query& q = scan.q;
    const stats::WindowSpec& spec = scan.spec;
    const AccessibleMask& mask = scan.mask;
    const stats::AlleleCountsPass& pass = scan.pass;
    const auto pairs =
        any_pairwise ? population_pairs(q.pops, o->pairs) : std::vector<std::pair<int, int>>{};
    const bool want_pbs = std::any_of(chosen.begin(), chosen.end(), [](const StatDef* d) {
      return d->name == std::string("pbs");
    });
    if (want_pbs != !pbs_spec->empty())
      throw UsageError("the pbs statistic and --pbs A,B,C go together");
    std::vector<std::pair<int, int>> pbs_pairs;  // (A,B), (A,C), (B,C)
    std::string pbs_label;
    if (want_pbs) {
      const auto abc = vcz::split_list(*pbs_spec);
      if (abc.size() != 3) throw UsageError("--pbs: expected A,B,C, got '" + *pbs_spec + "'");
      pbs_pairs = population_pairs(q.pops, abc[0] + "," + abc[1] + ";" + abc[0] + "," + abc[2] +
                                               ";" + abc[1] + "," + abc[2]);
      pbs_label = abc[0] + ";" + abc[1] + "," + abc[2];
    }
    const stats::CountsLayout& layout = pass.layout();
    Output out(o->common.output);
    TableWriter table(out, o->common.format,
                      {{"chrom", false},
                       {"start"},
                       {"end"},
                       {"statistic", false},
                       {"populations", false},
                       {"value"}},
                      o->common.format == "tsv" ? scan.note(*o) : "");
    stats::Harmonic harmonic;
    struct Acc {
      std::vector<stats::DiversitySums> div;
      std::vector<stats::DivergenceSums> pair, pbs;
    };
    auto ratio = [](double a, double b) {
      return b != 0 ? a / b : std::numeric_limits<double>::quiet_NaN();
    };
    stats::WindowScanner<Acc> scanner(
        spec,
        [&] {
          return Acc{std::vector<stats::DiversitySums>(static_cast<std::size_t>(layout.pops)),
                     std::vector<stats::DivergenceSums>(pairs.size()),
                     std::vector<stats::DivergenceSums>(pbs_pairs.size())};
        },
        [&](const stats::WindowScanner<Acc>::Window& w) {
          const double length = mask.length(w.contig, w.start, w.end);
          const std::string& chrom = q.store.contig_ids()[static_cast<std::size_t>(w.contig)];
          for (const StatDef* d : chosen) {
            if (d->name == std::string("pbs")) {
              double t[3];
              for (int k = 0; k < 3; ++k) {
                const auto& s = w.acc.pbs[static_cast<std::size_t>(k)];
                const double f = ratio(s.hudson_num, s.hudson_den);
                t[k] = f < 1 ? -std::log(1 - f) : std::numeric_limits<double>::quiet_NaN();
              }
              table.row({chrom, num(w.start), num(w.end), d->name, pbs_label,
                         num((t[0] + t[1] - t[2]) / 2)});
            } else if (!d->pairwise) {
              for (int p = 0; p < layout.pops; ++p) {
                const auto& s = w.acc.div[static_cast<std::size_t>(p)];
                const std::string name(d->name);
                double v;
                if (name == "pi") {
                  v = s.pi_sum / length;
                } else if (name == "theta_w") {
                  v = s.theta_w / length;
                } else if (name == "n_seg") {
                  v = static_cast<double>(s.n_seg);
                } else if (name == "singletons") {
                  v = static_cast<double>(s.singletons);
                } else {
                  const auto r = stats::finish_diversity(s, harmonic);
                  v = name == "tajima_d" ? r.tajima_d : name == "fay_wu_h" ? r.fay_wu_h : r.zeng_e;
                }
                table.row({chrom, num(w.start), num(w.end), d->name,
                           q.pops.names[static_cast<std::size_t>(p)], num(v)});
              }
            } else {
              for (std::size_t k = 0; k < pairs.size(); ++k) {
                const auto& s = w.acc.pair[k];
                const std::string name(d->name);
                double v;
                if (name == "dxy")
                  v = s.dxy_sum / length;
                else if (name == "da")
                  v = (s.dxy_sum - (s.pi1_sum + s.pi2_sum) / 2) / length;
                else if (name == "fst_hudson")
                  v = ratio(s.hudson_num, s.hudson_den);
                else if (name == "fst_wc")
                  v = ratio(s.wc_a, s.wc_abc);
                else
                  v = ratio(s.nei_num, s.nei_ht);
                table.row({chrom, num(w.start), num(w.end), d->name,
                           q.pops.names[static_cast<std::size_t>(pairs[k].first)] + "," +
                               q.pops.names[static_cast<std::size_t>(pairs[k].second)],
                           num(v)});
              }
            }
          }
        });
    const bool need_div =
        std::any_of(chosen.begin(), chosen.end(), [](const StatDef* d) { return !d->pairwise; });
    const RunStats rs = scan.run(*o, [&](const stats::WindowGroup& g, std::int64_t pos,
                                         const std::int32_t* c, int anc) {
      scanner.add(g, pos, [&](Acc& acc) {
        if (need_div)
          for (int p = 0; p < layout.pops; ++p)
            acc.div[static_cast<std::size_t>(p)].add(c + std::int64_t{p} * layout.width(),
                                                     layout.alleles, harmonic, anc);
        for (std::size_t k = 0; k < pairs.size(); ++k)
          acc.pair[k].add(c + std::int64_t{pairs[k].first} * layout.width(),
                          c + std::int64_t{pairs[k].second} * layout.width(), layout.alleles);
        for (std::size_t k = 0; k < pbs_pairs.size(); ++k)
          acc.pbs[k].add(c + std::int64_t{pbs_pairs[k].first} * layout.width(),
                         c + std::int64_t{pbs_pairs[k].second} * layout.width(), layout.alleles);
      });
    });
    scanner.finish();
    table.finish();
    out.commit();
    report_run(o->common, rs);
  });
}

}  // namespace

void add_window_commands(CLI::App& app) {
  add_diversity(app);
  add_divergence(app);
  add_stats(app);
}

}  // namespace vczstats::cli
