// Per-sample missingness and inbreeding coefficient (plink2 --missing .smiss and --het) from
// the per-sample sums of the heavy pass.

#include <algorithm>
#include <numeric>

#include "stats/statistic_support.hpp"
#include "vczstats/statistics.hpp"

namespace vczstats {
namespace {

class SampleStatistic final : public Statistic {
 public:
  explicit SampleStatistic(const Query& q)
      : q_(q), sums_(static_cast<std::size_t>(q.samples.size())) {}
  std::string name() const override { return "sample-stats"; }
  PassNeeds needs() const override {
    PassNeeds n;
    n.sample_sums = true;
    return n;
  }
  void accumulate_samples(std::span<const stats::SampleSums> sums) override {
    if (sums.size() != sums_.size())
      throw Error("sample-stats: per-sample sums of another selection");
    for (std::size_t i = 0; i < sums.size(); ++i) sums_[i].merge(sums[i]);
  }
  void merge(Statistic& later) override {
    accumulate_samples(stats::detail::same_statistic(*this, later).sums_);
  }
  void save(ByteWriter& w) const override {
    w.put_string(name());
    w.put_vector(sums_);
  }
  void load(ByteReader& r) override {
    r.expect(name());
    auto sums = r.get_vector<stats::SampleSums>();
    if (sums.size() != sums_.size()) throw FormatError("statistic state: another sample selection");
    sums_ = std::move(sums);
  }

  Table finish() override {
    // Report in store order, whatever order the populations gave the selection.
    std::vector<std::size_t> order(sums_.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return q_.samples.indices[a] < q_.samples.indices[b];
    });
    auto names = std::make_shared<std::vector<std::string>>();
    names->reserve(order.size());
    for (std::size_t k : order) names->emplace_back(q_.store.sample_ids()[q_.samples.indices[k]]);
    Table t;
    t.add("sample", Column::Kind::Label, std::move(names));
    t.add("population", Column::Kind::Label, stats::detail::population_labels(q_));
    for (const char* c : {"missing_ct", "obs_ct"}) t.add(c, Column::Kind::Int);
    t.add("f_miss", Column::Kind::Float);
    t.add("o_hom", Column::Kind::Int);
    t.add("e_hom", Column::Kind::Float);
    t.add("het_obs_ct", Column::Kind::Int);
    t.add("f", Column::Kind::Float);
    for (std::size_t r = 0; r < order.size(); ++r) {
      const auto& s = sums_[order[r]];
      const double e_hom = s.e_hom.value();
      const double den = static_cast<double>(s.het_sites) - e_hom;
      t.push_int(0, static_cast<std::int64_t>(r));
      t.push_int(1, q_.pops.of[order[r]]);
      t.push_int(2, s.missing_ct);
      t.push_int(3, s.obs_ct);
      t.push_float(4, stats::detail::ratio(static_cast<double>(s.missing_ct),
                                           static_cast<double>(s.obs_ct)));
      t.push_int(5, s.o_hom);
      t.push_float(6, e_hom);
      t.push_int(7, s.het_sites);
      t.push_float(8, stats::detail::ratio(static_cast<double>(s.o_hom) - e_hom, den));
    }
    return t;
  }

 private:
  const Query& q_;
  std::vector<stats::SampleSums> sums_;
};

}  // namespace

std::unique_ptr<Statistic> make_sample_stats(const Query& q) {
  return std::make_unique<SampleStatistic>(q);
}

}  // namespace vczstats
