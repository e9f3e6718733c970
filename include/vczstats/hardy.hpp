#pragma once
/// @file hardy.hpp
/// @brief Hardy–Weinberg exact test (Wigginton, Cutler and Abecasis 2005), as plink2 --hardy.

#include <cstdint>

namespace vczstats::stats {

/// @brief Two-sided exact test p-value for @p het heterozygotes and @p hom1 / @p hom2 homozygotes
/// of a biallelic site: the total probability, under HWE given the allele counts, of every
/// heterozygote count no more likely than the observed one (ties within a relative 1e-7
/// included). 1 when there are no genotypes. With @p midp, plink2's mid-p version: half the
/// probability of the observed count is left out.
double hwe_exact_p(std::int64_t het, std::int64_t hom1, std::int64_t hom2, bool midp = false);

}  // namespace vczstats::stats
