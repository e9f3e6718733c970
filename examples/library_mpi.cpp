// The C++ library across MPI ranks: a windowed scan of one store, split over the processes that
// mpirun (or srun) started, printed by rank 0 alone; the same program runs alone without mpirun.
// The output is the same bytes for any number of ranks, and those of the CLI's
// `vczstats stats STORE -s pi,theta_w,tajima_d --window-size WINDOW_BP`.
//
//   mpirun -n 4 build/examples/library_mpi STORE [WINDOW_BP]
//
// Every rank runs the same steps: vczstats::Processes starts MPI, the Runner splits the plan's
// work units over the ranks and merges their states on rank 0, and finish() agrees on the exit
// code (an error on any rank ends every rank, reported once by rank 0).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/processes.hpp"
#include "vczstats/query.hpp"
#include "vczstats/runner.hpp"
#include "vczstats/statistics.hpp"
#include "vczstats/table.hpp"

int main(int argc, char** argv) {
  vczstats::Processes processes(argc, argv);  // MPI when mpirun started us
  try {
    if (argc < 2) throw vczstats::UsageError("usage: library_mpi STORE [WINDOW_BP]");
    vczstats::QueryOptions qo;
    qo.store = argv[1];
    qo.windows.size = argc > 2 ? std::atoll(argv[2]) : 100000;
    vczstats::Query q = vczstats::make_query(qo);  // must outlive the statistic

    vczstats::ScanOptions so;
    so.statistics = {"pi", "theta_w", "tajima_d"};
    vczstats::RunOptions run;
    run.device = vczstats::parse_device("cpu");
    vczstats::Runner runner(
        q, [&] { return std::shared_ptr<vczstats::Statistic>(vczstats::make_scan(q, so)); }, run,
        processes.runner_ranks());
    // The CLI's table (vczstats/runner.hpp: TableSink): rows streamed as the units finish them,
    // the bytes of `vczstats stats` with -o -; "json" would give --format json's.
    vczstats::TableSink table(runner.statistic(), vczstats::TableWriter::to_file(stdout), "tsv");
    runner.run(table.rows());
    if (processes.writes()) {  // rank 0 (or this process alone) has the merged statistic
      table.finish(runner.statistic());
      std::fprintf(stderr, "library_mpi: %d process(es)\n", processes.size());
    }
  } catch (...) {
    return processes.finish(std::current_exception());
  }
  return processes.finish();
}
