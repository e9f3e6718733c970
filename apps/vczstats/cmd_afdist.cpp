// vczstats afdist: genotype probability distribution (bcftools +af-dist / zarr_afdist), a
// library object (vczstats/statistics.hpp).

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "statistic_run.hpp"
#include "vczstats/statistics.hpp"

namespace vczstats::cli {

void add_afdist_command(CLI::App& app) {
  struct Options {
    CommonOptions common;
    std::string method = "bcftools";
    int bins = 10;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "afdist",
      "Distribution of genotype probabilities given the allele frequency: for each site with "
      "ALT-1 frequency af, het calls add to the bin of 2*af*(1-af) and hom-alt calls to the bin "
      "of af^2. Output: start, stop, prob_dist (one row per bin).");
  add_common_options(*cmd, o->common);
  cmd->add_option("--method", o->method,
                  "bcftools: exactly `bcftools +fill-tags -- -t AF | bcftools +af-dist` "
                  "(float32 AF of called alleles; calls with a missing allele skipped). "
                  "zarr-afdist: the VCF Zarr publication's definition (diploid; missing "
                  "alleles count as non-ref; bins linspace(0,1,N+1), last edge +0.0125)")
      ->check(CLI::IsMember({"bcftools", "zarr-afdist"}))
      ->capture_default_str();
  cmd->add_option("--bins", o->bins, "Number of equal-width bins on [0, 1]")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->callback([o] {
    Query q = build_query(query_options(o->common));
    stats::AfdistOptions opt;
    opt.method = stats::parse_afdist_method(o->method);
    opt.bins = o->bins;
    StatisticRun run(o->common, q, [&q, &opt] { return make_afdist(q, opt); });
    if (!run.compute({})) return;  // another MPI rank writes
    auto& s = dynamic_cast<AfdistStatistic&>(run.statistic());
    if (o->common.format == "json") {
      const auto r = s.result();
      nlohmann::json j;
      j["method"] = stats::to_string(r.method);
      j["sites"] = r.sites;
      for (std::size_t i = 0; i < r.counts.size(); ++i)
        j["bins"].push_back(
            {{"start", r.edges[i]}, {"stop", r.edges[i + 1]}, {"prob_dist", r.counts[i]}});
      Output out(o->common.output);
      write(out, j.dump(2) + "\n");
      out.commit();
    } else {
      write_table(o->common, s.finish());
    }
    run.report();
  });
}

}  // namespace vczstats::cli
