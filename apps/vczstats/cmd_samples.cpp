// vczstats sample-stats: per-sample missingness and inbreeding coefficient (plink2 --missing
// .smiss and --het), a library object (vczstats/statistics.hpp).

#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/statistics.hpp"

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
      "coefficient f = (o_hom - e_hom) / (het_obs_ct - e_hom). Reads the genotypes twice (the "
      "frequencies first); runs on the CPU or the GPU.");
  add_common_options(*cmd, *o);
  add_population_option(*cmd, *o);
  cmd->callback([o] {
    Query q = build_query(query_options(*o));
    run_table_command(*o, q, [&q] { return make_sample_stats(q); });
  });
}

}  // namespace vczstats::cli
