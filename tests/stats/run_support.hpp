#pragma once
// Running the library the way the tests need it: a Query from a store, a plan and a selection
// built by the test (instead of from options), afdist through compute(), and the allele-counts
// heavy pass of any layout through the backends directly.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "backend/site_pass.hpp"
#include "vczstats/compute.hpp"
#include "vczstats/populations.hpp"
#include "vczstats/statistics.hpp"

namespace vcztest {

/// A query over @p plan and @p samples of @p store, one population, no windows.
inline vczstats::Query query_of(const vczstats::vcz::VczStore& store, vczstats::vcz::ChunkPlan plan,
                                vczstats::vcz::SampleSelection samples) {
  vczstats::Query q;
  q.store = store;
  q.plan = std::move(plan);
  q.pops = vczstats::vcz::single_population(samples);
  q.samples = std::move(samples);
  q.accessible = std::make_shared<const vczstats::AccessibleMask>();
  return q;
}

/// afdist through compute().
inline vczstats::stats::AfdistResult run_afdist(const vczstats::vcz::VczStore& store,
                                                const vczstats::vcz::ChunkPlan& plan,
                                                const vczstats::vcz::SampleSelection& samples,
                                                const vczstats::stats::AfdistOptions& options,
                                                const vczstats::RunOptions& run,
                                                vczstats::RunStats* stats = nullptr) {
  const auto q = query_of(store, plan, samples);
  const auto s = vczstats::make_afdist(q, options);
  vczstats::Statistic* list[] = {s.get()};
  const auto rs = vczstats::compute(q, list, run);
  if (stats) *stats = rs;
  return s->result();
}

/// Every unit's allele counts of @p pass (any layout), concatenated in plan order, from the
/// backend that run.device names (cpu or gpu), checking the units come in order.
inline std::vector<std::int32_t> run_counts(const vczstats::vcz::VczStore& store,
                                            const vczstats::vcz::ChunkPlan& plan,
                                            const vczstats::vcz::SampleSelection& samples,
                                            const vczstats::stats::AlleleCountsPass& pass,
                                            const vczstats::RunOptions& run,
                                            vczstats::RunStats* stats = nullptr) {
  namespace be = vczstats::backend;
  be::SitePassSpec spec;
  spec.store = &store;
  spec.plan = &plan;
  spec.samples = &samples;
  spec.run = &run;
  spec.device = run.device.index;
  spec.counts = &pass;
  std::vector<std::int32_t> all;
  std::int64_t expected_unit = 0;
  auto deliver = [&](const be::UnitOutput& out) {
    EXPECT_EQ(out.index, expected_unit++);
    const auto& unit = plan.units[static_cast<std::size_t>(out.index)];
    EXPECT_EQ(static_cast<std::int64_t>(out.counts.size()), unit.size() * pass.site_width());
    all.insert(all.end(), out.counts.begin(), out.counts.end());
  };
  vczstats::RunStats rs;
  if (run.device.kind == vczstats::DeviceKind::Gpu)
    be::run_site_pass_gpu(spec, deliver, nullptr, &rs);
  else
    be::run_site_pass_cpu(spec, deliver, nullptr, &rs);
  EXPECT_EQ(expected_unit, static_cast<std::int64_t>(plan.units.size()));
  if (stats) *stats = rs;
  return all;
}

/// RunOptions on @p kind with @p threads.
inline vczstats::RunOptions run_on(vczstats::DeviceKind kind, unsigned threads = 2) {
  vczstats::RunOptions r;
  r.device.kind = kind;
  r.threads = threads;
  return r;
}

}  // namespace vcztest
