#pragma once
/// @file http_client.hpp
/// @brief Private: an HTTP client on libcurl's multi interface. One I/O thread drives every
/// transfer of a client, so many requests are in flight while callers wait only for the one
/// they need. Failed attempts (5xx, 429, timeouts, dropped connections, bodies shorter than
/// announced) are retried with exponential backoff; the caller sees either a complete response
/// or one IoError naming the URL.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "vczstats/zarr.hpp"

namespace vczstats::zarr::remote {

/// @brief Bytes [offset, offset + length) of an object.
struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

/// @brief One request. A range asks for part of the object (206 expected; a server that
/// ignores ranges and answers 200 is sliced); 404 is a response, not an error.
struct HttpRequest {
  std::string url;
  bool head = false;
  std::optional<ByteRange> range;
  /// Range from the end: the last @p suffix bytes (for a zip's end records), when > 0.
  std::uint64_t suffix = 0;
  std::vector<std::string> headers;  ///< extra "Name: value" lines (e.g. If-None-Match)
};

/// Bytes of an error page (a status other than 2xx) kept for messages; the rest is not read.
inline constexpr std::uint64_t kMaxErrorBody = 64 * 1024;
/// The longest a Retry-After header is honoured, in seconds.
inline constexpr double kMaxRetryAfterSeconds = 30;

/// @brief A completed request.
struct HttpResponse {
  long status = 0;
  std::vector<std::byte> body;
  std::string etag;           ///< ETag header, quotes included ("" when absent)
  std::string last_modified;  ///< Last-Modified header
  std::string bucket_region;  ///< x-amz-bucket-region (S3)
  /// Size of the whole object: the total of Content-Range, else Content-Length of a 200.
  std::optional<std::uint64_t> object_size;
  /// Offset of body[0] in the object (the start of Content-Range; 0 for a 200).
  std::uint64_t body_offset = 0;
};

using ResponsePtr = std::shared_ptr<const HttpResponse>;
using ResponseFuture = std::shared_future<ResponsePtr>;

/// @brief AWS Signature V4 credentials; libcurl signs each request (CURLOPT_AWS_SIGV4).
struct SigV4 {
  std::string region = "us-east-1";
  std::string service = "s3";
  std::string access_key_id, secret_access_key, session_token;
};

/// @brief Settings of a client.
struct HttpClientOptions {
  unsigned max_requests = 32;
  int max_retries = 5;
  double stall_seconds = 30;
  double connect_seconds = 10;
  double backoff_seconds = 0.1;  ///< first retry delay; doubles each time, capped at 5 s
  /// Slowest transfer accepted, in bytes a second, once stall_seconds have passed below it (0:
  /// only a transfer receiving nothing for stall_seconds is cut). A range request also gets a
  /// deadline: connect and twice the stall time, plus its length at this rate.
  double min_bytes_per_second = 64 * 1024;
  /// Largest body of an object fetched whole (a key of a directory store, a listing), and the
  /// most bytes all such bodies in flight may hold together; bodies of range requests are capped
  /// at the range. No buffer is sized from a header the server sent beyond these.
  std::uint64_t max_object_bytes = std::uint64_t{256} << 20;
  std::optional<SigV4> sign;  ///< sign every request (S3)
  std::function<void(const std::string&)> log;
};

/// @brief Drives transfers on one I/O thread. Thread-safe; destruction fails what is pending.
class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// @brief Queue a request. Urgent requests (a caller is waiting) start before read-ahead
  /// ones. @p done, when given, runs on the I/O thread after the future is ready.
  ResponseFuture submit(HttpRequest request, bool urgent = true,
                        std::function<void(const ResponsePtr&)> done = {});
  /// @brief Submit and wait. @throws IoError when every attempt failed or the server refused.
  ResponsePtr fetch(HttpRequest request);

  /// @brief Counters so far (cache fields are the caller's).
  IoStats stats() const;
  const HttpClientOptions& options() const { return options_; }
  /// @brief Pass a note to the log callback, if any.
  void note(const std::string& message) const;

 private:
  struct Transfer;
  void run();
  void start(std::unique_ptr<Transfer> t);
  void finish(Transfer* t, int curl_code);
  void fail_all(const std::string& why);

  HttpClientOptions options_;
  void* multi_ = nullptr;  // CURLM*
  std::thread thread_;
  mutable std::mutex mutex_;
  std::deque<std::unique_ptr<Transfer>> urgent_, background_;
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::unique_ptr<Transfer>>> retry_;
  std::vector<std::unique_ptr<Transfer>> active_;  // I/O thread only
  std::vector<void*> idle_handles_;                // CURL*, I/O thread only
  bool stop_ = false;
  std::atomic<std::uint64_t> unsized_bytes_{0};  // held by bodies of whole-object requests
  std::atomic<std::int64_t> bytes_{0}, requests_{0}, retries_{0}, busy_ns_{0};
};

/// @brief The text of a failed response for messages: the S3 XML error's Code and Message, else
/// the start of the body.
std::string describe_error_body(const HttpResponse& response);

}  // namespace vczstats::zarr::remote
