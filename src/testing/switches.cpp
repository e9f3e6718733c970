// The benchmark switches of vczstats/testing.hpp (hooks::make_query is in src/stats/query.cpp).

#include <atomic>

#include "vczstats/testing.hpp"

namespace vczstats::hooks {

namespace {
std::atomic<bool> g_seed_baseline{false};
std::atomic<bool> g_pinned_hostalloc{false};
std::atomic<bool> g_two_pass_count_filters{false};
std::atomic<std::int64_t> g_selection_segment{0}, g_selection_context{0};
std::atomic<int> g_thread_shares{0};
}  // namespace

void set_gpu_seed_baseline(bool on) {
  g_seed_baseline = on;
}
bool gpu_seed_baseline() {
  return g_seed_baseline;
}

void set_pinned_hostalloc(bool on) {
  g_pinned_hostalloc = on;
}
bool pinned_hostalloc() {
  return g_pinned_hostalloc;
}

void set_two_pass_count_filters(bool on) {
  g_two_pass_count_filters = on;
}
bool two_pass_count_filters() {
  return g_two_pass_count_filters;
}

void set_selection_kernel_sizes(std::int64_t segment, std::int64_t context) {
  g_selection_segment = segment;
  g_selection_context = context;
}
std::int64_t selection_segment() {
  return g_selection_segment;
}
std::int64_t selection_context() {
  return g_selection_context;
}

void set_thread_shares(int shares) {
  g_thread_shares = shares;
}
int thread_shares() {
  return g_thread_shares;
}

}  // namespace vczstats::hooks
