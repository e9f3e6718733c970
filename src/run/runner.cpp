// One statistic computed here or across MPI ranks (vczstats/runner.hpp).

#include "vczstats/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <span>

#include "vczstats/compute.hpp"
#include "vczstats/error.hpp"

#ifdef VCZSTATS_HAVE_MPI
#include "dist/driver.hpp"
#endif

namespace vczstats {

Runner::Runner(Query& q, StatisticMaker make, RunOptions run, RunnerRanks ranks)
    : q_(q), make_(std::move(make)), run_(std::move(run)), ranks_(ranks), statistic_(make_()) {
  if (!q_.count_filters_pending()) return;
  // The count filters run inside compute()'s pass when the library can fuse them with this
  // statistic; otherwise a counting pass filters the plan now, and the statistic is made again
  // from the filtered query. Under MPI the ranks' partitions need the filtered plan.
  RunOptions counting;
  counting.threads = run_.threads;
  counting.device.kind = DeviceKind::Cpu;
#ifdef VCZSTATS_HAVE_MPI
  if (dist::Ranks* mpi = ranks_.ranks) {
    // One counting pass split over the ranks, each on its share of the node's cores.
    counting = dist::rank_run_options(counting, *mpi, run_.threads != 0, false);
    dist::apply_count_filters(*mpi, q_, counting);
    statistic_ = make_();
    return;
  }
#endif
  Statistic* list[] = {statistic_.get()};
  if (prepare_count_filters(q_, list, counting, {})) statistic_ = make_();
}

#ifdef VCZSTATS_HAVE_MPI
namespace {

// Rows travel from the other ranks to rank 0 as cells: [u32 cells][string]... per row.
void encode(ByteWriter& out, const Cells& cells) {
  out.put(static_cast<std::uint32_t>(cells.size()));
  for (const auto& c : cells) out.put_string(c);
}

std::vector<std::string> rank_lines(const dist::Report& r) {
  std::vector<std::string> lines;
  for (const auto& x : r.ranks)
    lines.push_back(fmt::format(
        "rank {} ({}; {}): units {}-{} ({} variants, weight {}); cursor {:.3f} s, compute "
        "{:.3f} s ({:.3g} calls/s), then waited {:.3f} s",
        x.rank, x.host, x.run.device, x.first_unit, x.end_unit, x.run.variants, x.weight,
        x.cursor_seconds, x.run.wall_seconds,
        static_cast<double>(x.run.calls) / std::max(x.run.wall_seconds, 1e-9), x.wait_seconds));
  lines.push_back(fmt::format(
      "merge {:.3f} s: rank 0 received the other ranks' states and rows, merged them in rank "
      "order and wrote them",
      r.merge_seconds));
  return lines;
}

}  // namespace
#endif

RunnerResult Runner::run(const RowStream& rows) {
  RunnerResult result;
  Statistic* list[] = {statistic_.get()};
#ifdef VCZSTATS_HAVE_MPI
  if (dist::Ranks* ranks = ranks_.ranks) {
    const RunOptions run =
        dist::rank_run_options(run_, *ranks, run_.threads != 0, ranks_.device_index_given);
    dist::Hooks h;
    h.needs = rows.needs;
    if (rows.unit_rows)
      h.unit_rows = [&](const UnitData& u, ByteWriter& out) {
        rows.unit_rows(u, *statistic_, [&](const Cells& cells) { encode(out, cells); });
      };
    h.write_rows = [&](std::span<const std::byte> bytes) {
      ByteReader in(bytes);
      Cells cells;
      while (!in.done()) {
        cells.resize(in.get<std::uint32_t>());
        for (auto& c : cells) c = in.get_string();
        rows.write(cells);
      }
    };
    if (rows.after_merge) h.after_merge = [&] { rows.after_merge(*statistic_); };
    const dist::Report r = dist::compute(
        *ranks, q_, list, [this](std::size_t) { return make_(); }, run, h);
    if (ranks->rank() != 0) {
      result.writes = false;
      return result;
    }
    result.stats = r.total;
    result.rank_lines = rank_lines(r);
    return result;
  }
#else
  if (ranks_.ranks) throw UsageError("this build of vczstats has no MPI driver");
#endif
  ComputeHooks hooks;
  hooks.needs = rows.needs;
  if (rows.unit_rows)
    hooks.after_unit = [&](const UnitData& u) { rows.unit_rows(u, *statistic_, rows.write); };
  result.stats = compute(q_, list, run_, hooks);
  return result;
}

}  // namespace vczstats
