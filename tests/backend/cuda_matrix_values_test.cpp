// The GPU's per-cell values (the matrix statistics' formulas computed where the sums lie, one
// matrix of doubles copied) are, to the bit, the values the host computes from the same device
// sums (RunOptions::keep_matrix_sums: the sums copied, the formulas on the host, as MPI ranks
// run): grm, king and every distance, whole and in a stripe of rows. Skips visibly without a GPU.

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/gpu_test_support.hpp"
#include "test_util.hpp"
#include "vczstats/compute.hpp"
#include "vczstats/matrix.hpp"
#include "vczstats/query.hpp"

namespace {

using namespace vczstats;
using Make = std::function<std::unique_ptr<MatrixStatistic>(const Query&, const MatrixOptions&)>;

SampleMatrix run_gpu(const Query& q, const Make& make, const MatrixOptions& m, bool keep_sums) {
  auto s = make(q, m);
  Statistic* list[] = {s.get()};
  RunOptions run;
  run.device = parse_device("gpu");
  run.threads = 2;
  run.keep_matrix_sums = keep_sums;
  (void)compute(q, list, run);
  return s->finish_matrix();
}

void expect_same_values(const std::string& store) {
  QueryOptions qo;
  qo.store = store;
  const Query q = make_query(qo);
  const std::int64_t n = q.samples.size();
  std::vector<std::pair<std::string, Make>> makes = {
      {"grm",
       [](const Query& query, const MatrixOptions& m) {
         return make_grm(query, {m, false});
       }},
      {"grm cov",
       [](const Query& query, const MatrixOptions& m) {
         return make_grm(query, {m, true});
       }},
      {"king",
       [](const Query& query, const MatrixOptions& m) -> std::unique_ptr<MatrixStatistic> {
         return make_king(query, m);
       }},
  };
  for (const DistanceMetric metric :
       {DistanceMetric::AlleleCount, DistanceMetric::Ibs, DistanceMetric::OneMinusIbs})
    for (const bool flat : {false, true})
      makes.emplace_back(
          "distance " + std::to_string(static_cast<int>(metric)) + (flat ? " flat" : ""),
          [metric, flat](const Query& query, const MatrixOptions& m) {
            return make_distance(query, {m, metric, flat});
          });
  std::vector<MatrixOptions> shapes(3);
  shapes[1].row_begin = n / 3;
  shapes[1].row_end = 2 * n / 3;
  shapes[2].maf = 0.1;
  for (const auto& [name, make] : makes)
    for (const MatrixOptions& m : shapes) {
      SCOPED_TRACE(name + " rows " + std::to_string(m.row_begin) + ".." +
                   std::to_string(m.row_end) + " maf " + std::to_string(m.maf));
      const SampleMatrix device = run_gpu(q, make, m, false), host = run_gpu(q, make, m, true);
      EXPECT_EQ(device.row_begin, host.row_begin);
      EXPECT_EQ(device.row_end, host.row_end);
      EXPECT_EQ(device.variants, host.variants);
      ASSERT_EQ(device.values.size(), host.values.size());
      std::size_t differ = 0, first = 0;
      for (std::size_t k = 0; k < host.values.size(); ++k)
        if (std::memcmp(&device.values[k], &host.values[k], sizeof(double)) != 0 && !differ++)
          first = k;
      EXPECT_EQ(differ, 0u) << "first at cell " << first << ": " << device.values[first]
                            << " on the device, " << host.values[first] << " on the host";
    }
}

}  // namespace

TEST(CudaMatrixValues, DeviceValuesEqualTheHostsOfTheSameSums) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const int stores =
      gputest::for_each_test_store(dir, [&](const std::string& p) { expect_same_values(p); });
  if (stores == 0)
    GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools, or "
                    "VCZSTATS_TEST_STORES from scripts/fetch-gpu-deps.sh)";
}
