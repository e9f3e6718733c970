#pragma once
// moments.LD's per-pair numerators for ld-stats of two to four populations from phased
// haplotype counts (stats/ld_moments.cpp has the estimators' derivation): each population's
// unbiased factors of a pair as integer numerators over its falling factorials, the basis'
// statistics (DD_i_j, Dz_i_j_k, pi2_i_j_k_l in moments.LD's order) as sums of products of them,
// and a pair's bin. One code for the CPU (the reducer of the band's counts and the walk over the
// band's pairs, ld_moments.cpp) and the GPU band's reduction kernel
// (backend/cuda/pair_band_kernels.cu): host and device functions, no std containers. The
// numerators are exact integers (64 bits below kNarrowHaplotypes haplotypes a population, else
// 128 on the host), so any order of the pairs gives the same sums.

#include <cstdint>

#if defined(__CUDACC__)
#define VCZ_LDM_HD __host__ __device__ __forceinline__
#else
#define VCZ_LDM_HD [[gnu::always_inline]] inline
#endif
// Loops unrolled over the basis (the CPU's table is a constant: its products become straight
// code); nvcc's host pass knows neither pragma, and its host functions here are not used.
#if defined(__CUDA_ARCH__) || (defined(__clang__) && !defined(__CUDACC__))
#define VCZ_LDM_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define VCZ_LDM_UNROLL
#else
#define VCZ_LDM_UNROLL _Pragma("GCC unroll 128")
#endif

namespace vczstats::stats::moments {

constexpr int kMaxPops = 4;  // as moments.LD

/// A population's factors of a pair, each an integer numerator over (n)_k (k the distinct
/// haplotypes drawn; n the population's haplotypes): F[S] for S < 16 the ordered draws of the
/// set S of an A haplotype (bit 0), an a (bit 1), a B (bit 2) and a b (bit 3), all distinct,
/// over (n)_|S| (F[0] = 1); then these (A, B: the REF alleles; p, q their frequencies):
enum Factor : std::uint8_t {
  kD = 16,  ///< D, over (n)_2
  kDzp,     ///< D (1 - 2p), over (n)_3
  kDzq,     ///< D (1 - 2q), over (n)_3
  kZp,      ///< 1 - 2p, over (n)_1
  kZq,      ///< 1 - 2q, over (n)_1
  kZz,      ///< (1 - 2p)(1 - 2q), over (n)_2
  kDd,      ///< D², over (n)_4
  kDz,      ///< D (1 - 2p)(1 - 2q), over (n)_4
  kFactors
};

/// The basis of four populations: 10 DD, 40 Dz, 55 pi2.
constexpr int kMaxStats = 105;
constexpr int kMaxTerms = 4;

/// coef times the product over populations q of F_q[f[q]] (f[q] = 0: the factor 1).
struct Term {
  std::int8_t coef = 0;
  std::uint8_t f[kMaxPops] = {};
};
/// One statistic of the basis: a sum of terms; kind 0 DD, 1 Dz, 2 pi2 and its populations.
struct Stat {
  std::uint8_t terms = 0;
  std::uint8_t kind = 0;
  std::uint8_t pops[4] = {};
  Term t[kMaxTerms] = {};
};
/// The basis of @p pops populations as sums of products of population factors (trivially
/// copyable: it goes to the device as it is).
struct BasisTable {
  int pops = 0;
  int stats = 0;
  std::uint32_t need[kMaxPops] = {};  ///< per population: bit k set when F[k] is used
  Stat s[kMaxStats] = {};
};

/// moments.LD's basis (moments.LD.Util.ld_names) of @p pops populations: DD_i_j (i <= j),
/// Dz_i_j_k (j <= k), pi2_i_j_k_l (i <= j, k <= l, (i, j) <= (k, l)). pi2_i_j_k_l = 1/4
/// [p_i (1 - p_j) + p_j (1 - p_i)] [q_k (1 - q_l) + q_l (1 - q_k)]: four products, each drawing
/// an A haplotype, an a, a B and a b from the populations named (equal products merged: their
/// numerators sum to 4 times the estimator, the 4 is in the denominator).
constexpr BasisTable basis_table(int pops) {
  BasisTable b{};
  b.pops = pops;
  auto push = [&b](std::uint8_t kind, int i, int j, int k, int l) -> Stat& {
    Stat& s = b.s[b.stats++];
    s.kind = kind;
    s.pops[0] = static_cast<std::uint8_t>(i);
    s.pops[1] = static_cast<std::uint8_t>(j);
    s.pops[2] = static_cast<std::uint8_t>(k);
    s.pops[3] = static_cast<std::uint8_t>(l);
    return s;
  };
  auto one = [](Stat& s) -> Term& {
    s.terms = 1;
    s.t[0].coef = 1;
    return s.t[0];
  };
  for (int i = 0; i < pops; ++i)
    for (int j = i; j < pops; ++j) {
      Term& t = one(push(0, i, j, 0, 0));
      if (i == j) {
        t.f[i] = kDd;
      } else {
        t.f[i] = kD;
        t.f[j] = kD;
      }
    }
  for (int i = 0; i < pops; ++i)
    for (int j = 0; j < pops; ++j)
      for (int k = j; k < pops; ++k) {
        Term& t = one(push(1, i, j, k, 0));
        if (j == i && k == i) {
          t.f[i] = kDz;
        } else if (j == i) {
          t.f[i] = kDzp;
          t.f[k] = kZq;
        } else if (k == i) {
          t.f[i] = kDzq;
          t.f[j] = kZp;
        } else if (j == k) {
          t.f[i] = kD;
          t.f[j] = kZz;
        } else {
          t.f[i] = kD;
          t.f[j] = kZp;
          t.f[k] = kZq;
        }
      }
  for (int i = 0; i < pops; ++i)
    for (int j = i; j < pops; ++j)
      for (int k = i; k < pops; ++k)
        for (int l = k; l < pops; ++l) {
          if (k == i && l < j) continue;  // (i, j) <= (k, l)
          Stat& s = push(2, i, j, k, l);
          const int left[2][2] = {{i, j}, {j, i}}, right[2][2] = {{k, l}, {l, k}};
          for (const auto& x : left)
            for (const auto& y : right) {
              std::uint8_t set[kMaxPops] = {};
              set[x[0]] |= 1;
              set[x[1]] |= 2;
              set[y[0]] |= 4;
              set[y[1]] |= 8;
              int at = 0;
              while (at < s.terms) {
                bool same = true;
                for (int q = 0; q < kMaxPops; ++q) same = same && s.t[at].f[q] == set[q];
                if (same) break;
                ++at;
              }
              if (at == s.terms) {
                ++s.terms;
                for (int q = 0; q < kMaxPops; ++q) s.t[at].f[q] = set[q];
              }
              ++s.t[at].coef;
            }
        }
  for (int x = 0; x < b.stats; ++x)
    for (int t = 0; t < b.s[x].terms; ++t)
      for (int q = 0; q < pops; ++q) b.need[q] |= std::uint32_t{1} << b.s[x].t[t].f[q];
  return b;
}

/// The basis of P populations, known at compile time (the CPU's loops unroll over it).
template <int P>
inline constexpr BasisTable kBasis = basis_table(P);

/// One population's factors F (those whose bit is set in @p need) from its haplotype counts
/// @p a (AB), @p b (Ab), @p c (aB), @p e (ab), exact in @p I.
template <class I>
VCZ_LDM_HD void pop_factors(I a, I b, I c, I e, std::uint32_t need, I* F) {
  auto wants = [need](int k) { return ((need >> k) & 1) != 0; };
  const I det = a * e - b * c;
  const I sa = c + e - a - b, sb = b + e - a - c;  // n (1 - 2p), n (1 - 2q)
  F[kD] = det;
  // Sums over ordered triples of distinct haplotypes: the third one's sign over the n - 2 left.
  if (wants(kDzp)) F[kDzp] = det * sa;
  if (wants(kDzq)) F[kDzq] = det * sb;
  F[kZp] = sa;
  F[kZq] = sb;
  if (wants(kZz)) F[kZz] = sa * sb - (a - b - c + e);
  if (wants(kDd))
    F[kDd] = a * (a - 1) * e * (e - 1) + b * (b - 1) * c * (c - 1) - 2 * a * b * c * e;
  if (wants(kDz)) F[kDz] = det * sa * sb + det * (b + c - a - e) + 2 * (b * c + a * e);
  // F[S]: the ordered tuples are the product of the class sizes less the tuples where a left
  // draw (A or a) and a right draw (B or b) are one haplotype (inclusion-exclusion over
  // matchings, the only coincidences possible: A∩B = a, A∩b = b, a∩B = c, a∩b = e).
  const I A = a + b, Ac = c + e, B = a + c, Bc = b + e;  // A, a, B, b
  F[0] = 1;
  F[1] = A;
  F[2] = Ac;
  F[4] = B;
  F[8] = Bc;
  if (wants(3)) F[3] = A * Ac;
  if (wants(12)) F[12] = B * Bc;
  if (wants(5)) F[5] = A * B - a;
  if (wants(9)) F[9] = A * Bc - b;
  if (wants(6)) F[6] = Ac * B - c;
  if (wants(10)) F[10] = Ac * Bc - e;
  if (wants(7)) F[7] = A * Ac * B - a * Ac - c * A;
  if (wants(11)) F[11] = A * Ac * Bc - b * Ac - e * A;
  if (wants(13)) F[13] = A * B * Bc - a * Bc - b * B;
  if (wants(14)) F[14] = Ac * B * Bc - c * Bc - e * B;
  // both matchings at once: {A=B, a=b} and {A=b, a=B}
  if (wants(15))
    F[15] = A * Ac * B * Bc - a * Ac * Bc - b * Ac * B - c * A * Bc - e * A * B + a * e + b * c;
}

/// A population's factors from its @p n haplotypes (every one called at both sites), @p na and
/// @p nb non-REF at the first and the second site, @p nab at both.
template <class I>
VCZ_LDM_HD void pop_factors_of(std::int64_t n, std::int64_t na, std::int64_t nb, std::int64_t nab,
                               std::uint32_t need, I* F) {
  const std::int64_t x11 = n - na - nb + nab;  // REF at both
  pop_factors<I>(x11, (n - na) - x11, (n - nb) - x11, nab, need, F);
}

/// The basis' numerators of a pair from its P populations' factors @p F: @p add(s, v) for
/// each statistic s of @p t (P populations) in order.
template <int P, class I, class Add>
VCZ_LDM_HD void add_basis_terms(const BasisTable& t, const I (&F)[P][kFactors], Add&& add) {
  VCZ_LDM_UNROLL
  for (int s = 0; s < t.stats; ++s) {
    const Stat& st = t.s[s];
    I v = 0;
    VCZ_LDM_UNROLL
    for (int k = 0; k < st.terms; ++k) {
      const Term& term = st.t[k];
      I prod = term.coef;
      VCZ_LDM_UNROLL
      for (int q = 0; q < P; ++q)
        if (term.f[q] != 0) prod *= F[q][term.f[q]];
      v += prod;
    }
    add(s, v);
  }
}

/// A row's count split into P populations: @p masked[q] for q < P - 1, the last the rest.
template <int P, class C>
VCZ_LDM_HD void split_counts(std::int64_t total, const C* masked, std::int64_t (&out)[P]) {
  std::int64_t rest = total;
  for (int q = 0; q + 1 < P; ++q) {
    out[q] = static_cast<std::int64_t>(masked[q]);
    rest -= out[q];
  }
  out[P - 1] = rest;
}

/// Whether a row of @p n called and @p alt non-REF haplotypes, of @p width selected, is summed:
/// complete, and polymorphic.
VCZ_LDM_HD bool row_used(std::int64_t n, std::int64_t alt, std::int64_t width) {
  return n == width && alt > 0 && alt < n;
}

/// The bins of ld-stats (PairBinner): @p bins bins, edges bp[0 .. bins] of bp distance, or
/// r[0 .. bins] of recombination distance |cM_b - cM_a| / 100.
struct BinEdges {
  std::int64_t bins = 0;
  bool by_r = false;
  const std::int64_t* bp = nullptr;
  const double* r = nullptr;
};

/// The bin k of @p edges[0 .. bins] with edges[k] <= @p d < edges[k + 1], or -1; bin @p hint
/// (or -1) is tried first.
template <class T>
VCZ_LDM_HD std::int64_t bin_in(const T* edges, std::int64_t bins, T d, std::int64_t hint) {
  if (!(d >= edges[0] && d < edges[bins])) return -1;
  if (hint >= 0 && edges[hint] <= d && d < edges[hint + 1]) return hint;
  std::int64_t lo = 0, hi = bins;  // the last edge at or below d: in [lo, hi)
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    if (edges[mid] <= d)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// The bin of the pair at @p pa <= @p pb (coordinates @p ca, @p cb), or -1 (PairBinner::bin_at);
/// bin @p hint first (a row's pairs in order of their other row fall in neighbouring bins).
VCZ_LDM_HD std::int64_t pair_bin(const BinEdges& e, std::int64_t pa, std::int64_t pb, double ca,
                                 double cb, std::int64_t hint = -1) {
  if (!e.by_r) return bin_in<std::int64_t>(e.bp, e.bins, pb - pa, hint);
  const double diff = cb - ca;
  return bin_in<double>(e.r, e.bins, (diff < 0 ? -diff : diff) / 100, hint);
}

/// What a device needs to sum ld-stats' pairs per bin (PairReducer::device(), trivially
/// copyable but for the edges, which the band copies): band 0's rows carry the union's counts
/// and those within each population but the last (the reducer's count masks).
struct DeviceReduction {
  BasisTable basis;
  std::int64_t width = 0;                 ///< the union's haplotypes (a complete row's n)
  std::int64_t pop_width[kMaxPops] = {};  ///< each population's
  BinEdges edges;                         ///< host pointers: the band copies the edges
  /// Per bin, 1 + basis.stats 128-bit two's-complement sums (two 64-bit words, low first):
  /// the pairs, then each statistic's numerators.
  VCZ_LDM_HD std::int64_t slots() const { return 1 + basis.stats; }
};

/// The pair (i, j) of rows with non-REF counts @p ai, @p bj (over the union), @p mi, @p mj
/// within each population but the last, @p ab and @p mab at both, of P populations: its
/// numerators @p add(s, v), exact in @p I (64 bits when every population is narrow).
template <int P, class I, class C, class Add>
VCZ_LDM_HD void reduce_pair(const DeviceReduction& r, const BasisTable& basis, std::int64_t ai,
                            const C* mi, std::int64_t bj, const C* mj, std::int64_t ab,
                            const C* mab, Add&& add) {
  std::int64_t a[P], b[P], x[P];
  split_counts<P>(ai, mi, a);
  split_counts<P>(bj, mj, b);
  split_counts<P>(ab, mab, x);
  I F[P][kFactors];
  VCZ_LDM_UNROLL
  for (int q = 0; q < P; ++q)
    pop_factors_of<I>(r.pop_width[q], a[q], b[q], x[q], basis.need[q], F[q]);
  add_basis_terms<P>(basis, F, add);
}

}  // namespace vczstats::stats::moments
