// The variant-pair commands (library objects in vczstats/ld.hpp): `ld`, pairs of nearby variants
// and their LD as plink 1.9 --r2 [dprime] and vcftools --geno-r2 / --hap-r2 report them, and
// `prune`, plink's --indep-pairwise. Rows are streamed as the statistic finishes them, with the
// variants' IDs looked up by index.

#include <fmt/format.h>

#include <list>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/error.hpp"
#include "vczstats/ld.hpp"
#include "vczstats/variants.hpp"

namespace vczstats::cli {
namespace {

/// variant_id (CHROM:POS:REF:ALT where absent) by global index, read a block at a time (the rows of
/// a table are near each other).
class IdLookup {
 public:
  explicit IdLookup(const vcz::VczStore& store)
      : reader_(store, false, true, /*key_missing_ids=*/true), n_(store.num_variants()) {}
  const std::string& operator()(std::int64_t v) {
    const std::int64_t b = v / kBlock;
    auto it = blocks_.begin();
    while (it != blocks_.end() && it->first != b) ++it;
    if (it == blocks_.end()) {
      if (blocks_.size() == 4) blocks_.pop_back();
      blocks_.emplace_front(b, reader_.read(b * kBlock, std::min(n_, (b + 1) * kBlock)).id);
      it = blocks_.begin();
    } else if (it != blocks_.begin()) {
      blocks_.splice(blocks_.begin(), blocks_, it);
      it = blocks_.begin();
    }
    return it->second[static_cast<std::size_t>(v - b * kBlock)];
  }

 private:
  static constexpr std::int64_t kBlock = 1 << 14;
  vcz::VariantReader reader_;
  std::int64_t n_ = 0;
  std::list<std::pair<std::int64_t, std::vector<std::string>>> blocks_;
};

/// Parse plink's --indep-pairwise arguments: W [kb] S r2, or Wkb S r2.
PruneOptions parse_indep_pairwise(const std::vector<std::string>& a) {
  auto number = [](const std::string& s, const char* what) {
    try {
      std::size_t used = 0;
      const double v = std::stod(s, &used);
      if (used != s.size()) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      throw UsageError(fmt::format("--indep-pairwise: bad {} '{}'", what, s));
    }
  };
  auto whole = [&](const std::string& s, const char* what) {
    const double v = number(s, what);
    if (v != static_cast<double>(static_cast<std::int64_t>(v)))
      throw UsageError(fmt::format("--indep-pairwise: the {} must be a whole number", what));
    return static_cast<std::int64_t>(v);
  };
  PruneOptions o;
  std::vector<std::string> args = a;
  if (args.size() == 4) {
    if (args[1] != "kb") throw UsageError("--indep-pairwise W [kb] S r2: expected 'kb' after W");
    o.window_kb = true;
    args.erase(args.begin() + 1);
  } else if (args.size() == 3 && args[0].size() > 2 && args[0].ends_with("kb")) {
    o.window_kb = true;
    args[0].resize(args[0].size() - 2);
  }
  if (args.size() != 3) throw UsageError("--indep-pairwise W [kb] S r2: three values expected");
  o.window = whole(args[0], "window");
  o.step = whole(args[1], "step");
  o.r2 = number(args[2], "r2 threshold");
  return o;
}

void add_ld(CLI::App& app) {
  struct Options {
    CommonOptions common;
    LdOptions ld;
    bool dprime = false, hap = false, geno = false;
    double window_kb = 1000;
    std::int64_t window_bp = -1;
    std::string snp, snps, snp_list;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "ld",
      "Linkage disequilibrium between nearby variants, as plink 1.9 --r2 and vcftools "
      "--geno-r2 / --hap-r2: for every pair of selected variants on one contig at most "
      "--ld-window - 1 variants and --ld-window-kb apart, r2 of the non-REF allele counts over the "
      "samples called at both (default; --dprime: r2 and D' of the haplotype frequencies plink "
      "estimates from the two-locus genotypes; --hap: r2, D and D' of phased haplotypes). Pairs "
      "with r2 >= --ld-window-r2 are reported. Multi-allelic sites count REF against the other "
      "alleles; calls with a missing allele, or not diploid, are left out pair by pair. "
      "Output: chr_a bp_a snp_a chr_b bp_b snp_b n r2 [d] [dprime].");
  add_common_options(*cmd, o->common);
  cmd->add_flag("--r2,--geno-r2", o->geno, "r2 of allele counts (plink --r2, vcftools --geno-r2)");
  cmd->add_flag("--dprime", o->dprime,
                "r2 and D' from EM haplotype frequencies (plink 1.9 --r2 dprime)");
  cmd->add_flag("--hap,--hap-r2", o->hap, "r2, D and D' of phased haplotypes (vcftools --hap-r2)");
  cmd->add_option("--ld-window", o->ld.window_variants,
                  "Pairs at most N - 1 selected variants apart")
      ->capture_default_str();
  cmd->add_option("--ld-window-kb", o->window_kb, "Pairs at most this many kb apart")
      ->capture_default_str();
  cmd->add_option("--ld-window-bp", o->window_bp,
                  "Pairs at most this many bp apart (instead of --ld-window-kb)");
  cmd->add_option("--ld-window-r2", o->ld.min_r2, "Report pairs with r2 at least this")
      ->capture_default_str();
  cmd->add_option("--ld-snp", o->snp, "Only pairs of this variant ID with its window, both sides");
  cmd->add_option("--ld-snps", o->snps, "As --ld-snp, for a comma-separated list of IDs");
  cmd->add_option("--ld-snp-list", o->snp_list, "As --ld-snp, for the IDs of a file");
  cmd->callback([o] {
    if (o->dprime + o->hap + o->geno > 1)
      throw UsageError("choose one of --r2, --dprime and --hap");
    o->ld.measure = o->hap      ? PairMeasure::Haplotype
                    : o->dprime ? PairMeasure::GenotypeEm
                                : PairMeasure::GenotypeR2;
    if (!(o->window_kb >= 0)) throw UsageError("--ld-window-kb must not be negative");
    o->ld.window_bp =
        o->window_bp >= 0 ? o->window_bp : static_cast<std::int64_t>(o->window_kb * 1000 + 0.5);
    if (!o->snp.empty()) o->ld.focal.push_back(o->snp);
    for (auto& s : vcz::split_list(o->snps)) o->ld.focal.push_back(s);
    if (!o->snp_list.empty())
      for (std::string_view s : vcz::read_samples_file(o->snp_list)) o->ld.focal.emplace_back(s);
    const Query q = build_query(query_options(o->common), o->common.threads);
    const auto s = make_ld(q, o->ld);
    IdLookup ids(q.store);
    Output out(o->common.output);
    std::optional<TableWriter> w;
    std::string note;
    std::vector<std::string> cells;
    auto emit = [&](const Table& t) {
      constexpr int kValues = 6;  // n, r2, ... after the variants' columns
      if (!w) {
        std::vector<TableWriter::Column> cols{{"chr_a", false}, {"bp_a", true}, {"snp_a", false},
                                              {"chr_b", false}, {"bp_b", true}, {"snp_b", false}};
        for (auto& c : table_columns(t, kValues)) cols.push_back(c);
        w.emplace(out, o->common.format, cols);
        note = t.note;
      }
      const auto& va = t.column("variant_a").ints;
      const auto& vb = t.column("variant_b").ints;
      const auto& ca = t.column("chrom_a");
      const auto& cb = t.column("chrom_b");
      const auto& pa = t.column("pos_a").ints;
      const auto& pb = t.column("pos_b").ints;
      for (std::int64_t r = 0; r < t.rows(); ++r) {
        const auto i = static_cast<std::size_t>(r);
        cells.clear();
        cells.push_back(ca.label(r));
        cells.push_back(std::to_string(pa[i]));
        cells.push_back(ids(va[i]));
        cells.push_back(cb.label(r));
        cells.push_back(std::to_string(pb[i]));
        cells.push_back(ids(vb[i]));
        table_cells(t, r, cells, kValues);
        w->row(cells);
      }
    };
    ComputeHooks hooks;
    hooks.after_unit = [&](const UnitData&) { emit(s->take_rows()); };
    Statistic* list[] = {s.get()};
    const RunStats rs = compute(q, list, run_options(o->common), hooks);
    emit(s->take_rows());
    emit(s->finish());
    w->finish(note);
    out.commit();
    report_note(o->common, note);
    report_run(o->common, rs);
  });
}

void add_prune(CLI::App& app) {
  struct Options {
    CommonOptions common;
    std::vector<std::string> indep;
    std::string out_prefix;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "prune",
      "LD pruning as plink 1.9 --indep-pairwise W [kb] S r2: in windows of W variants (or W kb) "
      "moved by S variants, of every pair of remaining variants with r2 > the threshold (r2 of "
      "non-REF allele counts over the samples called at both) the one with the lower minor "
      "allele frequency is removed, greedily in plink's order; variants without variance are "
      "removed. --out PREFIX writes PREFIX.prune.in and PREFIX.prune.out (variant IDs, one per "
      "line); -o (or stdout) gets the table chrom pos id kept.");
  add_common_options(*cmd, o->common);
  cmd->add_option("--indep-pairwise", o->indep, "W [kb] S r2, e.g. 50 5 0.2 or 500 kb 1 0.2")
      ->expected(3, 4)
      ->required();
  cmd->add_option("--out", o->out_prefix, "Write PREFIX.prune.in and PREFIX.prune.out");
  cmd->callback([o] {
    const PruneOptions po = parse_indep_pairwise(o->indep);
    const Query q = build_query(query_options(o->common), o->common.threads);
    const auto s = make_prune(q, po);
    IdLookup ids(q.store);
    const bool table = !o->common.output.empty() || o->out_prefix.empty();
    std::unique_ptr<Output> out, in_list, out_list;
    std::optional<TableWriter> w;
    std::string note;
    if (table) out = std::make_unique<Output>(o->common.output);
    if (!o->out_prefix.empty()) {
      in_list = std::make_unique<Output>(o->out_prefix + ".prune.in");
      out_list = std::make_unique<Output>(o->out_prefix + ".prune.out");
    }
    std::string in_text, out_text;
    auto emit = [&](const Table& t) {
      if (table && !w)
        w.emplace(*out, o->common.format,
                  std::vector<TableWriter::Column>{
                      {"chrom", false}, {"pos", true}, {"id", false}, {"kept", true}});
      if (note.empty()) note = t.note;
      const auto& v = t.column("variant").ints;
      const auto& c = t.column("chrom");
      const auto& pos = t.column("pos").ints;
      const auto& kept = t.column("kept").ints;
      for (std::int64_t r = 0; r < t.rows(); ++r) {
        const auto i = static_cast<std::size_t>(r);
        const std::string& id = ids(v[i]);
        if (w) w->row({c.label(r), std::to_string(pos[i]), id, std::to_string(kept[i])});
        if (in_list) (kept[i] ? in_text : out_text) += id + "\n";
      }
      if (in_list && in_text.size() + out_text.size() > (1u << 20)) {
        write(*in_list, in_text);
        write(*out_list, out_text);
        in_text.clear();
        out_text.clear();
      }
    };
    ComputeHooks hooks;
    hooks.after_unit = [&](const UnitData&) { emit(s->take_rows()); };
    Statistic* list[] = {s.get()};
    const RunStats rs = compute(q, list, run_options(o->common), hooks);
    emit(s->take_rows());
    emit(s->finish());
    if (w) {
      w->finish(note);
      out->commit();
    }
    if (in_list) {
      write(*in_list, in_text);
      write(*out_list, out_text);
      in_list->commit();
      out_list->commit();
    }
    report_note(o->common, note);
    report_run(o->common, rs);
  });
}

}  // namespace

void add_ld_commands(CLI::App& app) {
  add_ld(app);
  add_prune(app);
}

}  // namespace vczstats::cli
