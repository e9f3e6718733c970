// Diversity and divergence reductions over allele counts (definitions: tests/tools/POPGEN.md).

#include "vczstats/popgen.hpp"

#include "stats/tallies_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vczstats::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::int64_t called(const std::int32_t* c, int alleles) {
  return c[alleles + kCalled];
}

double sum_squares(const std::int32_t* c, int alleles) {
  double s = 0;
  for (int a = 0; a < alleles; ++a) s += static_cast<double>(c[a]) * c[a];
  return s;
}

}  // namespace

double Harmonic::operator()(std::int64_t n, int power) {
  auto& h = power == 1 ? h1_ : h2_;
  while (static_cast<std::int64_t>(h.size()) <= n) {
    const auto i = static_cast<double>(h.size() - 1);  // h[m] = sum_{i=1}^{m-1}
    h.push_back(h.back() + (power == 1 ? 1.0 / i : 1.0 / (i * i)));
  }
  return n < 1 ? 0.0 : h[static_cast<std::size_t>(n)];
}

double site_pi(const std::int32_t* c, int alleles) {
  const auto n = static_cast<double>(called(c, alleles));
  if (n < 2) return kNaN;
  return (n * n - sum_squares(c, alleles)) / (n * (n - 1));
}

void DiversitySums::add(const std::int32_t* c, int alleles, Harmonic& harmonic, int ancestral) {
  ++n_sites;
  const std::int64_t n = called(c, alleles);
  n_max = std::max(n_max, n);
  if (n < 2) return;
  const auto dn = static_cast<double>(n);
  pi_sum += site_pi(c, alleles);
  int present = 0, derived_present = 0;
  bool singleton = false;
  std::int64_t derived = 0;
  for (int a = 0; a < alleles; ++a) {
    if (c[a] == 0) continue;
    ++present;
    singleton = singleton || c[a] == 1;
    if (a != ancestral) {
      ++derived_present;
      derived = c[a];
    }
  }
  if (present >= 2) {
    ++n_seg;
    theta_w += 1.0 / harmonic(n);
    if (singleton) ++singletons;
  }
  if (ancestral < 0 || derived_present > 1) return;  // unknown ancestor, or two derived alleles
  ++n_unfolded;
  n_max_u = std::max(n_max_u, n);
  if (derived > 0 && derived < n) {
    const auto i = static_cast<double>(derived);
    ++s_unfolded;
    theta_pi_u += 2.0 * i * (dn - i) / (dn * (dn - 1));
    theta_h += 2.0 * i * i / (dn * (dn - 1));
    theta_l += i / (dn - 1);
  }
}

void DiversitySums::merge(const DiversitySums& o) {
  n_sites += o.n_sites;
  n_seg += o.n_seg;
  singletons += o.singletons;
  n_unfolded += o.n_unfolded;
  s_unfolded += o.s_unfolded;
  n_max = std::max(n_max, o.n_max);
  n_max_u = std::max(n_max_u, o.n_max_u);
  pi_sum += o.pi_sum;
  theta_w += o.theta_w;
  theta_pi_u += o.theta_pi_u;
  theta_h += o.theta_h;
  theta_l += o.theta_l;
}

void DiversitySums::flush() {
  for (StagedSum* s : {&pi_sum, &theta_w, &theta_pi_u, &theta_h, &theta_l}) s->flush();
}

void DivergenceSums::flush() {
  for (StagedSum* s : {&dxy_sum, &pi1_sum, &pi2_sum, &hudson_num, &hudson_den, &wc_a, &wc_abc,
                       &wc_fst_sum, &nei_num, &nei_ht})
    s->flush();
}

void DivergenceSums::merge(const DivergenceSums& o) {
  n_sites += o.n_sites;
  n_hudson += o.n_hudson;
  n_wc += o.n_wc;
  dxy_sum += o.dxy_sum;
  pi1_sum += o.pi1_sum;
  pi2_sum += o.pi2_sum;
  hudson_num += o.hudson_num;
  hudson_den += o.hudson_den;
  wc_a += o.wc_a;
  wc_abc += o.wc_abc;
  wc_fst_sum += o.wc_fst_sum;
  nei_num += o.nei_num;
  nei_ht += o.nei_ht;
}

DiversityResult finish_diversity(const DiversitySums& s, Harmonic& harmonic) {
  DiversityResult r{kNaN, s.theta_pi_u.value() - s.theta_h.value(), kNaN, kNaN};
  {  // Tajima's D with n = n_max
    const std::int64_t n = s.n_max;
    const auto S = static_cast<double>(s.n_seg);
    if (s.n_seg > 0 && n >= 2) {
      const auto dn = static_cast<double>(n);
      const double a1 = harmonic(n), a2 = harmonic(n, 2);
      const double b1 = (dn + 1) / (3 * (dn - 1));
      const double b2 = 2 * (dn * dn + dn + 3) / (9 * dn * (dn - 1));
      const double c1 = b1 - 1 / a1;
      const double c2 = b2 - (dn + 2) / (a1 * dn) + a2 / (a1 * a1);
      const double e1 = c1 / a1, e2 = c2 / (a1 * a1 + a2);
      const double var = e1 * S + e2 * S * (S - 1);
      if (var > 0) r.tajima_d = (s.pi_sum.value() - S / a1) / std::sqrt(var);
    }
  }
  {  // normalised Fay & Wu's H and Zeng's E (Zeng et al. 2006), n = n_max over unfolded sites
    const std::int64_t n = s.n_max_u;
    const auto S = static_cast<double>(s.s_unfolded);
    if (s.s_unfolded > 0 && n >= 3) {
      const auto dn = static_cast<double>(n);
      const double a = harmonic(n), b = harmonic(n, 2), bn1 = b + 1.0 / (dn * dn);
      const double theta = S / a, theta2 = S * (S - 1) / (a * a + b);
      const double var_h =
          (dn - 2) / (6 * (dn - 1)) * theta +
          (18 * dn * dn * (3 * dn + 2) * bn1 - (88 * dn * dn * dn + 9 * dn * dn - 13 * dn + 6)) /
              (9 * dn * (dn - 1) * (dn - 1)) * theta2;
      const double var_e = (dn / (2 * (dn - 1)) - 1 / a) * theta +
                           (b / (a * a) + 2 * (dn / (dn - 1)) * (dn / (dn - 1)) * b -
                            2 * (dn * b - dn + 1) / ((dn - 1) * a) - (3 * dn + 1) / (dn - 1)) *
                               theta2;
      if (var_h > 0)
        r.fay_wu_h_norm = (s.theta_pi_u.value() - s.theta_l.value()) / std::sqrt(var_h);
      if (var_e > 0) r.zeng_e = (s.theta_l.value() - S / a) / std::sqrt(var_e);
    }
  }
  return r;
}

void DivergenceSums::add(const std::int32_t* c1, const std::int32_t* c2, int alleles,
                         const std::int32_t* t1, const std::int32_t* t2) {
  ++n_sites;
  const std::int64_t n1 = called(c1, alleles), n2 = called(c2, alleles);
  const double pi1 = site_pi(c1, alleles), pi2 = site_pi(c2, alleles);
  if (!std::isnan(pi1)) pi1_sum += pi1;
  if (!std::isnan(pi2)) pi2_sum += pi2;
  if (n1 == 0 || n2 == 0) return;
  const auto d1 = static_cast<double>(n1), d2 = static_cast<double>(n2);
  double shared = 0;  // sum_a p1_a p2_a
  for (int a = 0; a < alleles; ++a) shared += static_cast<double>(c1[a]) * c2[a];
  const double dxy = 1.0 - shared / (d1 * d2);
  dxy_sum += dxy;
  if (n1 >= 2 && n2 >= 2) {
    ++n_hudson;
    hudson_num += dxy - (pi1 + pi2) / 2;
    hudson_den += dxy;
  }
  {  // Nei's Gst, equal population weights
    const double hs1 = 1.0 - sum_squares(c1, alleles) / (d1 * d1);
    const double hs2 = 1.0 - sum_squares(c2, alleles) / (d2 * d2);
    const double ht = (hs1 + hs2) / 4 + dxy / 2;
    nei_num += ht - (hs1 + hs2) / 2;
    nei_ht += ht;
  }
  // Weir & Cockerham (1984) from the complete diploid calls, summed over every allele u
  // (vcftools --weir-fst-pop): p = u's frequency, h = the fraction of heterozygous carriers of u.
  if (!t1 || !t2) return;
  const std::int32_t* tl[2] = {t1, t2};
  double n[2];
  for (int i = 0; i < 2; ++i) {
    n[i] = tl[i][tallies::calls(alleles)];
    if (n[i] == 0) return;
  }
  const double r = 2, n_sum = n[0] + n[1], n_bar = n_sum / r;
  const double n_c = (n_sum - (n[0] * n[0] + n[1] * n[1]) / n_sum) / (r - 1);
  if (n_bar <= 1 || n_c == 0) return;
  double A = 0, B = 0, C = 0;
  for (int u = 0; u < alleles; ++u) {
    double pu[2], hu[2];
    for (int i = 0; i < 2; ++i) {
      pu[i] = tl[i][u] / (2 * n[i]);
      hu[i] = tl[i][tallies::het(alleles) + u] / n[i];
    }
    const double p_bar = (n[0] * pu[0] + n[1] * pu[1]) / n_sum;
    const double h_bar = (n[0] * hu[0] + n[1] * hu[1]) / n_sum;
    const double s2 =
        (n[0] * (pu[0] - p_bar) * (pu[0] - p_bar) + n[1] * (pu[1] - p_bar) * (pu[1] - p_bar)) /
        ((r - 1) * n_bar);
    const double pq = p_bar * (1 - p_bar);
    A += n_bar / n_c * (s2 - (pq - (r - 1) / r * s2 - h_bar / 4) / (n_bar - 1));
    B += n_bar / (n_bar - 1) * (pq - (r - 1) / r * s2 - (2 * n_bar - 1) / (4 * n_bar) * h_bar);
    C += h_bar / 2;
  }
  const double abc = A + B + C;
  if (std::isnan(abc) || abc == 0) return;
  ++n_wc;
  wc_a += A;
  wc_abc += abc;
  wc_fst_sum += A / abc;
}

}  // namespace vczstats::stats
