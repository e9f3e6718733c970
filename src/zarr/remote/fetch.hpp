#pragma once
/// @file fetch.hpp
/// @brief Private: what remote stores share above the HTTP client: the local chunk cache and the
/// read-ahead queue that turns Store::prefetch hints into requests in flight.

#include <atomic>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "zarr/remote/http_client.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr::remote {

/// @brief Objects kept on local disk under --cache-dir, keyed by URL, validator (ETag, else
/// Last-Modified), object size and byte range, so a changed object is never served stale. Each
/// file holds its full key, checked on load (a hash collision is a miss). Writes are atomic
/// (temporary file renamed into place), so concurrent processes may share a cache.
class ChunkCache {
 public:
  /// @throws IoError when @p dir cannot be created.
  explicit ChunkCache(std::filesystem::path dir);
  /// @brief The cache key of a whole object or of a byte range of it.
  static std::string key(const std::string& url, const std::string& validator, std::uint64_t size,
                         std::optional<ByteRange> range = std::nullopt);
  /// @brief The bytes stored under @p key when they are there and have @p length bytes.
  std::optional<std::vector<std::byte>> load(const std::string& key, std::uint64_t length) const;
  /// @brief Whether a file for @p key exists (load() may still find it is not the one).
  bool has(const std::string& key) const;
  /// @brief Store @p body under @p key (errors are ignored: the cache is an optimisation).
  void store(const std::string& key, std::span<const std::byte> body) const;
  /// @brief The validator and size last seen for @p url (directory stores revalidate with
  /// If-None-Match).
  std::optional<std::pair<std::string, std::uint64_t>> validator(const std::string& url) const;
  void set_validator(const std::string& url, const std::string& validator,
                     std::uint64_t size) const;

  std::int64_t hits() const { return hits_.load(); }
  std::int64_t hit_bytes() const { return hit_bytes_.load(); }
  void count_hit(std::uint64_t bytes) const {
    ++hits_;
    hit_bytes_ += static_cast<std::int64_t>(bytes);
  }

 private:
  std::filesystem::path file_for(const std::string& key) const;
  std::filesystem::path dir_;
  mutable std::atomic<std::int64_t> hits_{0}, hit_bytes_{0};
};

/// @brief The client's counters with the cache's hits.
IoStats io_stats(const HttpClient& client, const ChunkCache* cache);

/// @brief The validator of a response for the cache: its ETag, else its Last-Modified.
std::string validator_of(const HttpResponse& r);

/// @brief A part of a planned fetch: the bytes [offset, offset + length) of its body (length
/// UINT64_MAX: to the end), named by an id the store chooses (a key, or a byte range).
struct FetchPart {
  std::string id;
  std::uint64_t offset = 0;
  std::uint64_t length = UINT64_MAX;
};

/// @brief One request the read-ahead may send, and the parts it serves.
struct PlannedFetch {
  HttpRequest request;
  std::uint64_t expected_bytes = 0;  ///< 0: unknown (charged at the running mean until it lands)
  std::vector<FetchPart> parts;
};

/// @brief A part handed to a reader: the response (maybe still in flight) and where in its body
/// the part lies.
struct PartClaim {
  ResponseFuture future;
  std::uint64_t offset = 0;
  std::uint64_t length = UINT64_MAX;
  std::string validator_key;  ///< unused by the queue; stores fill it when they cache
};

/// @brief Read-ahead: hinted fetches are sent in hint order while the bytes fetched and not yet
/// taken stay under a budget (and their count under a limit); take() hands a part over, sending
/// its fetch at once when it was still queued. Fetches whose parts were skipped (the reader went
/// far past them) are dropped, so stale hints cannot hold the budget.
class ReadAhead {
 public:
  ReadAhead(HttpClient& client, std::int64_t budget_bytes, std::size_t max_ahead);
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  /// @brief Append fetches (parts already hinted are skipped).
  void add(std::vector<PlannedFetch> fetches);
  /// @brief Forget every hint; transfers in flight finish and are dropped.
  void cancel();
  /// @brief The claim of a hinted part, or nullopt when @p id was not hinted.
  std::optional<PartClaim> take(const std::string& id);
  /// @brief Whether @p id is hinted and not yet taken.
  bool hinted(const std::string& id) const;
  /// @brief Called on the I/O thread with each arrived response of a planned fetch (caching).
  void on_arrival(std::function<void(const PlannedFetch&, const ResponsePtr&)> fn);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// @brief A byte source over HTTP range requests: the object's size and validator come from the
/// first request (its last @p tail bytes, which are kept: a zip's end records and often its
/// central directory). Reads are served from the tail, the read-ahead, the cache or a request;
/// prefetch() coalesces neighbouring ranges into one request of at most @p coalesce_bytes.
/// @throws IoError when the object cannot be fetched (404 included).
std::shared_ptr<const detail::ByteSource> open_http_range_source(
    const std::string& url, std::shared_ptr<HttpClient> client,
    std::shared_ptr<const ChunkCache> cache, const StoreOptions& options, std::uint64_t tail);

}  // namespace vczstats::zarr::remote
