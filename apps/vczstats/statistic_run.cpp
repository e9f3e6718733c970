// A command's statistic, computed by the library's Runner (statistic_run.hpp).

#include "statistic_run.hpp"

#include <fmt/format.h>

#include "processes.hpp"

namespace vczstats::cli {

StatisticRun::StatisticRun(const CommonOptions& o, Query& q, StatisticMaker make)
    : o_(o),
      warned_(q.warnings.size()),
      runner_(q, std::move(make), run_options(o),
              RunnerRanks{mpi_ranks(), o.device.find(':') != std::string::npos}) {
  print_warnings(q, warned_);
}

bool StatisticRun::compute(const RowStream& rows) {
  result_ = runner_.run(rows);
  return result_.writes;
}

void StatisticRun::report() const {
  report_run(o_, result_.stats);
  if (o_.verbose)
    for (const auto& line : result_.rank_lines) fmt::print(stderr, "vczstats: {}\n", line);
}

}  // namespace vczstats::cli
