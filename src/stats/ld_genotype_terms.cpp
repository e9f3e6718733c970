// Ragsdale & Gravel's unbiased two-locus estimators from genotype tables (ld_genotype_terms.hpp):
// each statistic built once as a polynomial in the nine genotype frequencies, then evaluated
// per pair as a sum of falling-factorial products.

#include "stats/ld_genotype_terms.hpp"

#include <algorithm>
#include <map>

#include "vczstats/error.hpp"

namespace vczstats::stats::moments {
namespace {

__extension__ typedef __int128 Wide;

using Monomial = std::array<std::uint8_t, 9>;  // the power of each cell's frequency

/// A polynomial with integer coefficients in the nine frequencies.
using Poly = std::map<Monomial, std::int64_t>;

/// Σ w[c] g_c over the cells c = 3 x + y.
Poly linear(std::int64_t (*w)(int x, int y)) {
  Poly p;
  for (int x = 0; x < 3; ++x)
    for (int y = 0; y < 3; ++y) {
      const std::int64_t c = w(x, y);
      if (c == 0) continue;
      Monomial m{};
      m[static_cast<std::size_t>(3 * x + y)] = 1;
      p[m] = c;
    }
  return p;
}

Poly mul(const Poly& a, const Poly& b) {
  Poly out;
  for (const auto& [ma, ca] : a)
    for (const auto& [mb, cb] : b) {
      Monomial m;
      for (std::size_t k = 0; k < m.size(); ++k) m[k] = static_cast<std::uint8_t>(ma[k] + mb[k]);
      out[m] += ca * cb;
    }
  std::erase_if(out, [](const auto& t) { return t.second == 0; });
  return out;
}

Poly sub(const Poly& a, const Poly& b) {
  Poly out = a;
  for (const auto& [m, c] : b) out[m] -= c;
  std::erase_if(out, [](const auto& t) { return t.second == 0; });
  return out;
}

/// The monomials' numerators' recipe (GenotypeEstimators::Step), built as polynomials are
/// compiled.
class MonomialIndex {
 public:
  using Step = GenotypeEstimators::Step;
  /// The index of monomial @p m, its parents added first.
  std::uint32_t operator()(const Monomial& m) {
    std::size_t last = m.size();
    for (std::size_t k = 0; k < m.size(); ++k)
      if (m[k] > 0) last = k;
    if (last == m.size()) return 0;  // the constant
    const auto it = index_.find(m);
    if (it != index_.end()) return it->second;
    Monomial parent = m;
    --parent[last];
    const std::uint32_t from = (*this)(parent);
    if (steps_.size() + 1 >= GenotypeEstimators::kMaxMonomials)
      throw Error("ld-stats: genotype monomials of degree > 4");
    steps_.push_back({from, static_cast<std::uint8_t>(last), m[last]});
    const auto k = static_cast<std::uint32_t>(steps_.size());
    index_[m] = k;
    return k;
  }
  std::vector<Step> take() { return std::move(steps_); }

 private:
  std::map<Monomial, std::uint32_t> index_;
  std::vector<Step> steps_;
};

/// @p p / @p den compiled (p homogeneous), its monomials indexed by @p index.
GenotypeEstimators::Compiled compile(const Poly& p, std::int64_t den, MonomialIndex& index) {
  GenotypeEstimators::Compiled c;
  c.den = den;
  c.degree = -1;
  for (const auto& [m, coef] : p) {
    int degree = 0;
    for (const std::uint8_t k : m) degree += k;
    if (degree > 4) throw Error("ld-stats: a genotype monomial of degree > 4");
    if (c.degree >= 0 && degree != c.degree) throw Error("ld-stats: a polynomial not homogeneous");
    c.degree = degree;
    c.terms.emplace_back(coef, index(m));
  }
  if (c.degree < 0) c.degree = 0;
  return c;
}

/// Every monomial's numerator Π (n_c)_k_c (@p steps) from the cells of @p t, in @p out.
template <class I>
void numerators(const std::vector<GenotypeEstimators::Step>& steps, const GenotypeTable& t,
                std::array<I, GenotypeEstimators::kMaxMonomials>& out) {
  out[0] = 1;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const auto& s = steps[k];
    out[k + 1] = out[s.parent] * static_cast<I>(t.cell[s.cell] - (s.power - 1));
  }
}

/// The estimator @p c from the monomials' numerators @p num and the table's n: the integer
/// numerator, divided once by den (n)_degree.
template <class I>
double evaluate(const GenotypeEstimators::Compiled& c,
                const std::array<I, GenotypeEstimators::kMaxMonomials>& num, std::int64_t n) {
  I x = 0;
  for (const auto& [coef, at] : c.terms) x += static_cast<I>(coef) * num[at];
  Wide den = c.den;
  for (int k = 0; k < c.degree; ++k) den *= n - k;
  return static_cast<double>(x) / static_cast<double>(den);
}

/// The sum of the absolute values of @p c's coefficients.
std::int64_t magnitude(const GenotypeEstimators::Compiled& c) {
  std::int64_t m = 0;
  for (const auto& t : c.terms) m += t.first < 0 ? -t.first : t.first;
  return m;
}

}  // namespace

GenotypeTable genotype_table(const ld::GenotypeCounts& c) {
  GenotypeTable t;
  t.n = c.n;
  auto& n = t.cell;
  n[4] = c.t11;
  n[5] = c.t12;
  n[7] = c.t21;
  n[8] = c.t22;
  n[3] = c.r1 - c.t11 - c.t12;  // het at the first, REF/REF at the second
  n[6] = c.r2 - c.t21 - c.t22;
  n[1] = c.c1 - c.t11 - c.t21;
  n[2] = c.c2 - c.t12 - c.t22;
  n[0] = c.n - c.r1 - c.r2 - n[1] - n[2];
  return t;
}

GenotypeEstimators::GenotypeEstimators(bool cross, std::uint32_t need)
    : cross_(cross), need_(need) {
  const Poly s = linear([](int, int) -> std::int64_t { return 1; });
  const Poly ex = linear([](int x, int) -> std::int64_t { return x; });
  const Poly ey = linear([](int, int y) -> std::int64_t { return y; });
  const Poly exy = linear([](int x, int y) -> std::int64_t { return x * y; });
  const Poly zp = linear([](int x, int) -> std::int64_t { return x - 1; });     // 1 - 2p
  const Poly zq = linear([](int, int y) -> std::int64_t { return y - 1; });     // 1 - 2q
  const Poly ref_a = linear([](int x, int) -> std::int64_t { return 2 - x; });  // 2p
  const Poly ref_b = linear([](int, int y) -> std::int64_t { return 2 - y; });  // 2q
  const Poly d2 = sub(mul(exy, s), mul(ex, ey));                                // 2 D
  // A, a, B, b (PopFactors::g's draws), each twice its frequency.
  const std::array<const Poly*, 4> draw{&ref_a, &ex, &ref_b, &ey};
  MonomialIndex index;
  if (cross_) {
    d_ = compile(d2, 2, index);
    dzp_ = compile(mul(d2, zp), 2, index);
    dzq_ = compile(mul(d2, zq), 2, index);
    zp_ = compile(zp, 1, index);
    zq_ = compile(zq, 1, index);
    zz_ = compile(mul(zp, zq), 1, index);
  }
  dd_ = compile(mul(d2, d2), 4, index);
  dz_ = compile(mul(d2, mul(zp, zq)), 2, index);
  for (std::uint32_t set = 1; set < 16; ++set) {
    if (!((need_ >> set) & 1)) continue;
    Poly p;
    std::int64_t den = 1;
    bool first = true;
    for (std::size_t k = 0; k < 4; ++k)
      if ((set >> k) & 1) {
        p = first ? *draw[k] : mul(p, *draw[k]);
        first = false;
        den *= 2;
      }
    g_[set] = compile(p, den, index);
  }
  steps_ = index.take();
  // A numerator is at most magnitude × n^4 (each product of falling factorials at most n^4):
  // 64 bits while that stays below 2^62.
  std::int64_t m = 1;
  for (const Compiled* c : {&d_, &dzp_, &dzq_, &zp_, &zq_, &zz_, &dd_, &dz_})
    m = std::max(m, magnitude(*c));
  for (const Compiled& c : g_) m = std::max(m, magnitude(c));
  narrow_ = 1;
  auto fits = [m](std::int64_t n) {
    return static_cast<Wide>(m) * n * n * n * n < (Wide{1} << 62);
  };
  while (fits(2 * narrow_)) narrow_ *= 2;
  for (std::int64_t step = narrow_ / 2; step > 0; step /= 2)
    if (fits(narrow_ + step)) narrow_ += step;
}

void GenotypeEstimators::factors(const GenotypeTable& t, PopFactors& f) const {
  if (t.n <= narrow_)
    factors_in<std::int64_t>(t, f);
  else
    factors_in<Wide>(t, f);
}

template <class I>
void GenotypeEstimators::factors_in(const GenotypeTable& t, PopFactors& f) const {
  std::array<I, kMaxMonomials> num;
  numerators(steps_, t, num);
  f.dd = evaluate(dd_, num, t.n);
  f.dz = evaluate(dz_, num, t.n);
  if (cross_) {
    f.d = evaluate(d_, num, t.n);
    f.dzp = evaluate(dzp_, num, t.n);
    f.dzq = evaluate(dzq_, num, t.n);
    f.zp = evaluate(zp_, num, t.n);
    f.zq = evaluate(zq_, num, t.n);
    f.zz = evaluate(zz_, num, t.n);
  }
  f.g[0] = 1;
  for (std::uint32_t set = 1; set < 16; ++set)
    if ((need_ >> set) & 1) f.g[set] = evaluate(g_[set], num, t.n);
}

}  // namespace vczstats::stats::moments
