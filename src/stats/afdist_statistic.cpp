// afdist as a statistic: the per-site counts of the heavy pass reduced into the histogram.

#include "stats/statistic_support.hpp"
#include "vczstats/statistics.hpp"

namespace vczstats {
namespace {

class Afdist final : public AfdistStatistic {
 public:
  Afdist(const Query& q, const stats::AfdistOptions& options) {
    acc_.init(options, q.samples.size(), q.store.has_genotypes() ? q.store.ploidy() : 2);
  }
  std::string name() const override { return "afdist"; }
  PassNeeds needs() const override {
    PassNeeds n;
    n.need(ProductNeed(stats::kAfdistCounts, acc_.options().method));
    return n;
  }
  void accumulate(const UnitData& u) override {
    using Sites = std::span<const stats::AfdistSite>;
    if (const Sites* sites = u.product<Sites>(stats::kAfdistCounts)) {
      acc_.accumulate(*sites, u.unit->mask);
      return;
    }
    // No pass ran (no selected sample): the unit's sites with no call.
    zeros_.assign(static_cast<std::size_t>(u.rows()), {});
    acc_.accumulate(zeros_, u.unit->mask);
  }
  void merge(Statistic& later) override {
    acc_.merge(stats::detail::same_statistic(*this, later).acc_);
  }
  stats::AfdistResult result() const override { return acc_.finalize(); }
  void save(ByteWriter& w) const override {
    w.put_string(name());
    const auto [counts, sites] = acc_.state();
    w.put_vector(counts);
    w.put(sites);
  }
  void load(ByteReader& r) override {
    r.expect(name());
    auto counts = r.get_vector<std::uint64_t>();
    acc_.set_state(std::move(counts), r.get<std::int64_t>());
  }
  Table finish() override {
    const auto r = acc_.finalize();
    Table t;
    const int start = t.add("start", Column::Kind::Float);
    const int stop = t.add("stop", Column::Kind::Float);
    const int dist = t.add("prob_dist", Column::Kind::Int);
    for (int c : {start, stop})
      t.columns[static_cast<std::size_t>(c)].single_precision =
          r.method == stats::AfdistMethod::Bcftools;
    for (std::size_t i = 0; i < r.counts.size(); ++i) {
      t.push_float(start, r.edges[i]);
      t.push_float(stop, r.edges[i + 1]);
      t.push_int(dist, static_cast<std::int64_t>(r.counts[i]));
    }
    return t;
  }

 private:
  stats::AfdistAccumulator acc_;
  std::vector<stats::AfdistSite> zeros_;
};

}  // namespace

std::unique_ptr<AfdistStatistic> make_afdist(const Query& q, const stats::AfdistOptions& options) {
  return std::make_unique<Afdist>(q, options);
}

}  // namespace vczstats
