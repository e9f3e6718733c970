// Distributions drawn from counter-based streams (see random.hpp).

#include "simulate/random.hpp"

#include <algorithm>
#include <array>
#include <numbers>

namespace vczstats::simulate::detail {

double log_factorial(std::int64_t n) {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (std::size_t i = 1; i < t.size(); ++i) t[i] = t[i - 1] + std::log(static_cast<double>(i));
    return t;
  }();
  if (n < 256) return n <= 0 ? 0.0 : table[static_cast<std::size_t>(n)];
  const double x = static_cast<double>(n) + 1.0;  // log Gamma(x), Stirling's series
  const double x2 = x * x;
  return (x - 0.5) * std::log(x) - x + 0.5 * std::log(2 * std::numbers::pi) +
         (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / (1260.0 * x2)) / x2) / x;
}

double Stream::normal() {
  for (;;) {
    const double u = 2 * uniform() - 1, v = 2 * uniform() - 1;
    const double s = u * u + v * v;
    if (s > 0 && s < 1) return u * std::sqrt(-2 * std::log(s) / s);
  }
}

double Stream::log_gamma_variate(double shape) {
  if (shape < 1) return log_gamma_variate(shape + 1) + std::log(uniform_pos()) / shape;
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9 * d);
  for (;;) {
    const double x = normal();
    double v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    if (std::log(uniform_pos()) < 0.5 * x * x + d - d * v + d * std::log(v))
      return std::log(d) + std::log(v);
  }
}

double Stream::beta(double a, double b) {
  const double la = log_gamma_variate(a), lb = log_gamma_variate(b);
  return 1 / (1 + std::exp(lb - la));
}

std::int64_t Stream::binomial(std::int64_t n, double p) {
  if (n <= 0 || !(p > 0)) return 0;
  if (p >= 1) return n;
  if (p > 0.5) return n - binomial(n, 1 - p);
  const double q = 1 - p, mean = static_cast<double>(n) * p;
  if (mean < 30) {  // inversion from 0 (Kachitvichyanukul & Schmeiser's BINV)
    const double s = p / q, a = static_cast<double>(n + 1) * s;
    double r = std::exp(static_cast<double>(n) * std::log1p(-p)), u = uniform();
    std::int64_t x = 0;
    while (u > r) {
      u -= r;
      ++x;
      if (x > n) return n;
      r *= a / static_cast<double>(x) - s;
      if (r < 1e-300) return x;  // rounding left u beyond the mass: the tail is empty
    }
    return x;
  }
  // Inversion searching outwards from the mode, alternately above and below it.
  const auto m = std::min(n, static_cast<std::int64_t>(static_cast<double>(n + 1) * p));
  const double pm =
      std::exp(log_factorial(n) - log_factorial(m) - log_factorial(n - m) +
               static_cast<double>(m) * std::log(p) + static_cast<double>(n - m) * std::log1p(-p));
  double u = uniform();
  if (u < pm) return m;
  u -= pm;
  const double up = p / q, down = q / p;
  std::int64_t lo = m, hi = m;
  double plo = pm, phi = pm;
  for (;;) {
    bool moved = false;
    if (hi < n && phi > 1e-300) {
      phi *= static_cast<double>(n - hi) / static_cast<double>(hi + 1) * up;
      ++hi;
      if (u < phi) return hi;
      u -= phi;
      moved = true;
    }
    if (lo > 0 && plo > 1e-300) {
      plo *= static_cast<double>(lo) / static_cast<double>(n - lo + 1) * down;
      --lo;
      if (u < plo) return lo;
      u -= plo;
      moved = true;
    }
    if (!moved) return m;  // rounding left u beyond the mass
  }
}

}  // namespace vczstats::simulate::detail
