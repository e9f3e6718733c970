#pragma once
// How a plan is split across MPI ranks: contiguous shares of whole work units, balanced by what
// the units cost to read; and the site cursor each share begins at, computed in parallel (each
// rank summarises its own share, then the summaries of the shares before it are folded). No MPI
// here: the driver (driver.hpp) moves these values between ranks.

#include <cstdint>
#include <span>
#include <vector>

#include "vczstats/query.hpp"
#include "vczstats/windows.hpp"

namespace vczstats::dist {

/// @brief What each unit of @p q's plan costs: the stored (compressed) bytes of the
/// call_genotype chunks it reads (its variant chunk × the sample chunks of the selection; a
/// unit that is part of a chunk counts its share of rows), plus one per selected variant (the
/// light level's per-site work; it also spreads sites-only stores and absent chunks). Lists
/// the store's call_genotype keys once.
std::vector<std::int64_t> unit_weights(const Query& q);

/// @brief Split units into @p parts contiguous shares of nearly equal weight: returns parts + 1
/// unit indices, cuts[0] = 0, cuts[parts] = weights.size(), non-decreasing. Cut r falls on the
/// unit boundary nearest to r / parts of the total weight (a share may be empty when there are
/// fewer units than parts, or one unit outweighs the rest).
std::vector<std::int64_t> balanced_cuts(std::span<const std::int64_t> weights, int parts);

/// @brief What the sites of one share contribute to the site cursor of the shares after it.
struct SiteSpan {
  /// The cursor after the span as if the span began the stream: its last windowed site (group,
  /// position), the windowed sites of the run of that group at its end, its biallelic sites.
  stats::SiteCursor tail;
  /// Whether every windowed site of the span belongs to that group (one run: the count goes on
  /// from the previous span's when it ended in the same group).
  bool one_run = true;
};

/// @brief Summarise the selected sites of units [@p begin, @p end) of @p q's plan (their
/// positions, and their alleles when @p with_alleles: REF lengths for record overlap with
/// regions, biallelic sites). Without alleles, tail.biallelic stays 0 (statistics that use it,
/// the f-statistics, need alleles).
SiteSpan summarise_sites(const Query& q, std::int64_t begin, std::int64_t end, bool with_alleles);

/// @brief The cursor after @p span, which follows the sites summarised by @p before.
/// Folding the spans of shares 0..r-1 gives site_cursor(q, start of share r).
stats::SiteCursor advance(const stats::SiteCursor& before, const SiteSpan& span);

}  // namespace vczstats::dist
