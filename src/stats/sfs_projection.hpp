#pragma once
// Projected site frequency spectra (sfs --project, --project-preview); see sfs_projection.cpp.

#include <memory>

#include "vczstats/statistics.hpp"

namespace vczstats::stats {

/// What every sfs statistic reads: allele counts, the number of alleles, the ancestral allele.
inline PassNeeds sfs_pass_needs() {
  PassNeeds n;
  n.counts = true;
  n.alleles = true;
  n.ancestral = true;
  return n;
}

/// The projected spectra of @p options (project or preview set).
std::unique_ptr<Statistic> make_projected_sfs(const Query& q, const SfsOptions& options);

}  // namespace vczstats::stats
