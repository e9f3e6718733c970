// ThreadPool: workers start when work needs them, at most one per index of a parallel_for (and
// never beyond the pool's width); every index still runs once.

#include "vczstats/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using vczstats::ThreadPool;

TEST(ThreadPool, StartsNoWorkerBeforeWorkAndNoMoreThanTheWork) {
  ThreadPool pool(64);
  EXPECT_EQ(pool.size(), 64u);
  EXPECT_EQ(pool.threads_started(), 0u);
  std::vector<std::atomic<int>> seen(1000);
  pool.parallel_for(1, [&](std::int64_t i) { ++seen[static_cast<std::size_t>(i)]; });
  EXPECT_EQ(pool.threads_started(), 0u);  // one index: the caller alone
  pool.parallel_for(3, [&](std::int64_t i) { ++seen[static_cast<std::size_t>(i)]; });
  EXPECT_LE(pool.threads_started(), 2u);
  pool.parallel_for(1000, [&](std::int64_t i) { ++seen[static_cast<std::size_t>(i)]; });
  EXPECT_LE(pool.threads_started(), 63u);
  EXPECT_EQ(seen[0], 3);
  EXPECT_EQ(seen[1], 2);
  EXPECT_EQ(seen[2], 2);
  for (std::size_t i = 3; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << i;
}

TEST(ThreadPool, ParallelForFromABusyPoolRunsOnTheCaller) {
  // Two long tasks hold the workers of a pool 3 wide: a parallel_for then takes no helper (it
  // would wait in the queue) and starts no thread beyond the width; the caller does the work.
  ThreadPool pool(3);
  std::atomic<bool> release{false};
  std::atomic<int> holding{0};
  auto group = pool.start(2, [&](unsigned) {
    ++holding;
    while (!release) std::this_thread::yield();
  });
  while (holding < 2) std::this_thread::yield();
  const unsigned before = pool.threads_started();
  EXPECT_EQ(before, 2u);
  std::atomic<int> sum{0};
  pool.parallel_for(100, [&](std::int64_t i) { sum += static_cast<int>(i); });
  EXPECT_EQ(sum, 4950);
  EXPECT_EQ(pool.threads_started(), before);
  release = true;
  group.join();
}

TEST(ThreadPool, ThreadsForWorkFollowTheItems) {
  EXPECT_EQ(vczstats::threads_for_work(64, 1), 1u);
  EXPECT_EQ(vczstats::threads_for_work(64, 0), 1u);
  EXPECT_EQ(vczstats::threads_for_work(4, 1000), 4u);
  EXPECT_EQ(vczstats::threads_for_work(0, 1), 1u);
  EXPECT_EQ(vczstats::threads_for_work(0, 1 << 30), vczstats::hardware_threads());
}
