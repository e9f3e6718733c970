// The pair counts of sample_matrix.hpp as integer matrix products, the GPU's formulation (int8
// tensor-core GEMMs): each genotype code becomes a small integer in a few operand matrices
// (samples x variants), the products of operand pairs summed over variants give counts, and the
// counts follow from the products. Shared by the CUDA kernels and the host emulation that tests
// them against the CPU's popcounts.
//
//   H = [het]   O = [hom REF or hom ALT]   X = [hom ALT] - [hom REF]   N = [called]
//   HetHet = H.H   Ibs0 = (O.O - X.X) / 2   HomHet = O.H   HetHom = H.O
//   NonMissing = N.N, or O.O + O.H + H.O + H.H when those are computed anyway

#include <cstdint>

#include "stats/hd.hpp"
#include "vczstats/packed.hpp"
#include "vczstats/sample_matrix.hpp"

namespace vczstats::stats::pairs {

enum Operand : int { kH = 0, kO = 1, kX = 2, kN = 3, kOperands = 4 };

/// The value of a genotype code in an operand (0 for a variant the filter dropped).
VCZ_HD inline std::int8_t operand_value(int operand, int code, bool keep) {
  if (!keep) return 0;
  switch (operand) {
    case kH:
      return code == kPackedHet ? 1 : 0;
    case kO:
      return code == kPackedHomRef || code == kPackedHomAlt ? 1 : 0;
    case kX:
      return code == kPackedHomAlt ? 1 : code == kPackedHomRef ? -1 : 0;
    default:
      return code == kPackedMissing ? 0 : 1;
  }
}

/// The operand products: (left, right) summed over variants gives product(i, j) =
/// sum left[i] right[j].
enum Product : int { kHH = 0, kOO = 1, kXX = 2, kOH = 3, kHO = 4, kNN = 5, kProducts = 6 };
inline constexpr int kLeft[kProducts] = {kH, kO, kX, kO, kH, kN};
inline constexpr int kRight[kProducts] = {kH, kO, kX, kH, kO, kN};

/// Which products a request's counts need (bit p = Product p).
inline std::uint32_t products_for(std::uint32_t counts) {
  std::uint32_t p = 0;
  if (counts & pair_bit(PairCount::HetHet)) p |= 1u << kHH;
  if (counts & pair_bit(PairCount::Ibs0)) p |= (1u << kOO) | (1u << kXX);
  if (counts & pair_bit(PairCount::HomHet)) p |= 1u << kOH;
  if (counts & pair_bit(PairCount::HetHom)) p |= 1u << kHO;
  constexpr std::uint32_t sum = (1u << kOO) | (1u << kOH) | (1u << kHO) | (1u << kHH);
  if ((counts & pair_bit(PairCount::NonMissing)) && (p & sum) != sum) p |= 1u << kNN;
  return p;
}

/// Which operands the products read (bit o = Operand o).
inline std::uint32_t operands_for(std::uint32_t products) {
  std::uint32_t o = 0;
  for (int p = 0; p < kProducts; ++p)
    if (products & (1u << p)) o |= (1u << kLeft[p]) | (1u << kRight[p]);
  return o;
}

/// A pair count from the products of one cell (@p v: kProducts values, those not computed
/// unused).
VCZ_HD inline std::int32_t count_from_products(PairCount c, const std::int32_t* v,
                                               std::uint32_t products) {
  switch (c) {
    case PairCount::HetHet:
      return v[kHH];
    case PairCount::Ibs0:
      return (v[kOO] - v[kXX]) / 2;
    case PairCount::HomHet:
      return v[kOH];
    case PairCount::HetHom:
      return v[kHO];
    case PairCount::NonMissing:
      return (products & (1u << kNN)) ? v[kNN] : v[kOO] + v[kOH] + v[kHO] + v[kHH];
  }
  return 0;
}

}  // namespace vczstats::stats::pairs
