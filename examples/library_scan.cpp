// The C++ library in one page: a windowed scan and the allele frequency table of one store in
// one pass over its genotypes, on the device given on the command line, printed from the typed
// result tables.
//
//   build/examples/library_scan STORE [POPS.tsv|-] [cpu|gpu|gpu:N|auto]
//
// POPS.tsv has two columns, sample and population (as the CLI's -P); without it (or with -)
// every sample is one population. The scan reports pi and Tajima's D (and Hudson's Fst between
// every pair of populations when there are several) in 100 kb windows.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "vczstats/compute.hpp"
#include "vczstats/device.hpp"
#include "vczstats/query.hpp"
#include "vczstats/statistics.hpp"
#include "vczstats/table.hpp"

namespace {

void print_head(const char* title, const vczstats::Table& t, std::int64_t rows) {
  std::printf("%s: %lld rows\n", title, static_cast<long long>(t.rows()));
  for (const auto& c : t.columns) std::printf("%s\t", c.name.c_str());
  std::printf("\n");
  for (std::int64_t r = 0; r < std::min(rows, t.rows()); ++r) {
    for (const auto& c : t.columns) {
      const auto i = static_cast<std::size_t>(r);
      switch (c.kind) {
        case vczstats::Column::Kind::Int:
          std::printf("%lld\t", static_cast<long long>(c.ints[i]));
          break;
        case vczstats::Column::Kind::Float:
          std::printf("%.6g\t", c.floats[i]);
          break;
        case vczstats::Column::Kind::Label:
          std::printf("%s\t", c.label(r).c_str());
          break;
        default:
          std::printf("[list]\t");
          break;
      }
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s STORE [POPS.tsv|-] [cpu|gpu|gpu:N|auto]\n", argv[0]);
    return 2;
  }
  try {
    vczstats::QueryOptions qo;
    qo.store = argv[1];
    if (argc > 2 && std::string(argv[2]) != "-") qo.pops_file = argv[2];
    qo.windows.size = 100000;
    const vczstats::Query q = vczstats::make_query(qo);  // must outlive the statistics

    vczstats::ScanOptions so;
    so.statistics = {"pi", "tajima_d"};
    if (q.pops.count() > 1) so.statistics.push_back("fst_hudson");
    auto scan = vczstats::make_scan(q, so);
    auto freq = vczstats::make_site_table(q, vczstats::SiteTable::Freq);
    std::vector<vczstats::Statistic*> both{scan.get(), freq.get()};

    vczstats::RunOptions run;
    run.device = vczstats::parse_device(argc > 3 ? argv[3] : "auto");
    const vczstats::RunStats rs = vczstats::compute(q, both, run);  // one pass for both

    print_head("scan", scan->finish(), 6);
    print_head("freq", freq->finish(), 3);
    std::printf("%lld variants, %.3f s\n", static_cast<long long>(rs.variants), rs.wall_seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "library_scan: %s\n", e.what());
    return 1;
  }
  return 0;
}
