// Whole-selection reductions over the allele counts: site frequency spectra and Patterson's
// f-statistics with block-jackknife standard errors. Definitions: tests/tools/POPGEN.md §6-7.

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/ancestral.hpp"
#include "vczstats/error.hpp"
#include "vczstats/variants.hpp"

namespace vczstats::cli {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<int> population_list(const vcz::Populations& pops, const std::string& spec,
                                 std::size_t expected, const char* option) {
  const auto names = vcz::split_list(spec);
  if (names.size() != expected)
    throw UsageError(fmt::format("{}: expected {} comma-separated populations, got '{}'", option,
                                 expected, spec));
  std::vector<int> out;
  for (const auto& n : names) out.push_back(population_index(pops, n, option));
  return out;
}

/// Runs the heavy pass and calls @p site(num_alleles, counts) for every selected site.
template <class Site>
RunStats for_each_site(const Query& q, const CommonOptions& o, const stats::AlleleCountsPass& pass,
                       Site&& site, vcz::AncestralAlleles* ancestral = nullptr) {
  const vcz::VariantReader reader(q.store, /*with_alleles=*/true, /*with_ids=*/false);
  const auto& layout = pass.layout();
  RunStats rs;
  run_allele_counts(
      q.store, q.plan, q.samples, pass, run_options(o), &rs,
      [&](std::int64_t, const vcz::WorkUnit& unit, std::span<const std::int32_t> counts) {
        const auto vb = reader.read(unit.begin, unit.end);
        const auto anc =
            ancestral ? ancestral->indices(vb) : std::vector<int>(vb.position.size(), 0);
        for (std::int64_t r = 0; r < unit.size(); ++r) {
          if (!unit.mask.empty() && !unit.mask[static_cast<std::size_t>(r)]) continue;
          site(vb.num_alleles(r), counts.data() + r * layout.site_width(),
               anc[static_cast<std::size_t>(r)]);
        }
      });
  return rs;
}

void add_sfs(CLI::App& app) {
  struct Options {
    CommonOptions common;
    bool folded = false, scaled = false;
    std::string joint;
    std::string ancestral = "ref";
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "sfs",
      "Site frequency spectrum per population: the number of sites with i derived alleles, "
      "i = 0..n (REF ancestral), over biallelic sites where every member of the population has "
      "a complete call of the store's ploidy (sites with missing calls are left out, not "
      "projected); one spectrum per n. --folded: minor allele counts. --joint A,B: the 2-D "
      "spectrum of two populations (with --folded: minor allele counts in each). --ancestral: REF "
      "(default), variant_AA or a FASTA. "
      "Output: population, n, derived (or folded), count.");
  add_common_options(*cmd, o->common);
  add_population_option(*cmd, o->common);
  cmd->add_flag("--folded", o->folded, "Fold the spectrum: min(i, n - i)");
  cmd->add_flag("--scaled", o->scaled,
                "Add a column scaled: count x i (unfolded) or count x i (n - i) / n (folded), "
                "constant in expectation under the standard neutral model");
  cmd->add_option("--joint", o->joint, "Joint spectrum of two populations A,B");
  cmd->add_option("--ancestral", o->ancestral,
                  "Ancestral allele: ref, aa (the store's variant_AA) or an ancestral FASTA; "
                  "sites where it is unknown are left out")
      ->capture_default_str();
  cmd->callback([o] {
    auto q = build_query(o->common);
    const stats::AlleleCountsPass pass = allele_counts_pass(q);
    const stats::CountsLayout& layout = pass.layout();
    const std::int64_t ploidy = q.store.has_genotypes() ? q.store.ploidy() : 2;
    // Derived count of population p at a site, or -1 when the site is not used for p.
    vcz::AncestralAlleles ancestral(q.store, o->ancestral);
    auto derived = [&](int num_alleles, const std::int32_t* site, int anc, int p) -> std::int64_t {
      if (num_alleles != 2 || anc < 0) return -1;
      const std::int32_t* c = site + std::int64_t{p} * layout.width();
      const std::int64_t n = c[layout.alleles + stats::kCalled];
      const std::int64_t members = q.pops.sizes[static_cast<std::size_t>(p)];
      if (c[layout.alleles + stats::kMissing] != 0 || n != members * ploidy) return -1;
      return n - c[anc];
    };
    Output out(o->common.output);
    RunStats rs;
    if (!o->joint.empty()) {
      const auto ab = population_list(q.pops, o->joint, 2, "--joint");
      const std::int64_t n1 = q.pops.sizes[static_cast<std::size_t>(ab[0])] * ploidy;
      const std::int64_t n2 = q.pops.sizes[static_cast<std::size_t>(ab[1])] * ploidy;
      std::vector<std::uint64_t> table(static_cast<std::size_t>((n1 + 1) * (n2 + 1)), 0);
      bool any = false;
      rs = for_each_site(
          q, o->common, pass,
          [&](int k, const std::int32_t* site, int anc) {
            const auto i = derived(k, site, anc, ab[0]), j = derived(k, site, anc, ab[1]);
            if (i < 0 || j < 0) return;
            ++table[static_cast<std::size_t>(i * (n2 + 1) + j)];
            any = true;
          },
          &ancestral);
      // Folded: minor allele counts in each population (scikit-allel's joint_sfs_folded).
      const std::int64_t m1 = o->folded ? n1 / 2 : n1, m2 = o->folded ? n2 / 2 : n2;
      std::vector<std::uint64_t> shown(static_cast<std::size_t>((m1 + 1) * (m2 + 1)), 0);
      for (std::int64_t i = 0; i <= n1; ++i)
        for (std::int64_t j = 0; j <= n2; ++j) {
          const std::int64_t a = o->folded ? std::min(i, n1 - i) : i;
          const std::int64_t b = o->folded ? std::min(j, n2 - j) : j;
          shown[static_cast<std::size_t>(a * (m2 + 1) + b)] +=
              table[static_cast<std::size_t>(i * (n2 + 1) + j)];
        }
      const std::string kind = o->folded ? "folded" : "derived";
      TableWriter t(out, o->common.format,
                    {{"pop1", false},
                     {"pop2", false},
                     {"n1"},
                     {"n2"},
                     {kind + "1"},
                     {kind + "2"},
                     {"count"}});
      for (std::int64_t i = 0; any && i <= m1; ++i)
        for (std::int64_t j = 0; j <= m2; ++j)
          t.row({q.pops.names[static_cast<std::size_t>(ab[0])],
                 q.pops.names[static_cast<std::size_t>(ab[1])], std::to_string(n1),
                 std::to_string(n2), std::to_string(i), std::to_string(j),
                 std::to_string(shown[static_cast<std::size_t>(i * (m2 + 1) + j)])});
      t.finish();
    } else {
      std::vector<std::vector<std::uint64_t>> spectra(static_cast<std::size_t>(layout.pops));
      std::vector<bool> used(spectra.size(), false);
      for (int p = 0; p < layout.pops; ++p)
        spectra[static_cast<std::size_t>(p)].assign(
            static_cast<std::size_t>(q.pops.sizes[static_cast<std::size_t>(p)] * ploidy + 1), 0);
      rs = for_each_site(
          q, o->common, pass,
          [&](int k, const std::int32_t* site, int anc) {
            for (int p = 0; p < layout.pops; ++p) {
              const auto i = derived(k, site, anc, p);
              if (i < 0) continue;
              ++spectra[static_cast<std::size_t>(p)][static_cast<std::size_t>(i)];
              used[static_cast<std::size_t>(p)] = true;
            }
          },
          &ancestral);
      std::vector<TableWriter::Column> columns{
          {"population", false}, {"n"}, {o->folded ? "folded" : "derived"}, {"count"}};
      if (o->scaled) columns.push_back({"scaled"});
      TableWriter t(out, o->common.format, columns);
      for (int p = 0; p < layout.pops; ++p) {
        if (!used[static_cast<std::size_t>(p)]) continue;
        auto s = spectra[static_cast<std::size_t>(p)];
        const auto n = static_cast<std::int64_t>(s.size()) - 1;
        if (o->folded) {
          std::vector<std::uint64_t> f(static_cast<std::size_t>(n / 2 + 1), 0);
          for (std::int64_t i = 0; i <= n; ++i)
            f[static_cast<std::size_t>(std::min(i, n - i))] += s[static_cast<std::size_t>(i)];
          s = f;
        }
        for (std::size_t i = 0; i < s.size(); ++i) {
          std::vector<std::string> row{q.pops.names[static_cast<std::size_t>(p)], std::to_string(n),
                                       std::to_string(i), std::to_string(s[i])};
          if (o->scaled) {
            const auto di = static_cast<double>(i), dn = static_cast<double>(n);
            const double k = o->folded ? di * (dn - di) / dn : di;
            row.push_back(format_number(static_cast<double>(s[i]) * k));
          }
          t.row(row);
        }
      }
      t.finish();
    }
    out.commit();
    report_run(o->common, rs);
  });
}

void add_fstats(CLI::App& app) {
  struct Options {
    CommonOptions common;
    std::string f2, f3, d;
    std::int64_t blocks = 0;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "fstats",
      "Patterson's f-statistics over biallelic sites (Patterson et al. 2012, unbiased "
      "estimators): f2(A,B); f3(C;A,B) normalised (f3*); D(A,B;C,D) (ABBA-BABA). Estimate = "
      "sum of numerators / sum of denominators over sites where both are defined; with "
      "--blocks N, a delete-one block jackknife over blocks of N consecutive biallelic sites "
      "gives the standard error and Z. Needs -P/--pops.");
  add_common_options(*cmd, o->common);
  add_population_option(*cmd, o->common);
  cmd->add_option("--f2", o->f2, "f2 of populations A,B");
  cmd->add_option("--f3", o->f3, "f3 of C,A,B: C the target, A and B the sources");
  cmd->add_option("--d", o->d, "Patterson's D of A,B,C,D");
  cmd->add_option("--blocks", o->blocks, "Jackknife block size in biallelic sites")
      ->check(CLI::PositiveNumber);
  cmd->callback([o] {
    const int given = !o->f2.empty() + !o->f3.empty() + !o->d.empty();
    if (given != 1) throw UsageError("fstats: give exactly one of --f2, --f3, --d");
    auto q = build_query(o->common);
    const std::string kind = !o->f2.empty() ? "f2" : !o->f3.empty() ? "f3" : "d";
    const std::string spec = kind == "f2" ? o->f2 : kind == "f3" ? o->f3 : o->d;
    const auto groups = population_list(q.pops, spec,
                                        kind == "f2"   ? 2
                                        : kind == "f3" ? 3
                                                       : 4,
                                        kind == "f2"   ? "--f2"
                                        : kind == "f3" ? "--f3"
                                                       : "--d");
    const stats::AlleleCountsPass pass = allele_counts_pass(q);
    const stats::CountsLayout& layout = pass.layout();
    std::int64_t n_sites = 0, n_defined = 0;
    double num_sum = 0, den_sum = 0, block_num = 0, block_den = 0;
    std::vector<double> blocks_num, blocks_den;
    const RunStats rs =
        for_each_site(q, o->common, pass, [&](int k, const std::int32_t* site, int) {
          if (k != 2) return;
          ++n_sites;
          double f[4], hhat[4];
          std::int64_t n[4];
          for (std::size_t g = 0; g < groups.size(); ++g) {
            const std::int32_t* c = site + std::int64_t{groups[g]} * layout.width();
            n[g] = c[layout.alleles + stats::kCalled];
            const auto dn = static_cast<double>(n[g]);
            f[g] = n[g] > 0 ? c[1] / dn : kNaN;
            hhat[g] = n[g] >= 2 ? static_cast<double>(c[0]) * c[1] / (dn * (dn - 1)) : kNaN;
          }
          double num = kNaN, den = kNaN;
          if (kind == "f2") {
            num = (f[0] - f[1]) * (f[0] - f[1]) - hhat[0] / static_cast<double>(n[0]) -
                  hhat[1] / static_cast<double>(n[1]);
            den = 1.0;
          } else if (kind == "f3") {
            num = (f[0] - f[1]) * (f[0] - f[2]) - hhat[0] / static_cast<double>(n[0]);
            den = 2 * hhat[0];
          } else {
            num = (f[0] - f[1]) * (f[2] - f[3]);
            den = (f[0] + f[1] - 2 * f[0] * f[1]) * (f[2] + f[3] - 2 * f[2] * f[3]);
          }
          if (!std::isnan(num) && !std::isnan(den)) {
            ++n_defined;
            num_sum += num;
            den_sum += den;
            block_num += num;
            block_den += den;
          }
          if (o->blocks > 0 && n_sites % o->blocks == 0) {
            blocks_num.push_back(block_num);
            blocks_den.push_back(block_den);
            block_num = block_den = 0;
          }
        });
    const double estimate = den_sum != 0 ? num_sum / den_sum : kNaN;
    double se = kNaN;
    const auto nb = blocks_num.size();
    if (nb >= 2) {  // delete-one jackknife over the complete blocks
      double tn = 0, td = 0;
      for (std::size_t j = 0; j < nb; ++j) {
        tn += blocks_num[j];
        td += blocks_den[j];
      }
      std::vector<double> v(nb);
      double mean = 0;
      for (std::size_t j = 0; j < nb; ++j)
        mean += v[j] = (tn - blocks_num[j]) / (td - blocks_den[j]);
      mean /= static_cast<double>(nb);
      double ss = 0;
      for (double x : v) ss += (x - mean) * (x - mean);
      se = std::sqrt(static_cast<double>(nb - 1) / static_cast<double>(nb) * ss);
    }
    Output out(o->common.output);
    TableWriter t(out, o->common.format,
                  {{"stat", false},
                   {"pops", false},
                   {"n_sites"},
                   {"n_defined"},
                   {"num_sum"},
                   {"den_sum"},
                   {"estimate"},
                   {"n_blocks"},
                   {"se"},
                   {"z"}});
    t.row({kind, spec, std::to_string(n_sites), std::to_string(n_defined), format_number(num_sum),
           format_number(den_sum), format_number(estimate), std::to_string(nb), format_number(se),
           format_number(!std::isnan(se) && se != 0 ? estimate / se : kNaN)});
    t.finish();
    out.commit();
    report_run(o->common, rs);
  });
}

}  // namespace

void add_spectra_commands(CLI::App& app) {
  add_sfs(app);
  add_fstats(app);
}

}  // namespace vczstats::cli
