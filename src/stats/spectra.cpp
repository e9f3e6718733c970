// Whole-selection reductions over the allele counts: site frequency spectra and Patterson's
// f-statistics with block-jackknife standard errors. Definitions: tests/tools/POPGEN.md §6-7.

#include <cmath>
#include <limits>

#include "stats/sfs_projection.hpp"
#include "stats/statistic_support.hpp"
#include "vczstats/exact_sum.hpp"
#include "vczstats/statistics.hpp"

namespace vczstats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Site frequency spectra: per population, or the joint spectrum of two.
class Sfs final : public Statistic {
 public:
  Sfs(const Query& q, const SfsOptions& o)
      : q_(q), o_(o), ploidy_(q.store.has_genotypes() ? q.store.ploidy() : 2) {
    if (!o.joint.empty()) {
      const auto ab = q.population_list(o.joint, 2, "--joint");
      joint_ = {ab[0], ab[1]};
      n1_ = q.pops.sizes[static_cast<std::size_t>(ab[0])] * ploidy_;
      n2_ = q.pops.sizes[static_cast<std::size_t>(ab[1])] * ploidy_;
      table_.assign(static_cast<std::size_t>((n1_ + 1) * (n2_ + 1)), 0);
    } else {
      spectra_.resize(static_cast<std::size_t>(q.pops.count()));
      used_.assign(spectra_.size(), 0);
      for (std::size_t p = 0; p < spectra_.size(); ++p)
        spectra_[p].assign(static_cast<std::size_t>(q.pops.sizes[p] * ploidy_ + 1), 0);
    }
  }
  std::string name() const override { return "sfs"; }
  PassNeeds needs() const override { return stats::sfs_pass_needs(); }

  void accumulate(const UnitData& u) override {
    for (std::int64_t r = 0; r < u.rows(); ++r) {
      if (!u.selected(r)) continue;
      const int k = u.variants->num_alleles(r);
      const int anc = u.ancestral[static_cast<std::size_t>(r)];
      if (joint_) {
        const auto i = derived(u, r, k, anc, joint_->first),
                   j = derived(u, r, k, anc, joint_->second);
        if (i < 0 || j < 0) continue;
        ++table_[static_cast<std::size_t>(i * (n2_ + 1) + j)];
        any_ = true;
      } else {
        for (int p = 0; p < u.layout.pops; ++p) {
          const auto i = derived(u, r, k, anc, p);
          if (i < 0) continue;
          ++spectra_[static_cast<std::size_t>(p)][static_cast<std::size_t>(i)];
          used_[static_cast<std::size_t>(p)] = 1;
        }
      }
    }
  }

  void merge(Statistic& later) override {
    auto& o = stats::detail::same_statistic(*this, later);
    for (std::size_t i = 0; i < table_.size(); ++i) table_[i] += o.table_[i];
    any_ = any_ || o.any_;
    for (std::size_t p = 0; p < spectra_.size(); ++p) {
      for (std::size_t i = 0; i < spectra_[p].size(); ++i) spectra_[p][i] += o.spectra_[p][i];
      used_[p] = used_[p] | o.used_[p];
    }
  }

  Table finish() override { return joint_ ? joint_table() : spectra_table(); }

  void save(ByteWriter& w) const override {
    w.put_string(name());
    w.put_vector(table_);
    w.put<std::uint8_t>(any_);
    w.put_vector(used_);
    for (const auto& s : spectra_) w.put_vector(s);
  }
  void load(ByteReader& r) override {
    r.expect(name());
    auto table = r.get_vector<std::uint64_t>();
    any_ = r.get<std::uint8_t>() != 0;
    auto used = r.get_vector<char>();
    if (table.size() != table_.size() || used.size() != used_.size())
      throw FormatError("statistic state: a spectrum of other sizes");
    table_ = std::move(table);
    used_ = std::move(used);
    for (auto& s : spectra_) {
      auto v = r.get_vector<std::uint64_t>();
      if (v.size() != s.size()) throw FormatError("statistic state: a spectrum of other sizes");
      s = std::move(v);
    }
  }

 private:
  // Derived count of population p at a site, or -1 when the site is not used for p: biallelic,
  // ancestral allele known, every member of p with a complete call of the store's ploidy.
  std::int64_t derived(const UnitData& u, std::int64_t r, int num_alleles, int anc, int p) const {
    if (num_alleles != 2 || anc < 0) return -1;
    const std::int32_t* c = u.site(r, p);
    const std::int64_t n = c[u.layout.alleles + stats::kCalled];
    const std::int64_t members = q_.pops.sizes[static_cast<std::size_t>(p)];
    if (c[u.layout.alleles + stats::kMissing] != 0 || n != members * ploidy_) return -1;
    return n - c[anc];
  }

  Table spectra_table() const {
    Table t;
    const auto pops = stats::detail::population_labels(q_);
    t.add("population", Column::Kind::Label, pops);
    t.add("n", Column::Kind::Int);
    t.add(o_.folded ? "folded" : "derived", Column::Kind::Int);
    t.add("count", Column::Kind::Int);
    if (o_.scaled) t.add("scaled", Column::Kind::Float);
    for (std::size_t p = 0; p < spectra_.size(); ++p) {
      if (!used_[p]) continue;
      auto s = spectra_[p];
      const auto n = static_cast<std::int64_t>(s.size()) - 1;
      if (o_.folded) {
        std::vector<std::uint64_t> f(static_cast<std::size_t>(n / 2 + 1), 0);
        for (std::int64_t i = 0; i <= n; ++i)
          f[static_cast<std::size_t>(std::min(i, n - i))] += s[static_cast<std::size_t>(i)];
        s = f;
      }
      for (std::size_t i = 0; i < s.size(); ++i) {
        t.push_int(0, static_cast<std::int64_t>(p));
        t.push_int(1, n);
        t.push_int(2, static_cast<std::int64_t>(i));
        t.push_int(3, static_cast<std::int64_t>(s[i]));
        if (o_.scaled) {
          const auto di = static_cast<double>(i), dn = static_cast<double>(n);
          const double k = o_.folded ? di * (dn - di) / dn : di;
          t.push_float(4, static_cast<double>(s[i]) * k);
        }
      }
    }
    return t;
  }

  Table joint_table() const {
    // Folded: minor allele counts in each population (scikit-allel's joint_sfs_folded).
    const std::int64_t m1 = o_.folded ? n1_ / 2 : n1_, m2 = o_.folded ? n2_ / 2 : n2_;
    std::vector<std::uint64_t> shown(static_cast<std::size_t>((m1 + 1) * (m2 + 1)), 0);
    for (std::int64_t i = 0; i <= n1_; ++i)
      for (std::int64_t j = 0; j <= n2_; ++j) {
        const std::int64_t a = o_.folded ? std::min(i, n1_ - i) : i;
        const std::int64_t b = o_.folded ? std::min(j, n2_ - j) : j;
        shown[static_cast<std::size_t>(a * (m2 + 1) + b)] +=
            table_[static_cast<std::size_t>(i * (n2_ + 1) + j)];
      }
    const std::string kind = o_.folded ? "folded" : "derived";
    Table t;
    const auto pops = stats::detail::population_labels(q_);
    t.add("pop1", Column::Kind::Label, pops);
    t.add("pop2", Column::Kind::Label, pops);
    t.add("n1", Column::Kind::Int);
    t.add("n2", Column::Kind::Int);
    t.add(kind + "1", Column::Kind::Int);
    t.add(kind + "2", Column::Kind::Int);
    t.add("count", Column::Kind::Int);
    for (std::int64_t i = 0; any_ && i <= m1; ++i)
      for (std::int64_t j = 0; j <= m2; ++j) {
        int c = 0;
        for (std::int64_t v :
             {std::int64_t{joint_->first}, std::int64_t{joint_->second}, n1_, n2_, i, j,
              static_cast<std::int64_t>(shown[static_cast<std::size_t>(i * (m2 + 1) + j)])})
          t.push_int(c++, v);
      }
    return t;
  }

  const Query& q_;
  SfsOptions o_;
  std::int64_t ploidy_;
  std::optional<std::pair<int, int>> joint_;
  std::int64_t n1_ = 0, n2_ = 0;
  std::vector<std::uint64_t> table_;
  bool any_ = false;
  std::vector<std::vector<std::uint64_t>> spectra_;
  std::vector<char> used_;
};

/// Patterson's f2, f3 or D over biallelic sites, with a delete-one block jackknife over blocks
/// of `blocks` consecutive biallelic sites (block b: biallelic sites b·N .. b·N + N - 1 of the
/// selection, whatever the partitions).
class Fstats final : public Statistic {
 public:
  Fstats(const Query& q, const FstatsOptions& o) : o_(o) {
    const int given = !o.f2.empty() + !o.f3.empty() + !o.d.empty();
    if (given != 1) throw UsageError("fstats: give exactly one of --f2, --f3, --d");
    if (o.blocks < 0) throw UsageError("--blocks must be positive");
    kind_ = !o.f2.empty() ? "f2" : !o.f3.empty() ? "f3" : "d";
    spec_ = kind_ == "f2" ? o.f2 : kind_ == "f3" ? o.f3 : o.d;
    const std::size_t n = kind_ == "f2" ? 2 : kind_ == "f3" ? 3 : 4;
    groups_ = q.population_list(spec_, n, kind_ == "f2" ? "--f2" : kind_ == "f3" ? "--f3" : "--d");
  }
  std::string name() const override { return "fstats"; }
  PassNeeds needs() const override {
    PassNeeds n;
    n.counts = true;
    n.alleles = true;
    return n;
  }
  void begin(const stats::SiteCursor& cursor) override { before_ = cursor.biallelic; }

  void accumulate(const UnitData& u) override {
    const int alleles = u.layout.alleles;
    const std::size_t first_block = blocks_.empty() ? 0 : blocks_.size() - 1;  // touched here
    for (std::int64_t r = 0; r < u.rows(); ++r) {
      if (!u.selected(r) || u.variants->num_alleles(r) != 2) continue;
      const std::int64_t index = before_ + n_sites_;  // of this site among biallelic sites
      ++n_sites_;
      double f[4], hhat[4];
      std::int64_t n[4];
      for (std::size_t g = 0; g < groups_.size(); ++g) {
        const std::int32_t* c = u.site(r, groups_[g]);
        n[g] = c[alleles + stats::kCalled];
        const auto dn = static_cast<double>(n[g]);
        f[g] = n[g] > 0 ? c[1] / dn : kNaN;
        hhat[g] = n[g] >= 2 ? static_cast<double>(c[0]) * c[1] / (dn * (dn - 1)) : kNaN;
      }
      double num, den;
      if (kind_ == "f2") {
        num = (f[0] - f[1]) * (f[0] - f[1]) - hhat[0] / static_cast<double>(n[0]) -
              hhat[1] / static_cast<double>(n[1]);
        den = 1.0;
      } else if (kind_ == "f3") {
        num = (f[0] - f[1]) * (f[0] - f[2]) - hhat[0] / static_cast<double>(n[0]);
        den = 2 * hhat[0];
      } else {
        num = (f[0] - f[1]) * (f[2] - f[3]);
        den = (f[0] + f[1] - 2 * f[0] * f[1]) * (f[2] + f[3] - 2 * f[2] * f[3]);
      }
      Block* block = nullptr;
      if (o_.blocks > 0) {
        const std::int64_t b = index / o_.blocks;
        if (blocks_.empty() || blocks_.back().index != b) blocks_.push_back({b, 0, {}, {}});
        block = &blocks_.back();
        ++block->sites;
      }
      if (!std::isnan(num) && !std::isnan(den)) {
        ++n_defined_;
        num_sum_ += num;
        den_sum_ += den;
        if (block) {
          block->num += num;
          block->den += den;
        }
      }
    }
    // The unit ends (StagedSum).
    num_sum_.flush();
    den_sum_.flush();
    for (std::size_t b = first_block; b < blocks_.size(); ++b) {
      blocks_[b].num.flush();
      blocks_[b].den.flush();
    }
  }

  void merge(Statistic& later) override {
    auto& o = stats::detail::same_statistic(*this, later);
    n_sites_ += o.n_sites_;
    n_defined_ += o.n_defined_;
    num_sum_ += o.num_sum_;
    den_sum_ += o.den_sum_;
    for (const auto& b : o.blocks_) {
      if (!blocks_.empty() && blocks_.back().index == b.index) {  // a block cut in two
        blocks_.back().sites += b.sites;
        blocks_.back().num += b.num;
        blocks_.back().den += b.den;
      } else {
        blocks_.push_back(b);
      }
    }
    o.blocks_.clear();
  }

  void save(ByteWriter& w) const override {
    w.put_string(name());
    w.put(before_);
    w.put(n_sites_);
    w.put(n_defined_);
    w.put(num_sum_);
    w.put(den_sum_);
    w.put_vector(blocks_);
  }
  void load(ByteReader& r) override {
    r.expect(name());
    before_ = r.get<std::int64_t>();
    n_sites_ = r.get<std::int64_t>();
    n_defined_ = r.get<std::int64_t>();
    num_sum_ = r.get<stats::StagedSum>();
    den_sum_ = r.get<stats::StagedSum>();
    blocks_ = r.get_vector<Block>();
  }

  Table finish() override {
    const double num_sum = num_sum_.value(), den_sum = den_sum_.value();
    const double estimate = den_sum != 0 ? num_sum / den_sum : kNaN;
    // Delete-one jackknife over the complete blocks (a last, partial block is left out).
    std::vector<const Block*> full;
    for (const auto& b : blocks_)
      if (b.sites == o_.blocks) full.push_back(&b);
    double se = kNaN;
    const auto nb = full.size();
    if (nb >= 2) {
      double tn = 0, td = 0;
      for (const Block* b : full) {
        tn += b->num.value();
        td += b->den.value();
      }
      std::vector<double> v(nb);
      double mean = 0;
      for (std::size_t j = 0; j < nb; ++j)
        mean += v[j] = (tn - full[j]->num.value()) / (td - full[j]->den.value());
      mean /= static_cast<double>(nb);
      double ss = 0;
      for (double x : v) ss += (x - mean) * (x - mean);
      se = std::sqrt(static_cast<double>(nb - 1) / static_cast<double>(nb) * ss);
    }
    Table t;
    t.add("stat", Column::Kind::Label,
          std::make_shared<const std::vector<std::string>>(std::vector<std::string>{kind_}));
    t.add("pops", Column::Kind::Label,
          std::make_shared<const std::vector<std::string>>(std::vector<std::string>{spec_}));
    for (const char* c : {"n_sites", "n_defined"}) t.add(c, Column::Kind::Int);
    for (const char* c : {"num_sum", "den_sum", "estimate"}) t.add(c, Column::Kind::Float);
    t.add("n_blocks", Column::Kind::Int);
    for (const char* c : {"se", "z"}) t.add(c, Column::Kind::Float);
    t.push_int(0, 0);
    t.push_int(1, 0);
    t.push_int(2, n_sites_);
    t.push_int(3, n_defined_);
    t.push_float(4, num_sum);
    t.push_float(5, den_sum);
    t.push_float(6, estimate);
    t.push_int(7, static_cast<std::int64_t>(nb));
    t.push_float(8, se);
    t.push_float(9, !std::isnan(se) && se != 0 ? estimate / se : kNaN);
    return t;
  }

 private:
  struct Block {
    std::int64_t index = 0, sites = 0;
    stats::StagedSum num, den;  // a block cut by a partition merges to the same bits
  };
  FstatsOptions o_;
  std::string kind_, spec_;
  std::vector<int> groups_;
  std::int64_t before_ = 0, n_sites_ = 0, n_defined_ = 0;
  stats::StagedSum num_sum_, den_sum_;  // flushed at the end of each unit
  std::vector<Block> blocks_;
};

}  // namespace

std::unique_ptr<Statistic> make_sfs(const Query& q, const SfsOptions& options) {
  if (!options.project.empty() || options.preview) return stats::make_projected_sfs(q, options);
  return std::make_unique<Sfs>(q, options);
}

std::unique_ptr<Statistic> make_fstats(const Query& q, const FstatsOptions& options) {
  return std::make_unique<Fstats>(q, options);
}

}  // namespace vczstats
