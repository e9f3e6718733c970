#pragma once
/// @file testing.hpp
/// @brief Test and benchmark hooks. Not part of the stable API, and not installed: for the
/// project's tests, its benchmarks and the CLI's hidden options (--max-unit-variants,
/// --gpu-seed-baseline, --pinned-hostalloc, --two-pass-filters, --segment, --context,
/// --thread-shares). Results
/// never depend on them; only how the work is cut and run does.

#include <cstdint>

namespace vczstats {
struct Query;         // vczstats/query.hpp
struct QueryOptions;  // (this header stays light: CUDA sources include it)
}  // namespace vczstats

namespace vczstats::hooks {

/// @brief make_query with work units of at most @p max_unit_variants variants each (0: one
/// variant chunk, as make_query): many small units, so that tests see results that do not
/// depend on where units, partitions and MPI shares are cut.
Query make_query(const QueryOptions& options, std::int64_t max_unit_variants);

/// @brief Benchmarks: GPU runs from now on (process-wide) run as the project's seed
/// implementations did (one thread per variant, pageable copies, one stream, nothing
/// overlapped), as a baseline (bench/gpu_afdist_bench, scripts/gpu-check.sh).
void set_gpu_seed_baseline(bool on);
/// @brief Whether set_gpu_seed_baseline is on.
bool gpu_seed_baseline();

/// @brief Benchmarks: pinned host buffers allocated from now on (process-wide) come from
/// cudaHostAlloc at every size, rather than huge pages registered with cudaHostRegister (the
/// allocation before huge pages; bench/gpu_pinned_ab.sh compares the two).
void set_pinned_hostalloc(bool on);
/// @brief Whether set_pinned_hostalloc is on.
bool pinned_hostalloc();

/// @brief Tests and benchmarks: count filters prepared from now on (process-wide,
/// prepare_count_filters) take the counting pass first even where the statistic's own pass
/// could decide them, to compare the two paths (tests/cli/fused_filters_test.cpp).
void set_two_pass_count_filters(bool on);
/// @brief Whether set_two_pass_count_filters is on.
bool two_pass_count_filters();

/// @brief Tests: selection scans (iHS, nSL, XP-EHH, XP-nSL) made from now on (process-wide) cut
/// their kernel work in segments of @p segment focal sites and first give each walk @p context
/// flanking rows (0: automatic, the default). Small sizes make most walks run out of rows and
/// start again, a path that real data takes rarely (tests/cli/haplo_reference_test.cpp, the
/// CLI's hidden --segment and --context).
void set_selection_kernel_sizes(std::int64_t segment, std::int64_t context);
/// @brief The sizes set_selection_kernel_sizes set (0: automatic).
std::int64_t selection_segment();
std::int64_t selection_context();

/// @brief Tests: Runners made from now on (process-wide) in one process share their run among
/// @p shares threads (0 or 1: not), as `--device gpu:0,1` shares it among GPUs, on the device
/// the run asks for: the thread ranks and the merge run without a second GPU
/// (tests/cli/thread_shares_test.cpp, the CLI's hidden --thread-shares).
void set_thread_shares(int shares);
/// @brief What set_thread_shares set.
int thread_shares();

}  // namespace vczstats::hooks
