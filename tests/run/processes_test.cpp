// vczstats::Processes before MPI starts: whether a launcher started the process, and its
// node-local rank as the launcher's environment gives it (GpuPrestart picks the GPU from it).
// Each ctest case is its own process, so the environment changed here goes with it.

#include <gtest/gtest.h>

#include <cstdlib>

#include "vczstats/processes.hpp"

namespace {

void clear_launcher_environment() {
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
        "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "PALS_LOCAL_RANKID"})
    ::unsetenv(name);
}

TEST(ProcessesLauncher, LocalRankFromTheLaunchersEnvironment) {
  clear_launcher_environment();
  EXPECT_FALSE(vczstats::Processes::launched());
  ::setenv("SLURM_LOCALID", "3", 1);  // srun without MPI ranks: not launched
  EXPECT_EQ(vczstats::Processes::launcher_local_rank(), -1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
  if (!vczstats::Processes::mpi_built()) {
    EXPECT_FALSE(vczstats::Processes::launched());
    EXPECT_EQ(vczstats::Processes::launcher_local_rank(), -1);
    GTEST_SKIP() << "skipped: built without MPI (the rest needs a launched build)";
  }
  EXPECT_TRUE(vczstats::Processes::launched());
  EXPECT_EQ(vczstats::Processes::launcher_local_rank(), 2);  // Open MPI's first
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(vczstats::Processes::launcher_local_rank(), 3);  // then Slurm's
  ::setenv("SLURM_LOCALID", "x1", 1);
  EXPECT_EQ(vczstats::Processes::launcher_local_rank(), -1);  // not a number: unknown
  ::setenv("MPI_LOCALRANKID", "1", 1);                        // Hydra's
  EXPECT_EQ(vczstats::Processes::launcher_local_rank(), 1);
  ::setenv("MPI_LOCALRANKID", "-1", 1);
  EXPECT_EQ(vczstats::Processes::launcher_local_rank(), -1);
}

}  // namespace
