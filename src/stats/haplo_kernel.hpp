#pragma once
// The haplotype family's segment algorithm, written once for the CPU (one lane per segment,
// segments on the thread pool) and the GPU (one thread block per segment, its threads as lanes).
//
// A segment is a run of consecutive usable sites ("rows") of one haplotype set, processed in
// one direction. Along it the haplotypes are kept sorted by their prefix read backwards from
// the current row — the positional Burrows-Wheeler transform (Durbin 2014): order `a` and
// divergence `d`, d[i] = the step where the match between a[i - 1] and a[i] begins. Adding a
// row is one stable partition by allele (a scan across lanes). The EHH of a focal row then
// follows from the match lengths len[i] = step + 1 - d[i] of neighbours in that order: the pairs
// identical over the focal row and the k rows before it are those whose minimum len between
// them is > k, and position i is that minimum for (i - L_i)(R_i - i) pairs (L_i: previous
// position with len <= len[i], R_i: next with len < len[i]). A histogram of those counts by
// len gives EHH at every distance at once; the walk (selscan's loop, POPGEN.md §11.3)
// integrates it outward from the focal row. Haplotype groups over a window (Garud's H) are the
// runs of positions whose len reaches the window's length. Every focal row costs O(haplotypes),
// not O(haplotypes × distance) as extending each focal row's haplotypes separately would.
//
// Lanes: a block of T lanes splits the n positions into T contiguous chunks. Phases run on
// every lane (Block::each) or on lane 0 alone (Block::single); a barrier separates phases, and
// everything a phase leaves for the next is in the scratch memory, so a host loop over lanes
// (HostBlock) runs the same code as a CUDA block (tests check T > 1 on the host).

#include <cstddef>
#include <cstdint>

#include "stats/hd.hpp"

namespace vczstats::stats::haplo {

/// What a segment computes at its focal rows.
enum Mode : std::int32_t {
  kModeIhs = 0,    ///< iHH of the two allele classes (iHS)
  kModeNsl = 1,    ///< SL of the two allele classes (nSL)
  kModeXpehh = 2,  ///< iHH of populations A and B (XP-EHH)
  kModeXpnsl = 3,  ///< SL of populations A and B (XP-nSL)
  kModeGarud = 4,  ///< haplotype groups at window ends (events), no focal rows
  kModeCurve = 5,  ///< identical pairs at every distance (EHH decay), no integration
};

/// How a walk ended.
enum Status : std::int32_t {
  kOk = 0,           ///< EHH decayed below the cutoff, or the walk reached --max-extend
  kEdge = 1,         ///< reached a contig end first: the site is dropped (selscan)
  kGap = 2,          ///< met a gap longer than --max-gap: the site is dropped
  kIncomplete = 3,   ///< ran out of the rows given: run again with more
  kTruncated = 4,    ///< reached a contig end with --trunc-ok: kept
  kFewCarriers = 5,  ///< an allele class has fewer than two haplotypes: the site is dropped
};

/// selscan's parameters of the walk.
struct WalkParams {
  double cutoff = 0.05;
  double gap_scale = 20000;
  double max_gap = 200000;
  double max_extend = 1000000;          ///< bp (iHS, XP-EHH); <= 0: none
  std::int64_t max_extend_sites = 100;  ///< sites (nSL, XP-nSL); <= 0: none
  std::int32_t mode = kModeIhs;
  std::int32_t trunc_ok = 0;
};

/// One PBWT run: steps 0..steps-1 read rows first, first + dir, first + 2 dir, ...
struct Segment {
  std::int64_t first = 0;
  std::int64_t steps = 0;
  std::int32_t dir = 1;
  std::int32_t edge = 0;        ///< no usable row lies beyond `first` (a contig end)
  std::int64_t focal_from = 0;  ///< focal steps [focal_from, focal_to)
  std::int64_t focal_to = 0;
  std::int64_t out = 0;                         ///< result index of step focal_from (+1 per step)
  std::int64_t event_begin = 0, event_end = 0;  ///< Garud events, sorted by step
};

/// Garud: at step `step`, the groups of haplotypes identical on the last `length` rows.
struct GarudEvent {
  std::int64_t step = 0;
  std::int64_t length = 0;
  std::int64_t out = 0;
};

/// One direction of one focal row.
struct FocalResult {
  double ihh[2] = {0, 0};  ///< allele class 0 and 1 (the row's bit), or population A and B
  std::int32_t status = kOk;
  std::int32_t steps = 0;  ///< rows walked beyond the focal row
};

/// Haplotype groups of one window.
struct GarudResult {
  std::int64_t distinct = 0;        ///< number of groups
  std::int64_t sumsq = 0;           ///< sum of squared group sizes
  std::int64_t top[3] = {0, 0, 0};  ///< the three largest group sizes
};

/// The rows of one haplotype set and the work on them.
struct BatchView {
  const std::uint64_t* bits = nullptr;  ///< rows × words; bit h of a row: haplotype h
  std::int64_t words = 0;
  const std::int64_t* pos = nullptr;  ///< physical position of each row
  const double* gpos = nullptr;       ///< genetic (or physical) position of each row
  std::int64_t rows = 0;
  std::int32_t n = 0;    ///< haplotypes
  std::int32_t n_a = 0;  ///< XP: haplotypes [0, n_a) are population A, the rest B
  WalkParams params;
  const Segment* segments = nullptr;
  std::int64_t nsegments = 0;
  std::int64_t max_steps = 0;  ///< the longest segment (scratch sizing)
  const GarudEvent* events = nullptr;
  FocalResult* focal = nullptr;
  GarudResult* garud = nullptr;
  /// kModeCurve: identical pairs of class 0, class 1 and all haplotypes at distance k of result
  /// r: curve[(r * 3 + c) * (max_steps + 1) + k]
  std::uint64_t* curve = nullptr;
};

/// Per-lane values passed between phases.
struct LaneSum {
  std::int64_t zeros, ones, zeros_before, ones_before;
  std::int32_t has0, has1, tail0, tail1, all, in0, in1;
  std::int32_t min_len;
  std::int64_t count_a, a_before;
  std::int64_t first_b, last_b, groups, sumsq, top[3];
};

/// The scratch memory of one segment (one lane block).
struct Scratch {
  std::int32_t* a[2];
  std::int32_t* d[2];
  std::int32_t* lo;      ///< previous position with len <= (L)
  std::int32_t* hi;      ///< next position with len < (R)
  std::int32_t* pa;      ///< haplotypes of population A before each position (n + 1)
  std::uint64_t* hist;   ///< 3 classes × (max_steps + 2): pairs whose minimum len is exactly l
  std::uint64_t* total;  ///< 3 classes: all identical pairs at the focal row
  LaneSum* lanes;
  std::int64_t* zeros_total;
};

/// Bytes of scratch for @p n haplotypes, @p lanes lanes and segments of up to @p max_steps.
VCZ_HD inline std::int64_t scratch_bytes(std::int64_t n, std::int64_t lanes,
                                         std::int64_t max_steps) {
  const std::int64_t ints = 7 * n + 1, u64 = 3 * (max_steps + 2) + 3 + 1;
  const std::int64_t raw = u64 * 8 + lanes * static_cast<std::int64_t>(sizeof(LaneSum)) + ints * 4;
  return (raw + 255) & ~std::int64_t{255};
}

/// The scratch layout in @p base (scratch_bytes() bytes, 8-byte aligned).
VCZ_HD inline Scratch scratch_at(std::byte* base, std::int64_t n, std::int64_t lanes,
                                 std::int64_t max_steps) {
  Scratch s;
  auto* u = reinterpret_cast<std::uint64_t*>(base);
  s.hist = u;
  s.total = u + 3 * (max_steps + 2);
  s.zeros_total = reinterpret_cast<std::int64_t*>(s.total + 3);
  s.lanes = reinterpret_cast<LaneSum*>(s.zeros_total + 1);
  auto* i = reinterpret_cast<std::int32_t*>(s.lanes + lanes);
  s.a[0] = i;
  s.a[1] = i + n;
  s.d[0] = i + 2 * n;
  s.d[1] = i + 3 * n;
  s.lo = i + 4 * n;
  s.hi = i + 5 * n;
  s.pa = i + 6 * n;  // n + 1 entries
  return s;
}

/// Lanes run on the host one after another (the CPU backend uses one lane per segment).
struct HostBlock {
  int lanes = 1;
  template <class F>
  VCZ_HD void each(F&& f) const {
    for (int t = 0; t < lanes; ++t) f(t);
  }
  template <class F>
  VCZ_HD void single(F&& f) const {
    f();
  }
};

#if defined(__CUDACC__)
/// The threads of a CUDA block are the lanes.
struct DeviceBlock {
  int lanes = 1;
  template <class F>
  __device__ void each(F&& f) const {
    f(static_cast<int>(threadIdx.x));
    __syncthreads();
  }
  template <class F>
  __device__ void single(F&& f) const {
    if (threadIdx.x == 0) f();
    __syncthreads();
  }
};
#endif

// ---- small helpers -----------------------------------------------------------------------------

VCZ_HD inline std::int32_t imax(std::int32_t x, std::int32_t y) {
  return x > y ? x : y;
}

/// Add @p v to @p *p (lanes may add to the same place: atomic on the device).
VCZ_HD inline void add_u64(std::uint64_t* p, std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
#else
  *p += v;
#endif
}

// Double arithmetic of the walk, rounded step by step on both devices (no fused multiply-add),
// so the CPU and the GPU give the same bits.
VCZ_HD inline double mul_rn(double x, double y) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(x, y);
#else
  return x * y;
#endif
}
VCZ_HD inline double add_rn(double x, double y) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(x, y);
#else
  return x + y;
#endif
}

/// Insert a group size into the three largest (descending).
VCZ_HD inline void push_top(std::int64_t* top, std::int64_t size) {
  if (size > top[0]) {
    top[2] = top[1];
    top[1] = top[0];
    top[0] = size;
  } else if (size > top[1]) {
    top[2] = top[1];
    top[1] = size;
  } else if (size > top[2]) {
    top[2] = size;
  }
}

VCZ_HD inline int row_bit(const std::uint64_t* row, std::int32_t h) {
  return static_cast<int>((row[h >> 6] >> (h & 63)) & 1u);
}

/// Lane @p t's chunk [*b, *e) of @p n positions split over @p lanes.
VCZ_HD inline void chunk_of(int t, int lanes, std::int32_t n, std::int32_t* b, std::int32_t* e) {
  const std::int32_t c = (n + lanes - 1) / lanes;
  const std::int64_t lo = static_cast<std::int64_t>(t) * c;
  *b = static_cast<std::int32_t>(lo < n ? lo : n);
  *e = static_cast<std::int32_t>(lo + c < n ? lo + c : n);
}

VCZ_HD inline double choose2(std::int64_t m) {
  return static_cast<double>(m) * static_cast<double>(m - 1) / 2;
}

/// The position of the row @p k steps from the focal step @p s, toward the segment's start.
struct WalkRows {
  const BatchView* B;
  const Segment* seg;
  std::int64_t s;
  VCZ_HD std::int64_t row(std::int64_t k) const { return seg->first + seg->dir * (s - k); }
  VCZ_HD std::int64_t pos(std::int64_t k) const { return B->pos[row(k)]; }
  VCZ_HD double gpos(std::int64_t k) const { return B->gpos[row(k)]; }
};

/// The distance selscan integrates between the k-th and (k+1)-th row of a walk: genetic (or, for
/// the nSL family, one per site), scaled by gap_scale / gap beyond gap_scale bp.
VCZ_HD inline double step_distance(const WalkRows& w, std::int64_t k, const WalkParams& p,
                                   bool unit) {
  const std::int64_t gap =
      w.pos(k + 1) > w.pos(k) ? w.pos(k + 1) - w.pos(k) : w.pos(k) - w.pos(k + 1);
  double scale = 1;
  if (gap > 0) {
    const double r = p.gap_scale / static_cast<double>(gap);
    if (r < 1) scale = r;
  }
  if (unit) return scale;
  const double g = w.gpos(k + 1) - w.gpos(k);
  return mul_rn(scale, g < 0 ? -g : g);
}

/// Whether the walk stops after reaching step k (--max-extend, --max-extend-nsl).
VCZ_HD inline bool extended(const WalkRows& w, std::int64_t k, const WalkParams& p, bool unit) {
  if (unit) return p.max_extend_sites > 0 && k >= p.max_extend_sites;
  if (!(p.max_extend > 0)) return false;
  const std::int64_t d = w.pos(k) > w.pos(0) ? w.pos(k) - w.pos(0) : w.pos(0) - w.pos(k);
  return static_cast<double>(d) >= p.max_extend;
}

/// The status of a walk that wants a row beyond the K available.
VCZ_HD inline std::int32_t end_status(const Segment& seg, const WalkParams& p) {
  if (!seg.edge) return kIncomplete;
  return p.trunc_ok ? kTruncated : kEdge;
}

/// Whether a walk at step k of the K available cannot take the next step: out of rows (the
/// contig's end or the segment's), or a gap longer than --max-gap; sets @p r's status.
VCZ_HD inline bool blocked(const WalkRows& w, const Segment& seg, const WalkParams& p,
                           std::int64_t k, std::int64_t K, FocalResult& r) {
  if (k == K) {
    r.status = end_status(seg, p);
    return true;
  }
  const std::int64_t gap =
      w.pos(k + 1) > w.pos(k) ? w.pos(k + 1) - w.pos(k) : w.pos(k) - w.pos(k + 1);
  if (static_cast<double>(gap) > p.max_gap) {
    r.status = kGap;
    return true;
  }
  return false;
}

/// selscan 2's calc_ihs / calc_nsl loop in one direction, from the histogram of lane sums:
/// hist[c][l] pairs of allele class c whose identity ends exactly at distance l - 1.
VCZ_HD inline FocalResult walk_alleles(const BatchView& B, const Segment& seg, const Scratch& S,
                                       std::int64_t s, std::int64_t n0) {
  const WalkParams& p = B.params;
  const bool unit = p.mode == kModeNsl;
  const double cutoff = unit ? 0.0 : p.cutoff;
  const std::int64_t stride = B.max_steps + 2;
  const WalkRows w{&B, &seg, s};
  FocalResult r;
  if (n0 < 2 || B.n - n0 < 2) {  // EHH of a class needs two haplotypes
    r.status = kFewCarriers;
    return r;
  }
  const double norm[2] = {choose2(n0), choose2(B.n - n0)};
  std::uint64_t pairs[2] = {S.total[0], S.total[1]};
  double ehh[2] = {1, 1};
  std::int64_t k = 0;
  const std::int64_t K = s;
  while (ehh[0] > cutoff || ehh[1] > cutoff) {
    if (blocked(w, seg, p, k, K, r)) break;
    const double dist = step_distance(w, k, p, unit);
    ++k;
    for (int c = 0; c < 2; ++c) {
      pairs[c] -= S.hist[c * stride + k];
      if (ehh[c] > cutoff) {
        const double now = static_cast<double>(pairs[c]) / norm[c];
        r.ihh[c] = add_rn(r.ihh[c], mul_rn(mul_rn(0.5, dist), add_rn(ehh[c], now)));
        ehh[c] = now;
      }
    }
    if (extended(w, k, p, unit)) break;
  }
  r.steps = static_cast<std::int32_t>(k);
  return r;
}

/// selscan's calc_xpihh loop in one direction: populations A and B, pooled EHH as the stop.
VCZ_HD inline FocalResult walk_pops(const BatchView& B, const Segment& seg, const Scratch& S,
                                    std::int64_t s) {
  const WalkParams& p = B.params;
  const bool unit = p.mode == kModeXpnsl;
  const std::int64_t stride = B.max_steps + 2;
  const WalkRows w{&B, &seg, s};
  const double norm[3] = {choose2(B.n_a), choose2(B.n - B.n_a), choose2(B.n)};
  std::uint64_t pairs[3] = {S.total[0], S.total[1], S.total[2]};
  double ehh[2] = {static_cast<double>(pairs[0]) / norm[0],
                   static_cast<double>(pairs[1]) / norm[1]};
  double pooled = static_cast<double>(pairs[2]) / norm[2];
  FocalResult r;
  std::int64_t k = 0;
  const std::int64_t K = s;
  while (pooled > p.cutoff) {
    if (blocked(w, seg, p, k, K, r)) break;
    const double dist = step_distance(w, k, p, unit);
    ++k;
    for (int c = 0; c < 3; ++c) pairs[c] -= S.hist[c * stride + k];
    for (int c = 0; c < 2; ++c) {
      const double now = static_cast<double>(pairs[c]) / norm[c];
      r.ihh[c] = add_rn(r.ihh[c], mul_rn(mul_rn(0.5, dist), add_rn(ehh[c], now)));
      ehh[c] = now;
    }
    pooled = static_cast<double>(pairs[2]) / norm[2];
    if (extended(w, k, p, unit)) break;
  }
  r.steps = static_cast<std::int32_t>(k);
  return r;
}

/// Run segment @p seg of @p B on a block of lanes (see the file comment).
template <class Block>
VCZ_HD void run_segment(const Block& blk, const BatchView& B, const Segment& seg,
                        const Scratch& S) {
  const std::int32_t n = B.n;
  const int T = blk.lanes;
  const std::int64_t stride = B.max_steps + 2;
  const std::int32_t mode = B.params.mode;
  const bool focal_mode = mode != kModeGarud;
  const bool xp = mode == kModeXpehh || mode == kModeXpnsl;

  blk.each([&](int t) {
    std::int32_t b, e;
    chunk_of(t, T, n, &b, &e);
    for (std::int32_t i = b; i < e; ++i) {
      S.a[0][i] = i;
      S.d[0][i] = 0;
    }
  });

  std::int64_t ev = seg.event_begin;
  for (std::int64_t s = 0; s < seg.steps; ++s) {
    const std::uint64_t* row = B.bits + (seg.first + seg.dir * s) * B.words;
    const int in = static_cast<int>(s & 1), out = in ^ 1;
    const std::int32_t step1 = static_cast<std::int32_t>(s + 1);
    const std::int32_t* a = S.a[in];
    const std::int32_t* d = S.d[in];

    // Add the row: stable partition by allele, divergences as running maxima since the
    // previous haplotype of the same class (Durbin 2014, algorithm 2).
    blk.each([&](int t) {
      std::int32_t b, e;
      chunk_of(t, T, n, &b, &e);
      LaneSum& L = S.lanes[t];
      L.zeros = L.ones = 0;
      L.has0 = L.has1 = 0;
      std::int32_t t0 = 0, t1 = 0, all = 0;
      for (std::int32_t i = b; i < e; ++i) {
        const std::int32_t di = d[i];
        all = imax(all, di);
        t0 = imax(t0, di);
        t1 = imax(t1, di);
        if (row_bit(row, a[i])) {
          ++L.ones;
          L.has1 = 1;
          t1 = 0;
        } else {
          ++L.zeros;
          L.has0 = 1;
          t0 = 0;
        }
      }
      L.tail0 = t0;
      L.tail1 = t1;
      L.all = all;
    });
    blk.single([&] {
      std::int32_t c0 = step1, c1 = step1;
      std::int64_t zb = 0, ob = 0;
      for (int t = 0; t < T; ++t) {
        LaneSum& L = S.lanes[t];
        L.in0 = c0;
        L.in1 = c1;
        L.zeros_before = zb;
        L.ones_before = ob;
        zb += L.zeros;
        ob += L.ones;
        c0 = L.has0 ? L.tail0 : imax(c0, L.all);
        c1 = L.has1 ? L.tail1 : imax(c1, L.all);
      }
      *S.zeros_total = zb;
    });
    blk.each([&](int t) {
      std::int32_t b, e;
      chunk_of(t, T, n, &b, &e);
      const LaneSum& L = S.lanes[t];
      std::int32_t p0 = L.in0, p1 = L.in1;
      std::int64_t zi = L.zeros_before, oi = *S.zeros_total + L.ones_before;
      std::int32_t* na = S.a[out];
      std::int32_t* nd = S.d[out];
      for (std::int32_t i = b; i < e; ++i) {
        const std::int32_t di = d[i];
        p0 = imax(p0, di);
        p1 = imax(p1, di);
        if (row_bit(row, a[i])) {
          na[oi] = a[i];
          nd[oi++] = p1;
          p1 = 0;
        } else {
          na[zi] = a[i];
          nd[zi++] = p0;
          p0 = 0;
        }
      }
    });

    const std::int32_t* ca = S.a[out];
    const std::int32_t* cd = S.d[out];
    auto len = [&](std::int32_t i) { return step1 - cd[i]; };

    if (focal_mode && s >= seg.focal_from && s < seg.focal_to) {
      // L and R within each lane's chunk (pointer jumping: amortised O(1) per position).
      blk.each([&](int t) {
        std::int32_t b, e;
        chunk_of(t, T, n, &b, &e);
        LaneSum& L = S.lanes[t];
        std::int32_t mn = 0x7fffffff;
        std::int64_t count_a = 0;
        for (std::int32_t i = b; i < e; ++i) {
          const std::int32_t li = len(i);
          mn = li < mn ? li : mn;
          count_a += ca[i] < B.n_a;
          std::int32_t j = i - 1;
          while (j >= b && len(j) > li) j = S.lo[j];
          S.lo[i] = j;
        }
        for (std::int32_t i = e - 1; i >= b; --i) {
          const std::int32_t li = len(i);
          std::int32_t j = i + 1;
          while (j < e && len(j) >= li) j = S.hi[j];
          S.hi[i] = j;
        }
        L.min_len = mn;
        L.count_a = count_a;
      });
      blk.single([&] {
        std::int64_t before = 0;
        for (int t = 0; t < T; ++t) {
          S.lanes[t].a_before = before;
          before += S.lanes[t].count_a;
        }
      });
      // Resolve L and R across chunks; prefix counts of population A.
      blk.each([&](int t) {
        std::int32_t b, e;
        chunk_of(t, T, n, &b, &e);
        std::int64_t run = S.lanes[t].a_before;
        for (std::int32_t i = b; i < e; ++i) {
          S.pa[i] = static_cast<std::int32_t>(run);
          run += ca[i] < B.n_a;
        }
        if (e == n && b < e) S.pa[n] = static_cast<std::int32_t>(run);
        for (std::int32_t i = b; i < e; ++i) {
          const std::int32_t li = len(i);
          if (li == 0) continue;
          if (S.lo[i] < b) {
            for (int u = t - 1; u >= 0; --u) {
              if (S.lanes[u].min_len > li) continue;
              std::int32_t ub, ue;
              chunk_of(u, T, n, &ub, &ue);
              std::int32_t j = ue - 1;
              while (len(j) > li) --j;
              S.lo[i] = j;
              break;
            }
          }
          if (S.hi[i] >= e) {
            std::int32_t found = n;
            for (int u = t + 1; u < T; ++u) {
              if (S.lanes[u].min_len >= li) continue;
              std::int32_t ub, ue;
              chunk_of(u, T, n, &ub, &ue);
              std::int32_t j = ub;
              while (len(j) >= li) ++j;
              found = j;
              break;
            }
            S.hi[i] = found;
          }
        }
      });
      // Pairs by their minimum match length.
      const std::int64_t Z = *S.zeros_total;
      blk.each([&](int t) {
        std::int32_t b, e;
        chunk_of(t, T, n, &b, &e);
        for (std::int32_t i = b; i < e; ++i) {
          const std::int32_t li = len(i);
          if (li == 0) continue;
          const std::int64_t l = S.lo[i], r = S.hi[i];
          const std::uint64_t left = static_cast<std::uint64_t>(i - l);
          const std::uint64_t right = static_cast<std::uint64_t>(r - i);
          if (xp) {
            const std::uint64_t al = static_cast<std::uint64_t>(S.pa[i] - S.pa[l]);
            const std::uint64_t ar = static_cast<std::uint64_t>(S.pa[r] - S.pa[i]);
            add_u64(&S.hist[0 * stride + li], al * ar);
            add_u64(&S.hist[1 * stride + li], (left - al) * (right - ar));
            add_u64(&S.hist[2 * stride + li], left * right);
            add_u64(&S.total[0], al * ar);
            add_u64(&S.total[1], (left - al) * (right - ar));
            add_u64(&S.total[2], left * right);
          } else {
            const int c = i < Z ? 0 : 1;
            add_u64(&S.hist[c * stride + li], left * right);
            add_u64(&S.total[c], left * right);
            if (mode == kModeCurve) {
              add_u64(&S.hist[2 * stride + li], left * right);
              add_u64(&S.total[2], left * right);
            }
          }
        }
      });
      blk.single([&] {
        const std::int64_t r = seg.out + (s - seg.focal_from);
        if (mode == kModeCurve) {
          const std::int64_t len_max = B.max_steps + 1;
          for (int c = 0; c < 3; ++c) {
            std::uint64_t pairs = S.total[c];
            std::uint64_t* o = B.curve + (r * 3 + c) * len_max;
            for (std::int64_t k = 0; k <= s; ++k) {
              if (k > 0) pairs -= S.hist[c * stride + k];
              o[k] = pairs;
            }
          }
        } else if (xp) {
          B.focal[r] = walk_pops(B, seg, S, s);
        } else {
          B.focal[r] = walk_alleles(B, seg, S, s, Z);
        }
        S.total[0] = S.total[1] = S.total[2] = 0;
      });
      blk.each([&](int t) {
        std::int32_t b, e;
        chunk_of(t, T, n, &b, &e);
        for (std::int32_t i = b; i < e; ++i) {
          const std::int32_t li = len(i);
          if (li == 0) continue;
          S.hist[li] = S.hist[stride + li] = S.hist[2 * stride + li] = 0;
        }
      });
    }

    // Garud: the groups of haplotypes identical on the last `length` rows.
    while (ev < seg.event_end && B.events[ev].step == s) {
      const std::int32_t need = static_cast<std::int32_t>(B.events[ev].length);
      blk.each([&](int t) {
        std::int32_t b, e;
        chunk_of(t, T, n, &b, &e);
        LaneSum& L = S.lanes[t];
        L.first_b = L.last_b = -1;
        L.groups = L.sumsq = 0;
        L.top[0] = L.top[1] = L.top[2] = 0;
        for (std::int32_t i = b; i < e; ++i) {
          if (len(i) >= need) continue;  // i continues the group before it
          if (L.last_b >= 0) {
            const std::int64_t size = i - L.last_b;
            ++L.groups;
            L.sumsq += size * size;
            push_top(L.top, size);
          } else {
            L.first_b = i;
          }
          L.last_b = i;
        }
      });
      blk.single([&] {
        // Each lane's last group runs to the next lane's first boundary (or the end).
        GarudResult g;
        std::int64_t next = n;
        for (int t = T - 1; t >= 0; --t) {
          const LaneSum& L = S.lanes[t];
          if (L.last_b < 0) continue;
          const std::int64_t size = next - L.last_b;
          next = L.first_b;
          g.distinct += L.groups + 1;
          g.sumsq += L.sumsq + size * size;
          push_top(g.top, size);
          for (int k = 0; k < 3 && L.top[k] > 0; ++k) push_top(g.top, L.top[k]);
        }
        B.garud[B.events[ev].out] = g;
      });
      ++ev;
    }
  }
}

}  // namespace vczstats::stats::haplo
