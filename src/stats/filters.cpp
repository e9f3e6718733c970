// Site filters (vczstats/filters.hpp): their description and checks, the decision of the count
// filters for one site, and the filters of the variant metadata, which mask the rows of a
// query's plan when it is built.

#include "vczstats/filters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "stats/site_fields.hpp"
#include "vczstats/error.hpp"
#include "vczstats/hardy.hpp"
#include "vczstats/query.hpp"
#include "vczstats/variants.hpp"

namespace vczstats {

namespace {
// plink2 compares frequencies and p-values with this relative tolerance (kSmallEpsilon), so a
// threshold equal to a ratio of counts keeps the site whatever the rounding.
constexpr double kEpsilon = 1.0 / static_cast<double>(std::int64_t{1} << 44);
}  // namespace

std::string VariantFilterOptions::describe() const {
  std::string s;
  auto add = [&s](const std::string& item) { s += (s.empty() ? "" : " ") + item; };
  if (snps_only) add("--snps-only");
  if (min_alleles > 0) add(fmt::format("--min-alleles {}", min_alleles));
  if (max_alleles > 0) add(fmt::format("--max-alleles {}", max_alleles));
  if (!apply_filters.empty()) {
    std::string list;
    for (const auto& f : apply_filters) list += (list.empty() ? "" : ",") + f;
    add("--apply-filters " + list);
  }
  if (min_qual) add(fmt::format("--min-qual {}", *min_qual));
  if (maf) add(fmt::format("--maf {}", *maf));
  if (max_maf) add(fmt::format("--max-maf {}", *max_maf));
  if (mac) add(fmt::format("--mac {}", *mac));
  if (max_mac) add(fmt::format("--max-mac {}", *max_mac));
  if (geno) add(fmt::format("--geno {}", *geno));
  if (hwe) add(fmt::format("--hwe {}{}", *hwe, hwe_midp ? " --hwe-midp" : ""));
  if (min_gq > 0) add(fmt::format("--min-gq {}", min_gq));
  if (min_dp > 0) add(fmt::format("--min-dp {}", min_dp));
  if (include) add(fmt::format("-i '{}'", *include));
  if (exclude) add(fmt::format("-e '{}'", *exclude));
  return s;
}

void VariantFilterOptions::validate() const {
  auto unit = [](const std::optional<double>& v, const char* name) {
    if (v && !(*v >= 0 && *v <= 1))
      throw UsageError(fmt::format("{} {}: expected a value between 0 and 1", name, *v));
  };
  unit(maf, "--maf");
  unit(max_maf, "--max-maf");
  unit(geno, "--geno");
  unit(hwe, "--hwe");
  if (mac && *mac < 0) throw UsageError(fmt::format("--mac {}: expected a count >= 0", *mac));
  if (max_mac && *max_mac < 0)
    throw UsageError(fmt::format("--max-mac {}: expected a count >= 0", *max_mac));
  if (min_alleles < 0 || max_alleles < 0)
    throw UsageError("--min-alleles/--max-alleles: expected a number of alleles >= 1");
  if (max_alleles > 0 && min_alleles > max_alleles)
    throw UsageError(
        fmt::format("--min-alleles {} exceeds --max-alleles {}", min_alleles, max_alleles));
  if (min_gq < 0 || min_dp < 0) throw UsageError("--min-gq/--min-dp: expected a value >= 0");
  if (hwe_midp && !hwe) throw UsageError("--hwe-midp needs --hwe P");
  if (min_qual && std::isnan(*min_qual)) throw UsageError("--min-qual: expected a number");
  for (const auto& f : apply_filters)
    if (f.empty()) throw UsageError("--apply-filters: an empty filter name");
  if (include && exclude)
    throw UsageError("-i/--include and -e/--exclude: give one of them, not both (as bcftools)");
}

namespace stats {

namespace {

/// Whether hwe_exact_p(het, hom1, hom2, midp) is surely at least @p at_least (false: not sure),
/// in steps of the order of the spread of the heterozygote count rather than of the sample size:
/// the probability of the observed count over an upper bound of the total. The probabilities
/// of the heterozygote counts are log-concave around the mode (the step ratios fall away from
/// it), so once a step ratio r is below one the rest of that tail is at most the last term times
/// r / (1 - r). The margin covers the rounding of both computations many times over, so a site
/// it passes is one hwe_exact_p passes too (the filter's decisions do not change).
bool hwe_surely_at_least(std::int64_t het, std::int64_t hom1, std::int64_t hom2, bool midp,
                         double at_least) {
  const std::int64_t n = het + hom1 + hom2;
  if (n <= 0) return false;
  const std::int64_t rare = 2 * std::min(hom1, hom2) + het;
  std::int64_t mode = rare * (2 * n - rare) / (2 * n);  // as hwe_exact_p
  if ((mode & 1) != (rare & 1)) ++mode;
  double total = 1.0, observed = het == mode ? 1.0 : 0.0;
  {  // fewer heterozygotes
    std::int64_t h = mode, rh = (rare - mode) / 2, ch = n - mode - rh;
    for (double t = 1.0; h > 1; h -= 2) {
      const double r = static_cast<double>(h) * static_cast<double>(h - 1) /
                       (4.0 * static_cast<double>(rh + 1) * static_cast<double>(ch + 1));
      t *= r;
      total += t;
      if (h - 2 == het) observed = t;
      ++rh;
      ++ch;
      if (h - 2 <= het && r < 0.5) {  // past the observed count (or it is on the other side)
        total += t * r / (1 - r);
        break;
      }
    }
  }
  {  // more heterozygotes
    std::int64_t h = mode, rh = (rare - mode) / 2, ch = n - mode - rh;
    for (double t = 1.0; h <= rare - 2; h += 2) {
      const double r = 4.0 * static_cast<double>(rh) * static_cast<double>(ch) /
                       (static_cast<double>(h + 2) * static_cast<double>(h + 1));
      t *= r;
      total += t;
      if (h + 2 == het) observed = t;
      --rh;
      --ch;
      if (h + 2 >= het && r < 0.5) {
        total += t * r / (1 - r);
        break;
      }
    }
  }
  return observed * (midp ? 0.5 : 1.0) / total >= at_least * (1 + 1e-9);
}

/// Whether hwe_exact_p(het, hom1, hom2, midp) is surely below @p below (false: not sure), in
/// O(log n) operations, for the sites far out in a tail (a Wahlund deficit of heterozygotes puts
/// many there). Terms are relative to the mode's, from log-factorials (lgamma). The observed
/// side's terms from het outwards are at most a geometric series (the step ratios fall away from
/// the mode). On the other side, a binary search finds the last count surely more likely than
/// het: the terms that count (no more likely than het's) lie beyond it, at most het's term times
/// a geometric series of the next step's ratio. The distribution is log-concave (the step ratios
/// fall for every count), so between the mode and any count its terms are at least the geometric
/// interpolation of theirs: that bounds the total from below. The margins cover lgamma's rounding
/// up to 10^7 samples (beyond: not sure).
bool hwe_surely_below(std::int64_t het, std::int64_t hom1, std::int64_t hom2, double below) {
  const std::int64_t n = het + hom1 + hom2;
  if (n <= 0 || n > 10'000'000) return false;
  const std::int64_t rare = 2 * std::min(hom1, hom2) + het;
  std::int64_t mode = rare * (2 * n - rare) / (2 * n);  // as hwe_exact_p
  if ((mode & 1) != (rare & 1)) ++mode;
  if (het == mode) return false;
  const auto log_term = [&](std::int64_t h) {  // log P(h) less a constant
    const std::int64_t rh = (rare - h) / 2, ch = n - h - rh;
    return static_cast<double>(h) * std::log(2.0) - std::lgamma(static_cast<double>(h + 1)) -
           std::lgamma(static_cast<double>(rh + 1)) - std::lgamma(static_cast<double>(ch + 1));
  };
  // The step ratio from h one count further from the mode (0: no further count).
  const auto ratio_out = [&](std::int64_t h) {
    const double rh = static_cast<double>((rare - h) / 2), ch = static_cast<double>(n - h) - rh,
                 x = static_cast<double>(h);
    if (h < mode) return h >= 2 ? x * (x - 1) / (4.0 * (rh + 1) * (ch + 1)) : 0.0;
    return h <= rare - 2 ? 4.0 * rh * ch / ((x + 2) * (x + 1)) : 0.0;
  };
  const double log_mode = log_term(mode), log_observed = log_term(het) - log_mode;
  const double observed = std::exp(log_observed), r = ratio_out(het);
  if (!(r < 1)) return false;
  // The other side: counts mode + step * k, k = 0 .. last; k = 0 (the mode) is at least as
  // likely as het. Find the last k surely more likely than het (by far more than the rounding).
  const std::int64_t step = het < mode ? 2 : -2;
  const std::int64_t last = het < mode ? (rare - mode) / 2 : mode / 2;
  const double margin = 1e-6;
  std::int64_t lo = 0, hi = last;  // log_term(lo) surely above; find the largest such k
  if (!(0 > log_observed + margin)) hi = lo = -1;  // not even the mode
  while (lo >= 0 && lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (log_term(mode + step * mid) - log_mode > log_observed + margin)
      lo = mid;
    else
      hi = mid - 1;
  }
  double other;  // the other side's terms no more likely than het's, over het's term
  if (lo < 0) {
    other = static_cast<double>(last + 1);  // every term at most het's
  } else if (lo == last) {
    other = 0;  // none
  } else {
    const double r0 = ratio_out(mode + step * (lo + 1));
    other = r0 < 1 ? 1 / (1 - r0) : static_cast<double>(last - lo);
  }
  // The total over the mode's term: the mode, then k = 1 .. K steps towards het (het's term at
  // K) and k = 1 .. lo the other way (above het's there), each term at least observed^(k / K).
  const auto interpolated = [&](std::int64_t steps) {  // sum of q^k, k = 1 .. steps
    if (steps <= 0) return 0.0;
    const double q = std::exp(log_observed / static_cast<double>(steps));
    return q < 1 ? q * (1 - std::pow(q, static_cast<double>(steps))) / (1 - q) : 0.0;
  };
  const double total =
      1 + interpolated((het < mode ? mode - het : het - mode) / 2) + interpolated(lo);
  return observed * (1 / (1 - r) + other * (1 + 1e-7)) * (1 + margin) <
         below * total * (1 - margin);
}

}  // namespace

bool passes_count_filters(const VariantFilterOptions& f, const std::int32_t* allele_counts,
                          int alleles, std::int64_t genotypes, std::int64_t missing,
                          std::int64_t hom_ref, std::int64_t het_ref, std::int64_t hom_other) {
  if (f.maf || f.max_maf || f.mac || f.max_mac) {
    std::int64_t total = 0, major = 0;
    for (int k = 0; k < alleles; ++k) {
      total += allele_counts[k];
      major = std::max<std::int64_t>(major, allele_counts[k]);
    }
    // plink2: the minor allele frequency of a multi-allelic site is 1 - that of the major
    // allele; a site without a called allele has none (0).
    const std::int64_t nonmajor = total - major;
    const double minor = total > 0 ? static_cast<double>(nonmajor) / static_cast<double>(total) : 0;
    if (f.maf && *f.maf > 0 && !(minor >= *f.maf * (1 - kEpsilon))) return false;
    if (f.max_maf && !(minor <= *f.max_maf * (1 + kEpsilon))) return false;
    if (f.mac && nonmajor < *f.mac) return false;
    if (f.max_mac && nonmajor > *f.max_mac) return false;
  }
  if (f.geno && genotypes > 0 &&
      static_cast<double>(missing) > *f.geno * (1 + kEpsilon) * static_cast<double>(genotypes))
    return false;
  if (f.hwe) {
    const double below = *f.hwe * (1 - kEpsilon);
    if (hwe_surely_below(het_ref, hom_ref, hom_other, below)) return false;
    if (!hwe_surely_at_least(het_ref, hom_ref, hom_other, f.hwe_midp, *f.hwe) &&
        hwe_exact_p(het_ref, hom_ref, hom_other, f.hwe_midp) < below)
      return false;
  }
  return true;
}

}  // namespace stats

void detail::apply_metadata_filters(Query& q) {
  const VariantFilterOptions& f = q.filters;
  const std::string& path = q.store.path();
  const bool by_alleles = f.snps_only || f.min_alleles > 0 || f.max_alleles > 0;
  if (by_alleles && !q.store.array("variant_allele"))
    throw FormatError(path +
                      ": --snps-only, --min-alleles and --max-alleles need variant_allele, which "
                      "the store lacks");
  std::optional<zarr::Array> filters, quality;
  std::vector<std::int64_t> wanted;  // columns of variant_filter
  bool want_unfiltered = false;      // "." : no filter set
  std::int64_t filter_columns = 0;
  if (!f.apply_filters.empty()) {
    filters = q.store.variant_array("variant_filter", 2, vcz::ElementKind::Integer);
    const auto ids = q.store.array("filter_id");
    if (!filters || !ids)
      throw FormatError(path +
                        ": --apply-filters needs variant_filter and filter_id, which the store "
                        "lacks");
    filter_columns = filters->shape()[1];
    const std::vector<std::int64_t> s{0}, e{ids->shape()[0]};
    const auto names = ids->read_region_strings(s, e);
    for (const auto& name : f.apply_filters) {
      if (name == ".") {
        want_unfiltered = true;
        continue;
      }
      const auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) {
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        throw UsageError("--apply-filters: filter '" + name + "' is not in " + path +
                         "'s filter_id (" + known + ")");
      }
      if (it - names.begin() < filter_columns) wanted.push_back(it - names.begin());
    }
  }
  if (f.min_qual) {
    quality = q.store.variant_array("variant_quality", 1, vcz::ElementKind::Number);
    if (!quality)
      throw FormatError(path + ": --min-qual needs variant_quality, which the store lacks");
  }
  // An -i/-e expression that reads no genotype counts is decided here too.
  std::optional<stats::SiteFieldReader> fields;
  if (q.expression && !q.expression_reads_counts()) fields.emplace(q.store, *q.expression);
  const vcz::VariantReader reader(q.store, by_alleles, /*with_ids=*/false);
  std::size_t current = static_cast<std::size_t>(-1);
  vcz::VariantBlock block;
  std::vector<std::uint8_t> filter_flags;
  std::vector<double> qual;
  filter_plan(q, [&](std::size_t u, std::int64_t r) {
    if (u != current) {  // read the unit's fields once
      current = u;
      const vcz::WorkUnit& unit = q.plan.units[u];
      if (by_alleles) block = reader.read(unit.begin, unit.end);
      if (fields) fields->read(unit.begin, unit.end);
      if (filters) {
        const std::vector<std::int64_t> s{unit.begin, 0}, e{unit.end, filter_columns};
        filter_flags = filters->read_region_as<std::uint8_t>(s, e);
      }
      if (quality) {
        const std::vector<std::int64_t> s{unit.begin}, e{unit.end};
        qual = quality->read_region_as<double>(s, e);
      }
    }
    if (by_alleles) {
      const int n = block.num_alleles(r);
      if (f.min_alleles > 0 && n < f.min_alleles) return false;
      if (f.max_alleles > 0 && n > f.max_alleles) return false;
      if (f.snps_only)
        for (int k = 0; k < n; ++k)
          if (block.allele(r, k).size() != 1) return false;
    }
    if (filters) {
      const std::uint8_t* row = filter_flags.data() + r * filter_columns;
      bool any_set = false, hit = false;
      for (std::int64_t c = 0; c < filter_columns; ++c) any_set = any_set || row[c];
      for (const std::int64_t c : wanted) hit = hit || row[c];
      if (!(hit || (want_unfiltered && !any_set))) return false;
    }
    // A missing QUAL (NaN) fails, as in bcftools -i 'QUAL>=x' and plink2 --var-min-qual.
    if (quality && !(qual[static_cast<std::size_t>(r)] >= *f.min_qual)) return false;
    if (fields && !q.expression->keep(fields->site(r))) return false;
    return true;
  });
}

}  // namespace vczstats
