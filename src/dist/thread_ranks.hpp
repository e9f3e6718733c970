#pragma once
// Ranks that are threads of one process (ranks.hpp): the distributed driver (driver.hpp) over
// several GPUs of a process, one thread each, without MPI's processes. Rank 0 is the calling
// thread (it writes the output, as MPI's rank 0 does); ranks 1.. are threads of their own.
//
// The same rules as MPI's: check() is an all-reduce of "did anyone fail" (a barrier whose result
// every rank of that round reads), poll() reads the flag a failing rank sets, the collectives
// move bytes through per-rank slots between barriers, and messages go through bounded queues (a
// sender blocks while four of its messages wait, as MPI_Send does past its buffers). A rank that
// ends, failed or done, leaves the barrier: the others' rounds go on without it, and a receive
// from it (or a send to it) with nothing left to take throws Stopped rather than wait forever.

#include <functional>
#include <memory>

#include "dist/ranks.hpp"

namespace vczstats::dist {

/// @brief Run @p body once on each of @p size thread ranks: rank 0 on the calling thread, the
/// others on threads of their own, all at once; returns when every one has ended. Rethrows the
/// exception of the lowest rank that failed with something other than Stopped (Stopped only
/// when every failure was one).
void run_thread_ranks(int size, const std::function<void(Ranks& ranks)>& body);

}  // namespace vczstats::dist
