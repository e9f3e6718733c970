#pragma once
/// @file exact_sum.hpp
/// @brief A sum of doubles whose result does not depend on the order or grouping of its terms,
/// so a statistic summed over partitions of its sites (threads, work units, MPI ranks) and
/// merged gives the same bits as one pass.

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__CUDACC__)
#define VCZ_EXACT_HD __host__ __device__
#else
#define VCZ_EXACT_HD
#endif

namespace vczstats::stats {

/// @brief An order-independent sum of doubles: every term is rounded once to a multiple of
/// 2^-96 (to nearest, ties away from zero: terms below 2^-97 count as 0) and added exactly to a
/// 192-bit two's-complement fixed-point integer, so sums of the same terms in any order or
/// grouping, merged with +=, hold the same integer; value() rounds it to the nearest double. Exact
/// while the sum of the magnitudes stays below 2^95 (2^31 terms below 2^64 each). Terms of
/// magnitude 2^64 or more, and infinities, count as infinities of their sign; a NaN term, or
/// infinities of both signs, make the sum NaN. Trivially copyable (it travels in saved statistic
/// states) and usable in CUDA device code (add and merge).
class ExactSum {
 public:
  ExactSum() = default;
  /// @brief The sum of one term.
  VCZ_EXACT_HD ExactSum(double v) { add(v); }  // NOLINT: implicit, like a double

  /// @brief Add one term.
  VCZ_EXACT_HD ExactSum& operator+=(double v) {
    add(v);
    return *this;
  }
  /// @brief Add another sum (exactly).
  VCZ_EXACT_HD ExactSum& operator+=(const ExactSum& o) {
    add_wide(o.lo(), o.hi_);
    special_ |= o.special_;
    return *this;
  }

  /// @brief The sum rounded to the nearest double (ties to even).
  double value() const {
    if ((special_ & kNaN) || (special_ & (kPosInf | kNegInf)) == (kPosInf | kNegInf))
      return std::numeric_limits<double>::quiet_NaN();
    if (special_ & kPosInf) return std::numeric_limits<double>::infinity();
    if (special_ & kNegInf) return -std::numeric_limits<double>::infinity();
    const bool negative = hi_ < 0;
    U128 lo = this->lo();
    std::uint64_t hi = static_cast<std::uint64_t>(hi_);
    if (negative) {  // the magnitude: two's complement negation of the 192 bits
      lo = ~lo + 1;
      hi = ~hi + (lo == 0 ? 1 : 0);
    }
    const std::uint64_t m[3] = {static_cast<std::uint64_t>(lo),
                                static_cast<std::uint64_t>(lo >> 64), hi};
    int top = 2;  // the highest non-zero limb
    while (top >= 0 && m[top] == 0) --top;
    if (top < 0) return 0.0;
    const int msb = 64 * top + 63 - std::countl_zero(m[top]);  // highest set bit
    // The 64 bits down from the msb, with every lower bit OR-ed into the last one (a sticky
    // bit far below the 53 kept: converting to double then rounds correctly).
    std::uint64_t head, sticky = 0;
    const int low = msb - 63;  // bit index of head's lowest bit (negative: below bit 0)
    if (low <= 0) {
      head = m[0] << -low;
    } else {
      const int q = low / 64, r = low % 64;
      head = m[q] >> r;
      if (r != 0) {
        head |= m[q + 1] << (64 - r);  // q + 1 <= top: the msb lies above bit 64 * q + 63
        sticky = m[q] & ((std::uint64_t{1} << r) - 1);
      }
      for (int i = 0; i < q; ++i) sticky |= m[i];
    }
    if (sticky) head |= 1;
    const double v = std::ldexp(static_cast<double>(head), low - kFraction);
    return negative ? -v : v;
  }

  /// @brief Whether two sums hold the same value (the same integer and non-finite terms).
  bool operator==(const ExactSum& o) const {
    return lo0_ == o.lo0_ && lo1_ == o.lo1_ && hi_ == o.hi_ && special_ == o.special_;
  }

 private:
  __extension__ typedef unsigned __int128 U128;  // (GCC, Clang and nvcc have it)
  static constexpr int kFraction = 96;           // the integer counts units of 2^-96
  static constexpr std::uint32_t kNaN = 1, kPosInf = 2, kNegInf = 4;

  VCZ_EXACT_HD void add(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    const std::uint64_t negative = bits >> 63;
    const int e = static_cast<int>((bits >> 52) & 0x7ff);
    // v = m * 2^(e - 1075) = m * 2^s units of 2^-96, m < 2^53.
    const int s = e - 1075 + kFraction;
    if (static_cast<unsigned>(s) <= 75u) {  // normal, 2^-44 <= |v| < 2^32: m << s fits 128 bits
      const U128 x = static_cast<U128>((bits & kMantissa) | kImplicit) << s;
      const U128 mask = U128{0} - negative;  // all ones for a negative term
      add_wide((x ^ mask) + negative, std::int64_t{0} - static_cast<std::int64_t>(negative));
      return;
    }
    add_rare(bits);
  }

  // Zeros, subnormals, terms below 2^-44 (rounded to the grid), at or above 2^32, non-finite.
  VCZ_EXACT_HD void add_rare(std::uint64_t bits) {
    const bool negative = (bits >> 63) != 0;
    int e = static_cast<int>((bits >> 52) & 0x7ff);
    std::uint64_t m = bits & kMantissa;
    if (e == 0x7ff) {  // NaN or infinity
      special_ |= m != 0 ? kNaN : negative ? kNegInf : kPosInf;
      return;
    }
    if (e >= 1023 + 64) {  // |v| >= 2^64
      special_ |= negative ? kNegInf : kPosInf;
      return;
    }
    if (e == 0) {
      if (m == 0) return;  // zero
      e = 1;               // subnormal: no implicit bit
    } else {
      m |= kImplicit;
    }
    int s = e - 1075 + kFraction;
    if (s < 0) {
      if (s < -54) return;                             // below a quarter unit: rounds to 0
      m = (m + (std::uint64_t{1} << (-s - 1))) >> -s;  // to nearest, ties away from zero
      if (m == 0) return;
      s = 0;
    }
    // s <= 1086 - 979 = 107: m << s fits in 161 bits.
    U128 lo = static_cast<U128>(m) << s;  // (truncated to 128 bits when s > 75)
    std::uint64_t hi = s > 75 ? m >> (128 - s) : 0;
    if (negative) {
      lo = ~lo + 1;
      hi = ~hi + (lo == 0 ? 1 : 0);
    }
    add_wide(lo, static_cast<std::int64_t>(hi));
  }

  VCZ_EXACT_HD void add_wide(U128 lo, std::int64_t hi) {
    U128 sum;
#if defined(__CUDA_ARCH__)
    sum = this->lo() + lo;
    const std::uint64_t carry = sum < lo ? 1 : 0;
#else
    const std::uint64_t carry = __builtin_add_overflow(this->lo(), lo, &sum) ? 1 : 0;
#endif
    lo0_ = static_cast<std::uint64_t>(sum);
    lo1_ = static_cast<std::uint64_t>(sum >> 64);
    hi_ = static_cast<std::int64_t>(static_cast<std::uint64_t>(hi_) +
                                    static_cast<std::uint64_t>(hi) + carry);
  }

  static constexpr std::uint64_t kMantissa = (std::uint64_t{1} << 52) - 1;
  static constexpr std::uint64_t kImplicit = std::uint64_t{1} << 52;

  VCZ_EXACT_HD U128 lo() const {
    return (static_cast<U128>(lo1_) << 64) | lo0_;
  }

  // A 192-bit two's complement integer (64-bit words keep the struct 8-byte aligned).
  std::uint64_t lo0_ = 0, lo1_ = 0;  // bits 0..127
  std::int64_t hi_ = 0;              // bits 128..191 (the sign)
  std::uint32_t special_ = 0;        // non-finite terms seen (kNaN, kPosInf, kNegInf)
};

/// @brief A sum whose terms arrive in work units (a statistic's accumulate(unit)): the terms of a
/// unit are added in double precision, in order, and flush() at the end of the unit adds that
/// subtotal exactly to an ExactSum. Partitions of the plan made of whole units (threads, MPI
/// ranks), merged with += in any grouping, give the same value as one pass: the terms of each
/// unit are added in the same order, and the units' subtotals exactly. (As fast as a double per
/// term; the value depends on where units end, as any floating-point sum would.)
class StagedSum {
 public:
  /// @brief Add one term of the current unit.
  void operator+=(double v) { unit_ += v; }
  /// @brief End the current unit.
  void flush() {
    total_ += unit_;
    unit_ = 0;
  }
  /// @brief Absorb the sum of a later partition (whose last unit may still be staged).
  StagedSum& operator+=(const StagedSum& o) {
    flush();
    total_ += o.total_;
    total_ += o.unit_;
    return *this;
  }
  /// @brief The sum, rounded to the nearest double.
  double value() const {
    ExactSum t = total_;
    t += unit_;
    return t.value();
  }

 private:
  ExactSum total_;
  double unit_ = 0;
};

}  // namespace vczstats::stats
