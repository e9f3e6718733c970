// The count filters of a query (filters.hpp): one pass of the site family's allele counts over
// the plan, all selected samples as one population, whose failing rows are masked in the plan.

#include <optional>
#include <vector>

#include "stats/site_fields.hpp"
#include "vczstats/compute.hpp"
#include "vczstats/error.hpp"
#include "vczstats/filters.hpp"

namespace vczstats {
namespace {

/// Decides, unit by unit, which selected rows pass the count filters.
class CountFilterPass final : public Statistic {
 public:
  /// @p q: the query whose plan is filtered; its -i/-e expression is decided here when it reads
  /// counts (its other fields are read unit by unit from the store).
  CountFilterPass(const Query& q, std::size_t units)
      : f_(q.filters),
        keep_(units),
        expression_(q.expression_reads_counts() ? q.expression.get() : nullptr) {
    if (expression_) fields_.emplace(q.store, *expression_);
  }
  std::string name() const override { return "site filters"; }
  PassNeeds needs() const override {
    PassNeeds n;
    n.counts = true;
    return n;
  }
  void accumulate(const UnitData& u) override {
    auto& keep = keep_[static_cast<std::size_t>(u.index)];
    keep.assign(static_cast<std::size_t>(u.rows()), 0);
    const int a = u.layout.alleles;
    if (fields_) fields_->read(u.unit->begin, u.unit->end);
    for (std::int64_t r = 0; r < u.rows(); ++r) {
      if (!u.selected(r)) continue;
      const std::int32_t* c = u.site(r);
      const std::int64_t hom_ref = c[a + stats::kHomRef], het_ref = c[a + stats::kHetRef],
                         hom_other = c[a + stats::kHomAlt] + c[a + stats::kHetAlt],
                         missing = c[a + stats::kMissing];
      const std::int64_t genotypes = hom_ref + het_ref + hom_other + missing;
      bool pass =
          stats::passes_count_filters(f_, c, a, genotypes, missing, hom_ref, het_ref, hom_other);
      if (pass && expression_) {
        SiteFields site = fields_->site(r);
        site.allele_counts = std::span<const std::int32_t>(c, static_cast<std::size_t>(a));
        site.genotypes = genotypes;
        site.missing = missing;
        pass = expression_->keep(site);
      }
      keep[static_cast<std::size_t>(r)] = pass;
    }
  }
  void merge(Statistic&) override { throw Error("site filters: not merged"); }
  Table finish() override { return {}; }
  void save(ByteWriter&) const override { throw Error("site filters: not saved"); }
  void load(ByteReader&) override { throw Error("site filters: not loaded"); }
  bool keep(std::size_t unit, std::int64_t row) const {
    const auto& k = keep_[unit];
    return static_cast<std::size_t>(row) < k.size() && k[static_cast<std::size_t>(row)];
  }

 private:
  const VariantFilterOptions& f_;
  std::vector<std::vector<std::uint8_t>> keep_;
  const SiteExpression* expression_;
  std::optional<stats::SiteFieldReader> fields_;
};

}  // namespace

void apply_count_filters(Query& q, const RunOptions& run) {
  if (!q.count_filters_pending()) return;
  if (!q.store.has_genotypes())
    throw FormatError(q.store.path() + " has no call_genotype (a sites-only store): " +
                      q.filters.describe() + " need genotype calls");
  // The counts over every selected sample (one population), whatever -P groups.
  Query all = q;
  all.pops = vcz::single_population(q.samples);
  all.count_filters_applied = true;
  CountFilterPass pass(q, q.plan.units.size());
  RunOptions r = run;
  r.progress = {};
  Statistic* list[] = {&pass};
  (void)compute(all, list, r);
  filter_plan(q, [&pass](std::size_t u, std::int64_t row) { return pass.keep(u, row); });
  q.count_filters_applied = true;
  if (!all.plan.units.empty() && q.plan.units.empty())
    q.warnings.push_back("the site filters " + q.filters.describe() + " keep none of the " +
                         std::to_string(all.plan.selected_variants()) + " variants left of " +
                         q.store.path());
}

}  // namespace vczstats
