// OrderedPrefetcher: order, bounded items in flight, error forwarding, early exit.

#include "stream/prefetcher.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "vczstats/thread_pool.hpp"

using vczstats::stream::OrderedPrefetcher;

namespace {
// Counts live instances, to check that memory in flight stays bounded.
struct Tracked {
  static inline std::atomic<int> live{0};
  static inline std::atomic<int> peak{0};
  std::int64_t value;
  explicit Tracked(std::int64_t v) : value(v) { bump(); }
  Tracked(const Tracked& o) : value(o.value) { bump(); }
  Tracked(Tracked&& o) noexcept : value(o.value) { bump(); }
  ~Tracked() { --live; }
  static void bump() {
    int now = ++live;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
  }
};
}  // namespace

TEST(StreamPrefetcher, DeliversEveryItemInOrder) {
  for (unsigned producers : {1u, 2u, 7u}) {
    for (unsigned depth : {1u, 3u, 16u}) {
      OrderedPrefetcher<std::int64_t> p(1000, producers, depth, [](std::int64_t i, unsigned) {
        // Uneven work so producers finish out of order.
        if (i % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
        return i * i;
      });
      for (std::int64_t i = 0; i < 1000; ++i) {
        auto v = p.next();
        ASSERT_TRUE(v.has_value());
        EXPECT_EQ(*v, i * i);
      }
      EXPECT_FALSE(p.next().has_value());
    }
  }
}

TEST(StreamPrefetcher, ItemsInFlightAreBoundedByDepth) {
  Tracked::live = 0;
  Tracked::peak = 0;
  {
    OrderedPrefetcher<Tracked> p(500, 4, 5, [](std::int64_t i, unsigned) { return Tracked(i); });
    for (int i = 0; i < 500; ++i) {
      auto v = p.next();
      ASSERT_TRUE(v);
      EXPECT_EQ(v->value, i);
      if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // slow consumer
    }
  }
  EXPECT_EQ(Tracked::live.load(), 0);
  // depth slots + one item per producer being built/moved + the consumer's copy.
  EXPECT_LE(Tracked::peak.load(), 5 + 4 * 2 + 2);
}

TEST(StreamPrefetcher, ProducerErrorReachesConsumerWithItsMessage) {
  OrderedPrefetcher<int> p(100, 3, 4, [](std::int64_t i, unsigned) -> int {
    if (i == 17) throw std::runtime_error("chunk call_genotype/17.0.0: corrupt");
    return static_cast<int>(i);
  });
  try {
    for (int i = 0; i < 100; ++i) p.next();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "chunk call_genotype/17.0.0: corrupt");
  }
}

// Several items fail, the later ones sooner: the consumer still gets every item before the
// first failing one, then that item's error, whatever the timing.
TEST(StreamPrefetcher, TheErrorOfTheLowestFailingItemIsReportedAfterTheItemsBeforeIt) {
  for (int rep = 0; rep < 20; ++rep) {
    OrderedPrefetcher<int> p(60, 4, 8, [](std::int64_t i, unsigned) -> int {
      if (i == 9) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        throw std::runtime_error("item 9");
      }
      if (i >= 10 && i % 3 == 0) throw std::runtime_error("item " + std::to_string(i));
      return static_cast<int>(i);
    });
    int got = 0;
    try {
      for (;; ++got) ASSERT_EQ(*p.next(), got);
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "item 9");
      EXPECT_EQ(got, 9);
    }
  }
}

TEST(StreamPrefetcher, EarlyExitStopsProducersWithoutHanging) {
  std::atomic<int> produced{0};
  {
    OrderedPrefetcher<int> p(1'000'000, 4, 8, [&](std::int64_t i, unsigned) {
      ++produced;
      return static_cast<int>(i);
    });
    for (int i = 0; i < 10; ++i) p.next();
  }  // destructor must cancel and join
  EXPECT_LT(produced.load(), 10 + 8 + 4 + 1);
}

TEST(StreamPrefetcher, EmptyPlan) {
  OrderedPrefetcher<int> p(0, 2, 2, [](std::int64_t, unsigned) { return 0; });
  EXPECT_FALSE(p.next().has_value());
}

TEST(StreamThreadPool, RunsEveryIndexOnceAndRethrows) {
  vczstats::ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(1000);
  pool.parallel_for(1000, [&](std::int64_t i) { ++hits[static_cast<std::size_t>(i)]; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_THROW(pool.parallel_for(50,
                                 [](std::int64_t i) {
                                   if (i == 33) throw std::runtime_error("boom");
                                 }),
               std::runtime_error);
  // Still usable after an error.
  std::atomic<int> n{0};
  pool.parallel_for(10, [&](std::int64_t) { ++n; });
  EXPECT_EQ(n.load(), 10);
}

TEST(StreamThreadPool, RunClaimedGetsItsThreadsWhileTheWorkersAreBusy) {
  vczstats::ThreadPool pool(2);
  // Both workers held (as a pass's readers hold them), until released.
  std::mutex m;
  std::condition_variable cv;
  bool release = false;
  auto busy = pool.start(2, [&](unsigned) {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return release; });
  });
  // Every index once, and three threads inside fn at the same time: the caller and two workers
  // of the call's own group.
  std::vector<std::atomic<int>> hits(3);
  std::atomic<int> inside{0};
  std::atomic<bool> together{true};
  pool.run_claimed(3, 3, [&](std::int64_t i) {
    ++hits[static_cast<std::size_t>(i)];
    ++inside;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (inside.load() < 3 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    if (inside.load() < 3) together = false;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_TRUE(together.load());
  {
    std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  busy.join();
  std::atomic<int> n{0};
  pool.run_claimed(1, 5, [&](std::int64_t) { ++n; });  // the caller alone
  EXPECT_EQ(n.load(), 5);
}
