// HttpClient: libcurl multi handle, one I/O thread, retries with backoff, checked bodies.

#include "zarr/remote/http_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <random>

#include <fmt/format.h>

#include "vczstats/error.hpp"
#include "zarr/remote/remote_util.hpp"

namespace vczstats::zarr::remote {

namespace {

using Clock = std::chrono::steady_clock;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      throw IoError("libcurl: global initialisation failed");
  });
}

const char* reason(long status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 416:
      return "Range Not Satisfiable";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

std::string status_text(long status) {
  const char* r = reason(status);
  return *r ? fmt::format("HTTP {} {}", status, r) : fmt::format("HTTP {}", status);
}

/// Transport failures worth another attempt: the server or the path may recover.
bool retryable(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_READ_ERROR:
      return true;
    default:
      return false;
  }
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

bool header_is(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  return true;
}

/// "bytes FIRST-LAST/TOTAL" (TOTAL may be '*').
struct ContentRange {
  std::uint64_t first = 0, last = 0;
  std::optional<std::uint64_t> total;
};
std::optional<ContentRange> parse_content_range(const std::string& v) {
  ContentRange r;
  unsigned long long a = 0, b = 0, t = 0;
  if (std::sscanf(v.c_str(), "bytes %llu-%llu/%llu", &a, &b, &t) == 3) {
    r.total = t;
  } else if (std::sscanf(v.c_str(), "bytes %llu-%llu/*", &a, &b) != 2) {
    return std::nullopt;
  }
  if (b < a) return std::nullopt;
  r.first = a;
  r.last = b;
  return r;
}

double jitter() {
  thread_local std::minstd_rand rng(std::random_device{}());
  return 0.5 + 0.5 * std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

/// Seconds of a Retry-After header: a number of seconds or an HTTP date.
std::optional<double> parse_retry_after(const std::string& v) {
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  const double s = std::strtod(v.c_str(), &end);
  if (end != v.c_str() && *end == '\0') {
    if (!(s >= 0)) return std::nullopt;
    return s;
  }
  const std::time_t when = curl_getdate(v.c_str(), nullptr);
  if (when < 0) return std::nullopt;
  return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

}  // namespace

struct HttpClient::Transfer {
  HttpClient* client = nullptr;
  HttpRequest request;
  std::promise<ResponsePtr> promise;
  std::function<void(const ResponsePtr&)> done;
  std::shared_ptr<HttpResponse> response;
  std::optional<std::uint64_t> content_length;
  std::string content_range;
  std::optional<double> retry_after;
  std::uint64_t received = 0;      // body bytes of this attempt, kept or not
  std::uint64_t unsized_held = 0;  // bytes counted in client->unsized_bytes_
  bool stopped = false;            // the body was cut on purpose: what is needed arrived
  std::string abort_problem;       // why a callback cut the transfer
  bool abort_retry = false;
  int attempts = 0;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  char error[CURL_ERROR_SIZE] = {};

  ~Transfer() {
    release_unsized();
    if (headers) curl_slist_free_all(headers);
  }

  void release_unsized() {
    if (unsized_held > 0 && client) client->unsized_bytes_ -= unsized_held;
    unsized_held = 0;
  }

  /// Start of an attempt or of a new response (after 100 Continue or a redirect).
  void reset_response() {
    release_unsized();
    *response = HttpResponse{};
    content_length.reset();
    content_range.clear();
    retry_after.reset();
    received = 0;
    stopped = false;
    abort_problem.clear();
    abort_retry = false;
  }

  /// Cut the transfer from a callback; finish() reports @p why.
  std::size_t abort(std::string why, bool retry) {
    abort_problem = std::move(why);
    abort_retry = retry;
    return 0;  // anything but the size given: libcurl stops with CURLE_WRITE_ERROR
  }

  static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    try {
      return t->header(std::string_view(data, size * n));
    } catch (const std::exception& e) {
      return t->abort(fmt::format("cannot read the response headers: {}", e.what()), false);
    }
  }

  std::size_t header(std::string_view line) {
    if (line.starts_with("HTTP/")) {
      reset_response();
    } else if (header_is(line, "etag")) {
      response->etag = trim(line.substr(5)).substr(0, 1024);
    } else if (header_is(line, "last-modified")) {
      response->last_modified = trim(line.substr(14)).substr(0, 1024);
    } else if (header_is(line, "content-range")) {
      content_range = trim(line.substr(14)).substr(0, 1024);
    } else if (header_is(line, "content-length")) {
      const std::string v = trim(line.substr(15));
      char* end = nullptr;
      errno = 0;
      const unsigned long long len = std::strtoull(v.c_str(), &end, 10);
      if (end != v.c_str() && *end == '\0' && errno == 0 && v.front() != '-') content_length = len;
    } else if (header_is(line, "retry-after")) {
      retry_after = parse_retry_after(trim(line.substr(12)));
    } else if (header_is(line, "x-amz-bucket-region")) {
      response->bucket_region = trim(line.substr(20)).substr(0, 256);
    }
    return line.size();
  }

  static std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const std::size_t len = size * n;
    try {
      return t->body(reinterpret_cast<const std::byte*>(data), len) ? len : 0;
    } catch (const std::bad_alloc&) {
      return t->abort(fmt::format("out of memory after {} bytes of the body", t->received), false);
    } catch (const std::exception& e) {
      return t->abort(fmt::format("cannot keep the body: {}", e.what()), false);
    }
  }

  /// Keep @p len more bytes of the body, within the bounds of the request; false stops the
  /// transfer (stopped: on purpose, else abort_problem says why).
  bool body(const std::byte* p, std::size_t len) {
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    auto& out = response->body;
    const std::uint64_t before = received;
    received += len;
    const HttpRequest& r = request;
    if (status < 200 || status >= 300) {  // an error page: its start is enough for messages
      const std::uint64_t keep =
          before < kMaxErrorBody ? std::min<std::uint64_t>(len, kMaxErrorBody - before) : 0;
      out.insert(out.end(), p, p + keep);
      if (received >= kMaxErrorBody) {
        stopped = true;
        return false;
      }
      return true;
    }
    if (r.range && status == 200) {
      // The server ignored the range and sends the whole object: keep the part asked for and
      // stop once it has passed.
      const std::uint64_t first = r.range->offset, last = r.range->offset + r.range->length;
      const std::uint64_t a = std::max(before, first), b = std::min(received, last);
      if (a < b) out.insert(out.end(), p + (a - before), p + (b - before));
      if (received >= last) {
        stopped = true;
        return false;
      }
      return true;
    }
    if (r.range || r.suffix > 0) {
      const std::uint64_t asked = r.range ? r.range->length : r.suffix;
      if (status == 200) {  // a suffix answered with the whole object: keep its last bytes
        out.insert(out.end(), p, p + len);
        if (out.size() >= 2 * asked + (1u << 20))
          out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(asked));
        return true;
      }
      // A suffix answered with a longer 206 (s3rver sends bytes 0-N of an object of N + 1 bytes
      // for bytes=-K): its Content-Range places the bytes, as long as the body stays within the
      // length the server announced and the object limit. A range gets what it asked for alone.
      std::uint64_t limit = asked;
      if (!r.range && content_length && *content_length > asked) {
        const std::uint64_t cap = client->options_.max_object_bytes;
        limit = cap > 0 ? std::min(*content_length, cap) : *content_length;
      }
      if (received > limit) {
        abort(fmt::format("the server sent more than the {} bytes asked for", limit), true);
        return false;
      }
      if (out.empty())
        out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(asked, 16u << 20)));
      out.insert(out.end(), p, p + len);
      return true;
    }
    // A whole object: bounded alone; bodies without a Content-Length (their end is the
    // server's choice) also together. Announced ones are held to their length by libcurl, and
    // their number in flight to the read-ahead's budget.
    const std::uint64_t cap = client->options_.max_object_bytes;
    if (cap > 0) {
      if (content_length && *content_length > cap) {
        abort(fmt::format("the server announces {} bytes, more than the limit of {} bytes "
                          "(--max-object-size)",
                          *content_length, cap),
              false);
        return false;
      }
      if (received > cap) {
        abort(fmt::format("the body passed the limit of {} bytes (--max-object-size)", cap), false);
        return false;
      }
      if (!content_length) {
        const std::uint64_t all = client->unsized_bytes_ += len;
        unsized_held += len;
        if (all > cap) {
          abort(fmt::format("bodies without a Content-Length passed the limit of {} bytes in "
                            "all (--max-object-size)",
                            cap),
                false);
          return false;
        }
      }
    }
    if (out.empty() && content_length)
      out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(*content_length, 4u << 20)));
    out.insert(out.end(), p, p + len);
    return true;
  }
};

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)) {
  global_init();
  if (options_.max_requests == 0) options_.max_requests = 32;
  multi_ = curl_multi_init();
  if (!multi_) throw IoError("libcurl: cannot create a multi handle");
  curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS,
                    static_cast<long>(options_.max_requests));
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, static_cast<long>(options_.max_requests));
  thread_ = std::thread([this] { run(); });
}

HttpClient::~HttpClient() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  curl_multi_wakeup(multi_);
  thread_.join();
  for (void* h : idle_handles_) curl_easy_cleanup(static_cast<CURL*>(h));
  curl_multi_cleanup(multi_);
}

ResponseFuture HttpClient::submit(HttpRequest request, bool urgent,
                                  std::function<void(const ResponsePtr&)> done) {
  auto t = std::make_unique<Transfer>();
  t->request = std::move(request);
  t->done = std::move(done);
  ResponseFuture future = t->promise.get_future().share();
  {
    std::lock_guard lock(mutex_);
    if (stop_) throw IoError(t->request.url + ": the store is closed");
    (urgent ? urgent_ : background_).push_back(std::move(t));
  }
  curl_multi_wakeup(multi_);
  return future;
}

ResponsePtr HttpClient::fetch(HttpRequest request) {
  return submit(std::move(request), true).get();
}

IoStats HttpClient::stats() const {
  IoStats s;
  s.bytes_fetched = bytes_.load();
  s.requests = requests_.load();
  s.retries = retries_.load();
  s.seconds = static_cast<double>(busy_ns_.load()) * 1e-9;
  return s;
}

void HttpClient::note(const std::string& message) const {
  if (options_.log) options_.log(message);
}

void HttpClient::start(std::unique_ptr<Transfer> t) {
  CURL* h = nullptr;
  if (!idle_handles_.empty()) {
    h = static_cast<CURL*>(idle_handles_.back());
    idle_handles_.pop_back();
    curl_easy_reset(h);
  } else {
    h = curl_easy_init();
  }
  if (!h) {
    t->promise.set_exception(
        std::make_exception_ptr(IoError(t->request.url + ": libcurl: cannot create a handle")));
    return;
  }
  ++t->attempts;
  t->easy = h;
  t->client = this;
  t->response = std::make_shared<HttpResponse>();
  t->reset_response();
  t->error[0] = '\0';
  if (t->headers) {
    curl_slist_free_all(t->headers);
    t->headers = nullptr;
  }
  const HttpRequest& r = t->request;
  curl_easy_setopt(h, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(h, CURLOPT_PRIVATE, t.get());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::max(1.0, options_.connect_seconds * 1000)));
  // A transfer slower than min_bytes_per_second (or silent) for stall_seconds is cut and
  // retried: a body dripped a byte at a time must not hold a run forever.
  const double stall = std::max(1.0, std::ceil(options_.stall_seconds));
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT,
                   static_cast<long>(std::clamp(options_.min_bytes_per_second, 1.0, 1e12)));
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(stall));
  if (options_.min_bytes_per_second > 0 && (r.range || r.suffix > 0)) {
    // A deadline from the size asked for, so a rate just above the limit cannot go on forever.
    const double bytes = static_cast<double>(r.range ? r.range->length : r.suffix);
    const double seconds =
        options_.connect_seconds + 2 * stall + bytes / options_.min_bytes_per_second;
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(std::min(seconds * 1000, 1e9)));
  }
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  // Waiting for a connection to multiplex on pays only with HTTP/2 (TLS here); on HTTP/1.1 a
  // request would queue behind a connection that may never answer.
  if (r.url.starts_with("https://")) curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 256L * 1024);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "vczstats");
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &Transfer::on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, t.get());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &Transfer::on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, t.get());
  if (r.head) curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  std::string range;
  if (r.range) {
    if (r.range->length == 0) {
      // Nothing to fetch: answer at once rather than send an invalid range.
      t->response->status = 206;
      t->response->body_offset = r.range->offset;
      ResponsePtr done = t->response;
      t->promise.set_value(done);
      if (t->done) t->done(done);
      idle_handles_.push_back(h);
      return;
    }
    range = fmt::format("{}-{}", r.range->offset, r.range->offset + r.range->length - 1);
  } else if (r.suffix > 0) {
    range = fmt::format("-{}", r.suffix);
  }
  if (!range.empty()) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());  // copied by libcurl
  for (const auto& line : r.headers) t->headers = curl_slist_append(t->headers, line.c_str());
  if (options_.sign) {
    const SigV4& s = *options_.sign;
    // S3 wants the payload hash header (libcurl 7.88 does not add it); GETs have no payload.
    t->headers = curl_slist_append(t->headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (!s.session_token.empty())
      t->headers =
          curl_slist_append(t->headers, ("x-amz-security-token: " + s.session_token).c_str());
    const std::string provider = fmt::format("aws:amz:{}:{}", s.region, s.service);
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, provider.c_str());
    curl_easy_setopt(h, CURLOPT_USERNAME, s.access_key_id.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, s.secret_access_key.c_str());
  }
  if (t->headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, t->headers);
  if (curl_multi_add_handle(multi_, h) != CURLM_OK) {
    t->promise.set_exception(
        std::make_exception_ptr(IoError(r.url + ": libcurl: cannot start the transfer")));
    idle_handles_.push_back(h);
    return;
  }
  active_.push_back(std::move(t));
}

void HttpClient::finish(Transfer* raw, int curl_code) {
  auto it = std::find_if(active_.begin(), active_.end(),
                         [&](const std::unique_ptr<Transfer>& p) { return p.get() == raw; });
  if (it == active_.end()) return;
  std::unique_ptr<Transfer> t = std::move(*it);
  active_.erase(it);
  CURL* h = t->easy;
  curl_multi_remove_handle(multi_, h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  idle_handles_.push_back(h);
  t->easy = nullptr;

  ++requests_;
  HttpResponse& resp = *t->response;
  bytes_ += static_cast<std::int64_t>(resp.body.size());
  resp.status = status;
  const HttpRequest& req = t->request;
  const auto code = static_cast<CURLcode>(curl_code);

  t->release_unsized();
  std::string problem;
  bool retry = false;
  if (code != CURLE_OK && !t->abort_problem.empty()) {
    problem = t->abort_problem;
    retry = t->abort_retry;
  } else if (code != CURLE_OK && !(t->stopped && code == CURLE_WRITE_ERROR)) {
    problem = t->error[0] ? std::string(t->error) : std::string(curl_easy_strerror(code));
    retry = retryable(code);
  } else if (status >= 500 || status == 429 || status == 408) {
    problem = status_text(status);
    retry = true;
  } else if (status == 200 || status == 206) {
    const std::size_t got = resp.body.size();
    if (!req.head && !t->stopped && t->content_length && t->received != *t->content_length) {
      problem =
          fmt::format("response body cut short: {} of {} bytes", t->received, *t->content_length);
      retry = true;
    } else if (status == 206) {
      const auto cr = parse_content_range(t->content_range);
      if (!cr) {
        problem =
            fmt::format("206 response without a valid Content-Range ('{}')", t->content_range);
        retry = true;
      } else {
        resp.object_size = cr->total;
        resp.body_offset = cr->first;
        const std::uint64_t announced = cr->last - cr->first + 1;
        std::uint64_t want = announced;
        if (req.range) {
          want = req.range->length;
          if (cr->total)
            want = std::min(want, *cr->total - std::min(*cr->total, req.range->offset));
        }
        if (!req.head && (got != announced ||
                          (req.range && (cr->first != req.range->offset || announced != want)))) {
          problem =
              fmt::format("range response holds bytes {}-{} ({} received), asked for {}", cr->first,
                          cr->last, got,
                          req.range ? fmt::format("{}+{}", req.range->offset, req.range->length)
                                    : fmt::format("the last {}", req.suffix));
          retry = true;
        }
      }
    } else {  // 200: the whole object, also when a range was asked for and ignored
      // The body callback kept only the part asked for (and stopped once it had passed).
      if (t->content_length)
        resp.object_size = *t->content_length;
      else if (!t->stopped)
        resp.object_size = t->received;
      if (!req.head && req.range) {
        resp.body_offset = std::min<std::uint64_t>(req.range->offset, t->received);
        resp.status = 206;
      } else if (!req.head && req.suffix > 0) {
        const std::uint64_t keep = std::min<std::uint64_t>(got, req.suffix);
        resp.body.erase(resp.body.begin(), resp.body.end() - static_cast<std::ptrdiff_t>(keep));
        resp.body_offset = t->received - keep;
        resp.status = 206;
      }
    }
  } else if (status == 404 || status == 410 || status == 304) {
    // Absent (a missing chunk is the fill value) or unchanged: the caller decides.
  } else {
    problem = status_text(status);
    const std::string detail = describe_error_body(resp);
    if (!detail.empty()) problem += ": " + detail;
    if (status == 403 || status == 401)
      problem += options_.sign ? " (check the credentials and the region, or use --anonymous)"
                               : " (access denied; credentials may be needed)";
  }

  if (!problem.empty() && retry && t->attempts <= options_.max_retries) {
    ++retries_;
    double delay =
        std::min(5.0, options_.backoff_seconds * std::pow(2.0, t->attempts - 1)) * jitter();
    // A server that says when to come back (429, 503) is believed, within a bound.
    if (t->retry_after) delay = std::max(delay, std::min(*t->retry_after, kMaxRetryAfterSeconds));
    note(fmt::format("retrying {}: {} (attempt {} of {}, in {:.2f} s)", req.url, problem,
                     t->attempts + 1, options_.max_retries + 1, delay));
    const auto due = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(delay));
    std::lock_guard lock(mutex_);
    retry_.emplace_back(due, std::move(t));
    return;  // run() takes the new due time into its wait
  }
  if (!problem.empty()) {
    const std::string message =
        retry ? fmt::format("{}: {} (gave up after {} attempts)", req.url, problem, t->attempts)
              : fmt::format("{}: {}", req.url, problem);
    t->promise.set_exception(std::make_exception_ptr(IoError(message)));
    if (t->done) t->done(nullptr);
    return;
  }
  ResponsePtr done = t->response;
  t->promise.set_value(done);
  if (t->done) t->done(done);
}

void HttpClient::fail_all(const std::string& why) {
  auto fail = [&](std::unique_ptr<Transfer>& t) {
    t->promise.set_exception(std::make_exception_ptr(IoError(t->request.url + ": " + why)));
  };
  for (auto& t : active_) {
    curl_multi_remove_handle(multi_, t->easy);
    idle_handles_.push_back(t->easy);
    fail(t);
  }
  active_.clear();
  std::lock_guard lock(mutex_);
  for (auto& t : urgent_) fail(t);
  for (auto& t : background_) fail(t);
  for (auto& [due, t] : retry_) fail(t);
  urgent_.clear();
  background_.clear();
  retry_.clear();
}

void HttpClient::run() {
  auto last = Clock::now();
  for (;;) {
    std::vector<std::unique_ptr<Transfer>> starting;
    Clock::time_point next_retry = Clock::time_point::max();
    {
      std::lock_guard lock(mutex_);
      if (stop_) break;
      const auto now = Clock::now();
      for (auto it = retry_.begin(); it != retry_.end();) {
        if (it->first <= now) {
          urgent_.push_front(std::move(it->second));
          it = retry_.erase(it);
        } else {
          next_retry = std::min(next_retry, it->first);
          ++it;
        }
      }
      std::size_t room =
          options_.max_requests > active_.size() ? options_.max_requests - active_.size() : 0;
      while (room > 0 && (!urgent_.empty() || !background_.empty())) {
        auto& q = urgent_.empty() ? background_ : urgent_;
        starting.push_back(std::move(q.front()));
        q.pop_front();
        --room;
      }
    }
    for (auto& t : starting) start(std::move(t));
    int running = 0;
    curl_multi_perform(multi_, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
      finish(t, static_cast<int>(msg->data.result));
    }
    const auto now = Clock::now();
    if (!active_.empty() || running > 0)
      busy_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(now - last).count();
    last = now;
    int timeout_ms = active_.empty() ? 1000 : 100;
    {
      std::lock_guard lock(mutex_);
      // Retries queued by finish() above count too: the wait must not pass their due time.
      for (const auto& [due, t] : retry_) next_retry = std::min(next_retry, due);
      const bool startable =
          active_.size() < options_.max_requests && (!urgent_.empty() || !background_.empty());
      if (startable || stop_) timeout_ms = 0;
    }
    if (next_retry != Clock::time_point::max()) {
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_retry - now);
      timeout_ms = std::clamp(static_cast<int>(wait.count()) + 1, 0, timeout_ms);
    }
    if (timeout_ms > 0) curl_multi_poll(multi_, nullptr, 0, timeout_ms, nullptr);
  }
  fail_all("the store was closed before the request finished");
}

std::string describe_error_body(const HttpResponse& response) {
  const std::string_view body(reinterpret_cast<const char*>(response.body.data()),
                              response.body.size());
  const std::string code = xml_text(body, "Code");
  const std::string message = xml_text(body, "Message");
  if (!code.empty()) return message.empty() ? code : code + ": " + message;
  std::string text;
  for (char c : body.substr(0, 200)) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (std::isprint(static_cast<unsigned char>(c))) text += c;
  }
  // HTML error pages say little beyond the status; leave them out.
  if (text.find('<') != std::string::npos) return {};
  return trim(text);
}

}  // namespace vczstats::zarr::remote
