// vczstats sample-stats: per-sample missingness and inbreeding coefficient (plink2 --missing
// .smiss and --het).

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/sample_stats.hpp"
#include "vczstats/variants.hpp"

namespace vczstats::cli {

void add_sample_stats_command(CLI::App& app) {
  auto o = std::make_shared<CommonOptions>();
  auto* cmd = app.add_subcommand(
      "sample-stats",
      "Per sample (as plink2 --missing and --het): missing_ct = selected sites where its "
      "genotype has a missing allele, obs_ct = sites where it has a genotype, f_miss; and over "
      "the sites where its population shows two or more alleles and it has a complete diploid "
      "call: het_obs_ct, o_hom (homozygous calls), e_hom (sum of sum_a p_a^2, p the allele "
      "frequencies among the population's complete diploid calls) and the inbreeding "
      "coefficient f = (o_hom - e_hom) / (het_obs_ct - e_hom). CPU only; reads the genotypes "
      "twice.");
  add_common_options(*cmd, *o);
  add_population_option(*cmd, *o);
  cmd->callback([o] {
    auto q = build_query(*o);
    RunStats rs;
    const auto sums = stats::run_sample_stats(
        q.store, q.plan, q.samples, q.pops, vcz::store_max_alleles(q.store), run_options(*o), &rs);
    // Report in store order, whatever order the populations gave the selection.
    std::vector<std::size_t> order(sums.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return q.samples.indices[a] < q.samples.indices[b];
    });
    Output out(o->output);
    TableWriter t(out, o->format,
                  {{"sample", false},
                   {"population", false},
                   {"missing_ct"},
                   {"obs_ct"},
                   {"f_miss"},
                   {"o_hom"},
                   {"e_hom"},
                   {"het_obs_ct"},
                   {"f"}});
    for (std::size_t k : order) {
      const auto& s = sums[k];
      const double den = static_cast<double>(s.het_sites) - s.e_hom;
      t.row({std::string(q.store.sample_ids()[q.samples.indices[k]]),
             q.pops.names[static_cast<std::size_t>(q.pops.of[k])], std::to_string(s.missing_ct),
             std::to_string(s.obs_ct),
             s.obs_ct
                 ? format_number(static_cast<double>(s.missing_ct) / static_cast<double>(s.obs_ct))
                 : "NA",
             std::to_string(s.o_hom), format_number(s.e_hom), std::to_string(s.het_sites),
             den != 0 ? format_number((static_cast<double>(s.o_hom) - s.e_hom) / den) : "NA"});
    }
    t.finish();
    out.commit();
    report_run(*o, rs);
  });
}

}  // namespace vczstats::cli
