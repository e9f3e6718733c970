// A command's statistic, computed here or across MPI ranks (statistic_run.hpp).

#include "statistic_run.hpp"

#include <fmt/format.h>

#include "processes.hpp"
#include "vczstats/compute.hpp"

#ifdef VCZSTATS_HAVE_MPI
#include "dist/driver.hpp"
#endif

namespace vczstats::cli {

StatisticRun::StatisticRun(const CommonOptions& o, Query& q, StatisticMaker make)
    : o_(o), q_(q), make_(std::move(make)), statistic_(make_()) {
  if (!q_.count_filters_pending()) return;
  // The count filters run inside compute()'s pass when the library can fuse them with this
  // statistic; otherwise a counting pass filters the plan now, and the statistic is made again
  // from the filtered query. Under mpirun the ranks' partitions need the filtered plan.
  RunOptions run;
  run.threads = o.threads;
  run.device = parse_device("cpu");
  const std::size_t warned = q_.warnings.size();
  Statistic* list[] = {statistic_.get()};
  if (prepare_count_filters(q_, list, run, {}, mpi_ranks() != nullptr)) statistic_ = make_();
  if (primary_process())
    for (std::size_t i = warned; i < q_.warnings.size(); ++i)
      fmt::print(stderr, "vczstats: warning: {}\n", q_.warnings[i]);
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

bool StatisticRun::compute(const RowStream& rows) {
  RunOptions run = run_options(o_);
  Statistic* list[] = {statistic_.get()};
#ifdef VCZSTATS_HAVE_MPI
  if (dist::Ranks* ranks = mpi_ranks()) {
    run = dist::rank_run_options(run, *ranks, o_.threads != 0,
                                 o_.device.find(':') != std::string::npos);
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
    if (ranks->rank() != 0) return false;
    stats_ = r.total;
    rank_lines_ = rank_lines(r);
    return true;
  }
#endif
  ComputeHooks hooks;
  hooks.needs = rows.needs;
  if (rows.unit_rows)
    hooks.after_unit = [&](const UnitData& u) { rows.unit_rows(u, *statistic_, rows.write); };
  stats_ = vczstats::compute(q_, list, run, hooks);
  return true;
}

void StatisticRun::report() const {
  report_run(o_, stats_);
  if (o_.verbose)
    for (const auto& line : rank_lines_) fmt::print(stderr, "vczstats: {}\n", line);
}

}  // namespace vczstats::cli
