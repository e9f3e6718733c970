// Ranks that are threads of one process (thread_ranks.hpp).

#include "dist/thread_ranks.hpp"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace vczstats::dist {
namespace {

/// What the ranks of one group share.
struct Group {
  explicit Group(int ranks)
      : size(ranks),
        members(ranks),
        slots(static_cast<std::size_t>(ranks)),
        queues(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks)),
        ended(static_cast<std::size_t>(ranks), false),
        left(static_cast<std::size_t>(ranks)) {}

  static constexpr std::size_t kQueued = 4;  // messages a sender may have waiting

  const int size;
  std::mutex mutex;
  std::condition_variable changed;
  std::atomic<bool> failed{false};
  // The barrier: the ranks still in it, those arrived in this round, and the round.
  int members, arrived = 0;
  std::uint64_t round = 0;
  bool round_failed = false;                  // "did anyone fail", as the last round completed it
  std::vector<std::vector<std::byte>> slots;  // a collective's bytes, one per rank
  std::vector<std::deque<std::vector<std::byte>>> queues;  // [from * size + to]
  std::vector<bool> ended;
  std::vector<std::vector<Statistic*>> left;  // each rank's statistics, live (leave_statistics)

  void complete_round() {  // mutex held
    arrived = 0;
    ++round;
    round_failed = failed.load();
    changed.notify_all();
  }
  /// Waits for every rank still in the barrier; returns whether any rank had failed by then.
  bool barrier() {
    std::unique_lock lock(mutex);
    const std::uint64_t mine = round;
    if (++arrived >= members)
      complete_round();
    else
      changed.wait(lock, [&] { return round != mine; });
    return round_failed;
  }
  /// Rank @p r ends (done or failed): it leaves the barrier and its queues.
  void leave(int r, bool failure) {
    std::lock_guard lock(mutex);
    if (failure) failed.store(true);
    ended[static_cast<std::size_t>(r)] = true;
    --members;
    if (arrived > 0 && arrived >= members) complete_round();
    changed.notify_all();
  }
  std::deque<std::vector<std::byte>>& queue(int from, int to) {
    return queues[static_cast<std::size_t>(from) * static_cast<std::size_t>(size) +
                  static_cast<std::size_t>(to)];
  }
};

class ThreadRanks final : public Ranks {
 public:
  ThreadRanks(Group& group, int rank, const std::string& host) : group_(group) {
    rank_ = local_rank_ = rank;
    size_ = local_size_ = group.size;
    nodes_ = 1;
    host_ = host;
  }

  bool in_process() const override { return true; }
  void check() override {
    if (group_.barrier()) throw Stopped();
  }
  void announce_failure() override { group_.failed.store(true); }
  void poll() override {
    if (group_.failed.load(std::memory_order_relaxed)) throw Stopped();
  }

  void broadcast(std::vector<std::int64_t>& values, int root) override {
    if (rank_ == root) put(std::as_bytes(std::span(values)));
    group_.barrier();
    if (rank_ != root) {
      const auto& b = group_.slots[static_cast<std::size_t>(root)];
      std::memcpy(values.data(), b.data(), std::min(b.size(), values.size() * sizeof values[0]));
    }
    group_.barrier();
  }
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override {
    put(mine);
    group_.barrier();
    auto all = group_.slots;
    group_.barrier();
    return all;
  }
  std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine) override {
    put(mine);
    group_.barrier();
    std::vector<std::vector<std::byte>> all;
    if (rank_ == 0) all = group_.slots;
    group_.barrier();
    return all;
  }
  void send(int to, std::span<const std::byte> bytes) override {
    std::unique_lock lock(group_.mutex);
    auto& q = group_.queue(rank_, to);
    const auto gone = [&] { return group_.ended[static_cast<std::size_t>(to)]; };
    group_.changed.wait(lock, [&] { return q.size() < Group::kQueued || gone(); });
    if (gone()) throw Stopped();
    q.emplace_back(bytes.begin(), bytes.end());
    group_.changed.notify_all();
  }
  void leave_statistics(std::span<Statistic* const> statistics) override {
    std::lock_guard lock(group_.mutex);
    group_.left[static_cast<std::size_t>(rank_)].assign(statistics.begin(), statistics.end());
  }
  std::span<Statistic* const> left_statistics(int rank) const override {
    std::lock_guard lock(group_.mutex);
    return group_.left[static_cast<std::size_t>(rank)];
  }
  std::vector<std::byte> receive(int from) override {
    std::unique_lock lock(group_.mutex);
    auto& q = group_.queue(from, rank_);
    const auto gone = [&] { return group_.ended[static_cast<std::size_t>(from)]; };
    group_.changed.wait(lock, [&] { return !q.empty() || gone(); });
    if (q.empty()) throw Stopped();
    std::vector<std::byte> bytes = std::move(q.front());
    q.pop_front();
    group_.changed.notify_all();
    return bytes;
  }

 private:
  void put(std::span<const std::byte> bytes) {
    auto& slot = group_.slots[static_cast<std::size_t>(rank_)];
    slot.assign(bytes.begin(), bytes.end());
  }
  Group& group_;
};

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

}  // namespace

void run_thread_ranks(int size, const std::function<void(Ranks& ranks)>& body) {
  Group group(size);
  const std::string host = host_name();
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  const auto run = [&](int r) {
    ThreadRanks ranks(group, r, host);
    bool failure = false;
    try {
      body(ranks);
    } catch (...) {
      errors[static_cast<std::size_t>(r)] = std::current_exception();
      failure = true;
    }
    group.leave(r, failure);
  };
  std::vector<std::thread> threads;
  std::exception_ptr no_thread;
  for (int r = 1; r < size; ++r) {
    try {
      threads.emplace_back(run, r);
    } catch (...) {  // no thread (a process or memory limit): the ranks started stop
      no_thread = std::current_exception();
      for (int e = r; e < size; ++e) group.leave(e, true);
      break;
    }
  }
  run(0);
  for (auto& t : threads) t.join();
  if (no_thread) std::rethrow_exception(no_thread);
  std::exception_ptr stopped;
  for (const auto& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const Stopped&) {
      if (!stopped) stopped = e;
    } catch (...) {
      throw;
    }
  }
  if (stopped) std::rethrow_exception(stopped);
}

}  // namespace vczstats::dist
