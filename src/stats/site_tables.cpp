// Per-site tables over the allele counts: freq, geno-counts, hardy, missing (plink2's
// definitions, POPGEN.md §8). One row per selected site and population, final after each unit.

#include <limits>

#include "stats/statistic_support.hpp"
#include "vczstats/hardy.hpp"
#include "vczstats/statistics.hpp"

namespace vczstats {
namespace {

using stats::detail::ratio;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class SiteTableStatistic final : public Statistic {
 public:
  SiteTableStatistic(const Query& q, SiteTable kind) : kind_(kind) {
    using K = Column::Kind;
    rows_.add("variant", K::Int);
    rows_.add("contig", K::Label, stats::detail::contig_labels(q));
    rows_.add("pos", K::Int);
    rows_.add("population", K::Label, stats::detail::population_labels(q));
    switch (kind) {
      case SiteTable::Freq:
        rows_.add("alt_cts", K::IntList);
        rows_.add("obs_ct", K::Int);
        rows_.add("alt_freqs", K::FloatList);
        break;
      case SiteTable::GenoCounts:
        for (const char* c : {"hom_ref_ct", "het_ref_alt_ct", "two_alt_geno_ct", "hom_alt_ct",
                              "het_alt_ct", "missing_ct"})
          rows_.add(c, K::Int);
        break;
      case SiteTable::Hardy:
        for (const char* c : {"hom_ref_ct", "het_ref_ct", "two_alt_ct"}) rows_.add(c, K::Int);
        for (const char* c : {"o_het", "e_het", "p_hwe", "f"}) rows_.add(c, K::Float);
        break;
      case SiteTable::Missing:
        rows_.add("missing_ct", K::Int);
        rows_.add("obs_ct", K::Int);
        rows_.add("f_miss", K::Float);
        break;
    }
  }

  std::string name() const override {
    switch (kind_) {
      case SiteTable::Freq:
        return "freq";
      case SiteTable::GenoCounts:
        return "geno-counts";
      case SiteTable::Hardy:
        return "hardy";
      case SiteTable::Missing:
        return "missing";
    }
    return "site table";
  }

  PassNeeds needs() const override {
    PassNeeds n;
    n.counts = true;
    n.positions = true;
    n.alleles = kind_ == SiteTable::Freq;
    return n;
  }

  void accumulate(const UnitData& u) override {
    const auto& layout = u.layout;
    for (std::int64_t r = 0; r < u.rows(); ++r) {
      if (!u.selected(r)) continue;
      for (int p = 0; p < layout.pops; ++p) {
        const std::int32_t* c = u.site(r, p);
        auto at = [&](int column) -> std::int64_t { return c[layout.alleles + column]; };
        int col = 0;
        rows_.push_int(col++, u.unit->begin + r);
        rows_.push_int(col++, u.variants->contig[static_cast<std::size_t>(r)]);
        rows_.push_int(col++, u.variants->position[static_cast<std::size_t>(r)]);
        rows_.push_int(col++, p);
        switch (kind_) {
          case SiteTable::Freq: {
            const int n = std::max(2, u.variants->num_alleles(r));
            const std::int64_t obs = at(stats::kCalled);
            for (int k = 1; k < n && k < layout.alleles; ++k) {
              rows_.push_int(col, c[k]);
              rows_.push_float(
                  col + 2, obs > 0 ? static_cast<double>(c[k]) / static_cast<double>(obs) : kNaN);
            }
            rows_.end_list(col);
            rows_.push_int(col + 1, obs);
            rows_.end_list(col + 2);
            break;
          }
          case SiteTable::GenoCounts:
            rows_.push_int(col++, at(stats::kHomRef));
            rows_.push_int(col++, at(stats::kHetRef));
            rows_.push_int(col++, at(stats::kHomAlt) + at(stats::kHetAlt));
            rows_.push_int(col++, at(stats::kHomAlt));
            rows_.push_int(col++, at(stats::kHetAlt));
            rows_.push_int(col++, at(stats::kMissing));
            break;
          case SiteTable::Hardy: {
            const std::int64_t hom1 = at(stats::kHomRef), het = at(stats::kHetRef),
                               hom2 = at(stats::kHomAlt) + at(stats::kHetAlt);
            const std::int64_t n = hom1 + het + hom2;
            rows_.push_int(col++, hom1);
            rows_.push_int(col++, het);
            rows_.push_int(col++, hom2);
            rows_.push_float(col++,
                             n > 0 ? static_cast<double>(het) / static_cast<double>(n) : kNaN);
            const double pr =
                n > 0 ? static_cast<double>(2 * hom1 + het) / static_cast<double>(2 * n) : 0.0;
            const double e_het = 2 * pr * (1 - pr);
            rows_.push_float(col++, n > 0 ? e_het : kNaN);
            rows_.push_float(col++, n > 0 ? stats::hwe_exact_p(het, hom1, hom2) : kNaN);
            // Inbreeding coefficient of the site: 1 - observed / expected heterozygosity.
            rows_.push_float(
                col++,
                e_het > 0 ? 1.0 - static_cast<double>(het) / static_cast<double>(n) / e_het : kNaN);
            break;
          }
          case SiteTable::Missing: {
            const std::int64_t miss = at(stats::kMissing);
            const std::int64_t obs = miss + at(stats::kHomRef) + at(stats::kHetRef) +
                                     at(stats::kHomAlt) + at(stats::kHetAlt);
            rows_.push_int(col++, miss);
            rows_.push_int(col++, obs);
            rows_.push_float(col++,
                             obs > 0 ? static_cast<double>(miss) / static_cast<double>(obs) : kNaN);
            break;
          }
        }
      }
    }
  }

  Table take_rows() override {
    Table out = std::move(rows_);
    rows_ = out.empty_like();
    return out;
  }

  void merge(Statistic& later) override {
    auto& o = stats::detail::same_statistic(*this, later);
    rows_.append(o.rows_);
    o.rows_ = o.rows_.empty_like();
  }

  Table finish() override { return take_rows(); }
  void save(ByteWriter& w) const override {
    w.put_string(name());
    rows_.save(w);
  }
  void load(ByteReader& r) override {
    r.expect(name());
    rows_.load(r);
  }

 private:
  SiteTable kind_;
  Table rows_;
};

}  // namespace

std::unique_ptr<Statistic> make_site_table(const Query& q, SiteTable table) {
  return std::make_unique<SiteTableStatistic>(q, table);
}

}  // namespace vczstats

namespace vczstats::stats::detail {
double ratio(double a, double b) {
  return b != 0 ? a / b : std::numeric_limits<double>::quiet_NaN();
}
}  // namespace vczstats::stats::detail
