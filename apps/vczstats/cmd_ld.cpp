// The variant-pair commands (library objects in vczstats/ld.hpp): `ld`, pairs of nearby variants
// and their LD as plink 1.9 --r2 [dprime] and vcftools --geno-r2 / --hap-r2 report them, and
// `prune`, plink's --indep-pairwise. Rows are streamed as the statistic finishes them, with the
// variants' IDs looked up by index.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <list>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "processes.hpp"
#include "statistic_run.hpp"
#include "vczstats/error.hpp"
#include "vczstats/ld.hpp"
#include "vczstats/site_expression.hpp"
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

/// Rows of a table as cells, handed to a row writer (rows of another MPI rank travel as cells).
using RowSink = std::function<void(const Cells&)>;
using EmitRows = std::function<void(const Table&, const RowSink&)>;

/// Compute @p run, streaming the rows its statistic finishes (take_rows after each unit and each
/// merge, then finish) through @p emit to @p write on the writing process. Returns false on the
/// MPI ranks that do not write.
bool stream_rows(StatisticRun& run, const EmitRows& emit, const RowSink& write) {
  RowStream rows;
  rows.unit_rows = [&](const UnitData&, Statistic& s, const RowSink& row) {
    emit(s.take_rows(), row);
  };
  rows.write = write;
  rows.after_merge = [&](Statistic& s) { emit(s.take_rows(), write); };
  if (!run.compute(rows)) return false;
  emit(run.statistic().take_rows(), write);
  emit(run.statistic().finish(), write);
  return true;
}

/// (sample, population) entries of one population.
using PopMembers = std::vector<std::pair<std::string, std::string>>;

/// The populations of @p qo's -P file and the entries of each; clears qo.pops_file (the caller
/// puts the entries of the populations it chooses in qo.pops).
std::pair<std::vector<std::string>, std::vector<PopMembers>> population_members(QueryOptions& qo) {
  const vcz::PopulationFile f = vcz::read_populations_file(qo.pops_file, qo.pop_column);
  std::vector<PopMembers> members(f.names.size());
  for (std::int64_t i = 0; i < f.size(); ++i) {
    const auto p = static_cast<std::size_t>(f.population[static_cast<std::size_t>(i)]);
    members[p].emplace_back(std::string(f.samples[i]), f.names[p]);
  }
  qo.pops_file.clear();
  return {f.names, std::move(members)};
}

/// Whether @p f has filters of the genotype counts (they count the query's samples).
bool count_filters(const VariantFilterOptions& f) {
  if (f.counts()) return true;
  if (!f.expression()) return false;
  return SiteExpression::parse(f.include ? *f.include : *f.exclude, !f.include).needs().counts;
}

/// --decay (with -P one curve per population: in the same pass, or with count filters one pass
/// each) and --ld-scores, through StatisticRun (under mpirun split across the ranks, rank 0
/// writing).
template <class Options>
void run_ld_summary(const CLI::App& cmd, const Options& o, bool decay) {
  if (decay && o.ld_scores) throw UsageError("choose one of --decay and --ld-scores");
  if (o.dprime) throw UsageError("--decay and --ld-scores take --r2 or --hap, not --dprime");
  for (const char* opt : {"--ld-window-kb", "--ld-window-bp", "--ld-window-r2", "--ld-snp",
                          "--ld-snps", "--ld-snp-list"})
    if (cmd.count(opt))
      throw UsageError(std::string(opt) +
                       " is an option of the pairs, not of --decay or --ld-scores");
  const PairMeasure measure = o.hap ? PairMeasure::Haplotype : PairMeasure::GenotypeR2;
  if (!decay) {
    for (const char* opt : {"--window-size", "--pops", "--ld-window"})
      if (cmd.count(opt)) throw UsageError(std::string(opt) + " is not an option of --ld-scores");
    LdScoreOptions so;
    so.measure = measure;
    if (cmd.count("--ld-wind-kb")) {
      if (!(o.ld_wind_kb >= 0)) throw UsageError("--ld-wind-kb must not be negative");
      so.window_bp = static_cast<std::int64_t>(std::floor(o.ld_wind_kb * 1000 + 1e-9));
    }
    if (cmd.count("--ld-wind-snps")) {
      if (o.ld_wind_snps < 0) throw UsageError("--ld-wind-snps must not be negative");
      so.window_variants = o.ld_wind_snps;
    }
    if (cmd.count("--ld-wind-cm")) {
      if (!(o.ld_wind_cm >= 0)) throw UsageError("--ld-wind-cm must not be negative");
      so.window_cm = o.ld_wind_cm;
    }
    so.map = o.map;
    Query q = build_query(query_options(o.common), o.common);
    StatisticRun run(o.common, q, [&q, so] { return make_ld_scores(q, so); });
    IdLookup ids(q.store);
    const std::string note = run.statistic().take_rows().note;
    std::optional<Output> out;
    std::optional<TableWriter> w;
    if (primary_process()) {
      out.emplace(o.common.output);
      w.emplace(out->file(), o.common.format,
                std::vector<TableWriter::Column>{
                    {"chrom", false}, {"pos", true}, {"id", false}, {"pairs", true}, {"l2", true}});
    }
    Cells cells;  // chrom pos id pairs l2 (rows from any rank: global indices)
    auto emit = [&](const Table& t, const std::function<void(const Cells&)>& row) {
      const auto& v = t.column("variant").ints;
      for (std::int64_t r = 0; r < t.rows(); ++r) {
        cells.clear();
        table_cells(t, r, cells, 1);  // chrom, pos, pairs, l2
        cells.insert(cells.begin() + 2, ids(v[static_cast<std::size_t>(r)]));
        row(cells);
      }
    };
    if (!stream_rows(run, emit, [&](const Cells& c) { w->row(c); }))
      return;  // another MPI rank writes
    w->finish(note);
    out->commit();
    report_note(o.common, note);
    run.report();
    return;
  }
  for (const char* opt : {"--ld-wind-kb", "--ld-wind-snps", "--ld-wind-cm", "--map"})
    if (cmd.count(opt)) throw UsageError(std::string(opt) + " is an option of --ld-scores");
  LdDecayOptions d;
  d.measure = measure;
  d.edges = parse_bin_edges(o.decay, "--decay");
  if (cmd.count("--ld-window")) d.window_variants = o.ld.window_variants;
  if (!o.window_size.empty()) d.window_size = parse_bp_length(o.window_size, "--window-size");
  QueryOptions qo = query_options(o.common);
  // -P: one curve per population, all in one pass (a band per population); but the count
  // filters count each population's own samples, so with them one pass per population.
  d.per_population = !qo.pops_file.empty();
  std::vector<QueryOptions> passes{qo};
  if (d.per_population && count_filters(qo.filters)) {
    const auto [names, members] = population_members(qo);
    passes.assign(members.size(), qo);
    for (std::size_t p = 0; p < members.size(); ++p) passes[p].pops = members[p];
  }
  auto labels = std::make_shared<const std::vector<std::string>>();
  Table all;
  for (std::size_t p = 0; p < passes.size(); ++p) {
    Query q = build_query(passes[p], o.common);
    StatisticRun run(o.common, q, [&q, d] { return make_ld_decay(q, d); });
    if (!run.compute({})) continue;  // another MPI rank writes
    run.report();
    Table t = run.statistic().finish();
    if (passes.size() > 1) {  // population p alone: its pop column among every population's
      auto names = std::make_shared<std::vector<std::string>>(*labels);
      names->push_back(q.pops.names.at(0));
      labels = names;
      for (Column& c : all.columns)
        if (c.name == "pop") c.labels = labels;
      Column& pop = t.columns.at(0);
      pop.labels = labels;
      pop.ints.assign(pop.ints.size(), static_cast<std::int64_t>(p));
    }
    all.append(t);
  }
  if (primary_process()) write_table(o.common, all);
}

void add_ld(CLI::App& app) {
  struct Options {
    CommonOptions common;
    LdOptions ld;
    bool dprime = false, hap = false, geno = false;
    double window_kb = 1000;
    std::int64_t window_bp = -1;
    std::string snp, snps, snp_list;
    std::string decay, window_size;  // --decay BINS, --window-size
    bool ld_scores = false;
    double ld_wind_kb = -1, ld_wind_cm = -1;
    std::int64_t ld_wind_snps = -1;
    std::string map;
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
      "Output: chr_a bp_a snp_a chr_b bp_b snp_b n r2 [d] [dprime].\n"
      "--decay BINS writes no pairs: r2 summed in bins of bp distance (LD decay), every pair of "
      "a contig closer than the last edge (and, with --ld-window, at most N - 1 variants apart) "
      "whose r2 is defined; output [pop] [chrom window_start window_end] bin_start bin_end pairs "
      "sum_r2 mean_r2 (pairs and sum_r2 add up across regions and runs). --ld-scores writes LD "
      "scores as ldsc --l2: per variant 1 + the sum of r2 - (1 - r2)/(n - 2) over the other "
      "variants within --ld-wind-kb, --ld-wind-snps or --ld-wind-cm (with --map); output chrom "
      "pos id pairs l2. Both use "
      "--r2 (default) or --hap r2; docs/ld-decay.md has the definitions.");
  add_common_options(*cmd, o->common);
  add_population_option(*cmd, o->common);
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
  cmd->add_option("--decay", o->decay,
                  "Binned r2 instead of pairs: bin edges in bp distance, E0,E1,...,En (kb/Mb "
                  "suffixes allowed) or START:STOP:STEP; bin k is [Ek, Ek+1)");
  cmd->add_option("--window-size", o->window_size,
                  "--decay: one curve per window of this many bp (or kb/Mb) of each contig, "
                  "tiled from base 1; a pair counts in the window of its first variant");
  cmd->add_flag("--ld-scores,--l2", o->ld_scores, "LD scores (ldsc --l2) instead of pairs");
  cmd->add_option("--ld-wind-kb", o->ld_wind_kb, "--ld-scores: window of this many kb each side");
  cmd->add_option("--ld-wind-snps", o->ld_wind_snps,
                  "--ld-scores: window of this many variants each side");
  cmd->add_option("--ld-wind-cm", o->ld_wind_cm,
                  "--ld-scores: window of this many cM each side, on the --map");
  cmd->add_option("--map", o->map,
                  "--ld-wind-cm: genetic map, plink .map (chrom, id, cM, bp) or HapMap-style "
                  "table (header Chromosome Position(bp) Rate(cM/Mb) Map(cM)), as ihs --map");
  cmd->callback([o, cmd] {
    const bool decay = !o->decay.empty();
    if (decay || o->ld_scores) {
      run_ld_summary(*cmd, *o, decay);
      return;
    }
    for (const char* opt :
         {"--window-size", "--ld-wind-kb", "--ld-wind-snps", "--ld-wind-cm", "--map", "--pops"})
      if (cmd->count(opt)) throw UsageError(std::string(opt) + " needs --decay or --ld-scores");
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
    Query q = build_query(query_options(o->common), o->common);
    const LdOptions options = o->ld;
    StatisticRun run(o->common, q, [&q, options] { return make_ld(q, options); });
    IdLookup ids(q.store);
    std::optional<Output> out;
    std::optional<TableWriter> w;
    constexpr int kValues = 6;  // n, r2, ... after the variants' columns
    const Table empty = run.statistic().take_rows();
    const std::string note = empty.note;
    if (primary_process()) {
      out.emplace(o->common.output);
      std::vector<TableWriter::Column> cols{{"chr_a", false}, {"bp_a", true}, {"snp_a", false},
                                            {"chr_b", false}, {"bp_b", true}, {"snp_b", false}};
      for (auto& c : table_columns(empty, kValues)) cols.push_back(c);
      w.emplace(out->file(), o->common.format, cols);
    }
    // The rows of a table as cells, with the variants' IDs (rows from any rank: global indices).
    Cells cells;
    auto emit = [&](const Table& t, const std::function<void(const Cells&)>& row) {
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
        row(cells);
      }
    };
    if (!stream_rows(run, emit, [&](const Cells& c) { w->row(c); }))
      return;  // another MPI rank writes
    w->finish(note);
    out->commit();
    report_note(o->common, note);
    run.report();
  });
}

void add_ld_stats(CLI::App& app) {
  struct Options {
    CommonOptions common;
    std::string bins, r_bins, map, pop;
    bool genotypes = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "ld-stats",
      "moments.LD's two-locus statistics of one to four populations (the selected "
      "samples; or -P FILE: its populations, or those --pop names) from phased haplotypes (read "
      "as stored, as ld --hap), summed in bins of bp distance as "
      "moments.LD.Parsing.compute_ld_statistics sums them: per bin the pairs of sites on one "
      "contig, both polymorphic (among all the populations' haplotypes) and called at every "
      "haplotype, and the sums of Ragsdale & Gravel's unbiased estimators of D_i D_j (DD_i_j), "
      "D_i(1-2p_j)(1-2q_k) (Dz_i_j_k) and the pi2_i_j_k_l products of p(1-p) and q(1-q) terms, "
      "in moments.LD's names and order; H_i_j sums p_i(1-p_j)+p_j(1-p_i) over those sites. "
      "Multi-allelic sites count REF against the other alleles. --genotypes: the estimators "
      "from unphased diploid genotypes instead (each pair's 3x3 table of non-REF counts over the "
      "samples called at both sites; sites polymorphic among the called alleles, missing calls "
      "allowed). Output: bin_start bin_end pairs "
      "DD_0_0 ... sites H_0_0 ... (sites and H the same on every row); docs/ld-decay.md.\n\n"
      "Examples:\n"
      "  vczstats ld-stats data.vcz --bp-bins 0,100,1kb,10kb\n"
      "  vczstats ld-stats data.vcz --bp-bins 0,1kb,10kb --genotypes -P pops.tsv --pop YRI,CEU\n"
      "  vczstats ld-stats data.vcz --bp-bins 0:50kb:5kb -P pops.tsv --pop YRI,CEU\n"
      "  vczstats ld-stats data.vcz --bp-bins 0,1kb,10kb -P pops.tsv   # its 1-4 populations\n"
      "  vczstats ld-stats data.vcz --r-bins 0,1e-6,1e-5,1e-4 --map chr20.map");
  add_common_options(*cmd, o->common);
  add_population_option(*cmd, o->common);
  cmd->add_option("--pop", o->pop,
                  "With -P: the populations to compute for, NAME or NAME,NAME[,NAME[,NAME]] "
                  "(their indices 0, 1, 2, 3 in the statistics' names) [default: every "
                  "population of the file, at most four]");
  cmd->add_option("--bp-bins", o->bins,
                  "Bin edges in bp distance, E0,E1,...,En (kb/Mb suffixes allowed) or "
                  "START:STOP:STEP; bin k is [Ek, Ek+1)");
  cmd->add_option("--r-bins", o->r_bins,
                  "Instead of --bp-bins: bin edges of recombination distance r = |cM_b - cM_a| / "
                  "100 on --map (Morgans, as moments.LD's r_bins), R0,R1,...,Rn");
  cmd->add_option("--map", o->map,
                  "With --r-bins: a plink .map (chrom, id, cM, bp), a HapMap-style table "
                  "(header Chromosome Position(bp) Rate(cM/Mb) Map(cM), as the 1000 Genomes "
                  "genetic_map files) or one region's map without a chromosome column (header "
                  "pos Map(cM), as moments.LD's), linear between its positions (as ld "
                  "--ld-scores --map)");
  cmd->add_flag("--genotypes", o->genotypes,
                "Unphased diploid genotypes: Ragsdale & Gravel's estimators from two-locus "
                "genotype counts over the samples called at both sites (as moments.LD's "
                "use_genotypes=True), not from phased haplotypes");
  cmd->callback([o] {
    LdStatsOptions so;
    so.genotypes = o->genotypes;
    if (o->bins.empty() == o->r_bins.empty())
      throw UsageError("ld-stats: give --bp-bins or --r-bins (with --map)");
    if (!o->bins.empty()) so.edges = parse_bin_edges(o->bins, "--bp-bins");
    if (!o->r_bins.empty()) so.r_edges = parse_number_list(o->r_bins, "--r-bins");
    so.map = o->map;
    QueryOptions qo = query_options(o->common);
    if (!qo.pops_file.empty()) {
      const std::string file = qo.pops_file;
      const auto [names, members] = population_members(qo);
      const std::vector<std::string> chosen = o->pop.empty() ? names : vcz::split_list(o->pop);
      if (chosen.empty() || chosen.size() > 4)
        throw UsageError("ld-stats: one to four populations (" + file + " has " +
                         std::to_string(names.size()) + "; choose with --pop A,B)");
      qo.pops.clear();
      for (std::size_t k = 0; k < chosen.size(); ++k) {
        const auto it = std::find(names.begin(), names.end(), chosen[k]);
        if (it == names.end())
          throw UsageError("ld-stats --pop: '" + chosen[k] + "' is not a population of " + file);
        if (std::find(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(k), chosen[k]) !=
            chosen.begin() + static_cast<std::ptrdiff_t>(k))
          throw UsageError("ld-stats --pop: '" + chosen[k] + "' is named twice");
        const auto& m = members[static_cast<std::size_t>(it - names.begin())];
        qo.pops.insert(qo.pops.end(), m.begin(), m.end());
      }
    } else if (!o->pop.empty()) {
      throw UsageError("ld-stats: --pop needs -P");
    }
    Query q = build_query(qo, o->common);
    StatisticRun run(o->common, q, [&q, so] { return make_ld_stats(q, so); });
    if (!run.compute({})) return;  // another MPI rank writes
    write_table(o->common, run.statistic().finish());
    run.report();
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
    Query q = build_query(query_options(o->common), o->common);
    StatisticRun run(o->common, q, [&q, po] { return make_prune(q, po); });
    IdLookup ids(q.store);
    const bool table = !o->common.output.empty() || o->out_prefix.empty();
    const std::string note = run.statistic().take_rows().note;
    std::unique_ptr<Output> out, in_list, out_list;
    std::optional<TableWriter> w;
    if (primary_process()) {
      if (table) {
        out = std::make_unique<Output>(o->common.output);
        w.emplace(out->file(), o->common.format,
                  std::vector<TableWriter::Column>{
                      {"chrom", false}, {"pos", true}, {"id", false}, {"kept", true}});
      }
      if (!o->out_prefix.empty()) {
        in_list = std::make_unique<Output>(o->out_prefix + ".prune.in");
        out_list = std::make_unique<Output>(o->out_prefix + ".prune.out");
      }
    }
    // Rows travel as cells chrom pos id kept; the writing process adds them to the table and
    // the two lists.
    std::string in_text, out_text;
    auto emit = [&](const Table& t, const std::function<void(const Cells&)>& row) {
      const auto& v = t.column("variant").ints;
      const auto& c = t.column("chrom");
      const auto& pos = t.column("pos").ints;
      const auto& kept = t.column("kept").ints;
      for (std::int64_t r = 0; r < t.rows(); ++r) {
        const auto i = static_cast<std::size_t>(r);
        row({c.label(r), std::to_string(pos[i]), ids(v[i]), std::to_string(kept[i])});
      }
    };
    auto flush_lists = [&] {
      write(*in_list, in_text);
      write(*out_list, out_text);
      in_text.clear();
      out_text.clear();
    };
    const RowSink write = [&](const Cells& c) {
      if (w) w->row(c);
      if (!in_list) return;
      (c[3] == "1" ? in_text : out_text) += c[2] + "\n";
      if (in_text.size() + out_text.size() > (1u << 20)) flush_lists();
    };
    if (!stream_rows(run, emit, write)) return;  // another MPI rank writes
    if (w) {
      w->finish(note);
      out->commit();
    }
    if (in_list) {
      flush_lists();
      in_list->commit();
      out_list->commit();
    }
    report_note(o->common, note);
    run.report();
  });
}

}  // namespace

void add_ld_commands(CLI::App& app) {
  add_ld(app);
  add_ld_stats(app);
  add_prune(app);
}

}  // namespace vczstats::cli
