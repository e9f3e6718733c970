// The benchmark switches of vczstats/testing.hpp (hooks::make_query is in src/stats/query.cpp).

#include <atomic>

#include "vczstats/testing.hpp"

namespace vczstats::hooks {

namespace {
std::atomic<bool> g_seed_baseline{false};
std::atomic<bool> g_pinned_hostalloc{false};
std::atomic<bool> g_two_pass_count_filters{false};
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

}  // namespace vczstats::hooks
