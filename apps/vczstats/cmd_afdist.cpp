// vczstats afdist: genotype probability distribution (bcftools +af-dist / zarr_afdist).

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/afdist.hpp"

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
    auto q = build_query(o->common);
    stats::AfdistOptions opt;
    opt.method = stats::parse_afdist_method(o->method);
    opt.bins = o->bins;
    RunStats rs;
    Output out(o->common.output);
    const auto r = run_afdist(q.store, q.plan, q.samples, opt, run_options(o->common), &rs);
    std::string text;
    if (o->common.format == "json") {
      nlohmann::json j;
      j["method"] = stats::to_string(r.method);
      j["sites"] = r.sites;
      for (std::size_t i = 0; i < r.counts.size(); ++i)
        j["bins"].push_back(
            {{"start", r.edges[i]}, {"stop", r.edges[i + 1]}, {"prob_dist", r.counts[i]}});
      text = j.dump(2) + "\n";
    } else {
      text = "start\tstop\tprob_dist\n";
      for (std::size_t i = 0; i < r.counts.size(); ++i)
        text += fmt::format("{}\t{}\t{}\n", r.edge_text(i), r.edge_text(i + 1), r.counts[i]);
    }
    write(out, text);
    out.commit();
    report_run(o->common, rs);
  });
}

}  // namespace vczstats::cli
