#pragma once
/// @file random.hpp
/// @brief Private: counter-based random numbers for the simulator. Every random quantity is
/// drawn from a stream keyed by what it belongs to (seed, purpose, variant, population...), so
/// results depend neither on the thread count nor on the order in which work runs, and are the
/// same on every platform (integer hashing and IEEE arithmetic only; no std:: distributions,
/// whose algorithms are implementation-defined).

#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace vczstats::simulate::detail {

/// @brief SplitMix64's finaliser: a bijective 64-bit mix with good avalanche.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// @brief A key from a list of words (order matters).
constexpr std::uint64_t hash_key(std::initializer_list<std::uint64_t> words) {
  std::uint64_t h = 0x6a09e667f3bcc909ull;
  for (std::uint64_t w : words) h = mix64(h ^ mix64(w + 0x9e3779b97f4a7c15ull));
  return h;
}

/// @brief A stream of uniform numbers: SplitMix64 started at a key.
class Stream {
 public:
  explicit constexpr Stream(std::uint64_t key) : state_(key) {}
  constexpr std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    return mix64(state_);
  }
  /// @brief Uniform on [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// @brief Uniform on (0, 1].
  double uniform_pos() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
  /// @brief Uniform integer on [0, n) (multiply-shift: the high word of next() * n; bias
  /// below n / 2^64).
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t a = next(), a_lo = a & 0xffffffffu, a_hi = a >> 32;
    const std::uint64_t b_lo = n & 0xffffffffu, b_hi = n >> 32;
    const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi;
    const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
    return (hi_lo >> 32) + (cross >> 32) + a_hi * b_hi;
  }
  /// @brief Standard normal (Marsaglia's polar method; the second value is dropped so that
  /// the stream stays stateless beyond its counter).
  double normal();
  /// @brief log of a Gamma(shape, 1) variate (Marsaglia & Tsang; shape < 1 through
  /// Gamma(shape + 1) * U^(1/shape), in logs so tiny shapes do not underflow).
  double log_gamma_variate(double shape);
  /// @brief Beta(a, b) through two gamma variates, computed in logs.
  double beta(double a, double b);
  /// @brief Binomial(n, p): inversion for small means, else inversion searching outwards
  /// from the mode (cost O(sqrt(n p (1 - p)))).
  std::int64_t binomial(std::int64_t n, double p);

 private:
  std::uint64_t state_;
};

/// @brief log(n!) (a table below 256, Stirling's series above: relative error < 1e-15).
double log_factorial(std::int64_t n);

}  // namespace vczstats::simulate::detail
