// MPI_COMM_WORLD and the failure rules of ranks.hpp.

#include "dist/ranks.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string_view>

#include "vczstats/error.hpp"

namespace vczstats::dist {

namespace {

constexpr int kDataTag = 1;
constexpr int kStopTag = 2;

int to_int(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw Error(std::string("MPI: ") + what + " over 2 GiB in one message");
  return static_cast<int>(n);
}

std::vector<std::vector<std::byte>> split(const std::vector<std::byte>& all,
                                          const std::vector<int>& sizes) {
  std::vector<std::vector<std::byte>> out;
  std::size_t at = 0;
  for (const int n : sizes) {
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(at),
                     all.begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(n)));
    at += static_cast<std::size_t>(n);
  }
  return out;
}

std::vector<int> displacements(const std::vector<int>& sizes) {
  std::vector<int> d(sizes.size(), 0);
  long long at = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (at > INT_MAX) throw Error("MPI: gathered messages over 2 GiB");
    d[i] = static_cast<int>(at);
    at += sizes[i];
  }
  return d;
}

/// In a module loaded with local symbols (the Python package's), Open MPI's own plugins cannot
/// see the MPI library's symbols and MPI_Init fails: load the library that holds MPI_Init again
/// with global symbols first, as mpi4py does. Harmless in a program linked with MPI.
void make_mpi_global() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&MPI_Init), &info) != 0 && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

}  // namespace

struct MpiRanks::Pending {
  int notice = 1;
  std::vector<MPI_Request> requests;
};

bool MpiRanks::launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

MpiRanks::MpiRanks(int& argc, char**& argv) : pending_(std::make_unique<Pending>()) {
  int running = 0;
  MPI_Initialized(&running);
  owned_ = running == 0;
  if (owned_) {
    make_mpi_global();
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw Error("MPI_Init_thread failed");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
  int first = local_rank_ == 0 ? 1 : 0;
  MPI_Allreduce(&first, &nodes_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  host_.assign(name, static_cast<std::size_t>(len));
}

MpiRanks::~MpiRanks() {
  // finish() ran on the normal path. Without it the other ranks may wait on this one forever:
  // end them all instead.
  if (!finished_ && size_ > 1) MPI_Abort(MPI_COMM_WORLD, 1);
  if (owned_) MPI_Finalize();
}

void MpiRanks::check() {
  int any = 0;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any) {
    stopped_by_check_ = true;
    throw Stopped();
  }
}

void MpiRanks::announce_failure() {
  if (announced_) return;
  announced_ = true;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    pending_->requests.emplace_back();
    MPI_Isend(&pending_->notice, 1, MPI_INT, r, kStopTag, MPI_COMM_WORLD,
              &pending_->requests.back());
  }
}

void MpiRanks::poll() {
  if (size_ == 1) return;
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, kStopTag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  if (flag) throw Stopped();
}

int MpiRanks::finish(int code, const std::string& message, std::string* first_message) {
  finished_ = true;
  if (code != 0) announce_failure();
  int any = code != 0 ? 1 : 0;
  if (stopped_by_check_)
    any = 1;  // this rank's share of that all-reduce was its check()
  else
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!any) return 0;

  // Every rank's code and whether it announced; then the messages.
  const int mine[2] = {code, announced_ ? 1 : 0};
  std::vector<int> all(rank_ == 0 ? 2 * static_cast<std::size_t>(size_) : 0);
  MPI_Gather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, 0, MPI_COMM_WORLD);
  const auto text = std::as_bytes(std::span(message.data(), message.size()));
  const auto messages = gather(text);
  std::vector<std::int64_t> outcome(1 + static_cast<std::size_t>(size_), 0);  // exit, announced
  if (rank_ == 0) {
    int first = -1;
    for (int r = 0; r < size_; ++r) {
      outcome[1 + static_cast<std::size_t>(r)] = all[2 * static_cast<std::size_t>(r) + 1];
      if (first < 0 && all[2 * static_cast<std::size_t>(r)] > 0) first = r;
    }
    outcome[0] = first < 0 ? 1 : all[2 * static_cast<std::size_t>(first)];
    if (first_message) {
      if (first < 0) {
        *first_message = "a rank stopped without an error message";
      } else {
        const auto& m = messages[static_cast<std::size_t>(first)];
        *first_message = std::string(reinterpret_cast<const char*>(m.data()), m.size());
        if (size_ > 1) *first_message = "rank " + std::to_string(first) + ": " + *first_message;
      }
    }
  }
  broadcast(outcome);
  // Receive the announcements sent to this rank, and complete this rank's own.
  for (int r = 0; r < size_; ++r) {
    if (r == rank_ || !outcome[1 + static_cast<std::size_t>(r)]) continue;
    int notice = 0;
    MPI_Recv(&notice, 1, MPI_INT, r, kStopTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Waitall(static_cast<int>(pending_->requests.size()), pending_->requests.data(),
              MPI_STATUSES_IGNORE);
  pending_->requests.clear();
  return static_cast<int>(outcome[0]);
}

void MpiRanks::broadcast(std::vector<std::int64_t>& values, int root) {
  MPI_Bcast(values.data(), to_int(values.size(), "a broadcast"), MPI_INT64_T, root, MPI_COMM_WORLD);
}

std::vector<std::vector<std::byte>> MpiRanks::allgather(std::span<const std::byte> mine) {
  int n = to_int(mine.size(), "a gathered value");
  std::vector<int> sizes(static_cast<std::size_t>(size_));
  MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  const auto displs = displacements(sizes);
  std::vector<std::byte> all(static_cast<std::size_t>(displs.back()) +
                             static_cast<std::size_t>(sizes.back()));
  MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE,
                 MPI_COMM_WORLD);
  return split(all, sizes);
}

std::vector<std::vector<std::byte>> MpiRanks::gather(std::span<const std::byte> mine) {
  int n = to_int(mine.size(), "a gathered value");
  std::vector<int> sizes(static_cast<std::size_t>(size_));
  MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank_ != 0) {
    MPI_Gatherv(mine.data(), n, MPI_BYTE, nullptr, nullptr, nullptr, MPI_BYTE, 0, MPI_COMM_WORLD);
    return {};
  }
  const auto displs = displacements(sizes);
  std::vector<std::byte> all(static_cast<std::size_t>(displs.back()) +
                             static_cast<std::size_t>(sizes.back()));
  MPI_Gatherv(mine.data(), n, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE, 0,
              MPI_COMM_WORLD);
  return split(all, sizes);
}

void MpiRanks::send(int to, std::span<const std::byte> bytes) {
  MPI_Send(bytes.data(), to_int(bytes.size(), "a message"), MPI_BYTE, to, kDataTag, MPI_COMM_WORLD);
}

std::vector<std::byte> MpiRanks::receive(int from) {
  MPI_Status status;
  MPI_Probe(from, kDataTag, MPI_COMM_WORLD, &status);
  int n = 0;
  MPI_Get_count(&status, MPI_BYTE, &n);
  std::vector<std::byte> bytes(static_cast<std::size_t>(n));
  MPI_Recv(bytes.data(), n, MPI_BYTE, from, kDataTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

}  // namespace vczstats::dist
