// The chunk cache, the read-ahead queue and the HTTP range source of remote zip stores.

#include "zarr/remote/fetch.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "vczstats/error.hpp"
#include "zarr/remote/remote_util.hpp"

namespace vczstats::zarr::remote {

namespace fs = std::filesystem;

// ---- cache
// ----------------------------------------------------------------------------------------

namespace {
constexpr std::string_view kCacheMagic = "vczstats-cache 1\n";

/// Write @p file through a temporary sibling renamed into place, so readers (other processes
/// sharing the cache) never see half a file; failures leave nothing (the cache is optional).
template <class Write>
void write_atomically(const fs::path& file, Write&& write) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  thread_local std::minstd_rand rng(std::random_device{}());
  const fs::path tmp = file.parent_path() / fmt::format(".tmp{}.{:08x}", ::getpid(), rng());
  {
    std::ofstream out(tmp, std::ios::binary);
    write(out);
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) fs::remove(tmp, ec);
}
}  // namespace

ChunkCache::ChunkCache(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_))
    throw IoError(fmt::format("{}: cannot create the cache folder: {}", dir_.string(),
                              ec ? ec.message() : "not a folder"));
}

std::string ChunkCache::key(const std::string& url, const std::string& validator,
                            std::uint64_t size, std::optional<ByteRange> range) {
  std::string k = fmt::format("{}\n{}\n{}", url, validator, size);
  if (range) k += fmt::format("\n{}+{}", range->offset, range->length);
  return k;
}

fs::path ChunkCache::file_for(const std::string& key) const {
  const std::string h = fmt::format("{:016x}", fnv1a64(key));
  return dir_ / h.substr(0, 2) / h.substr(2);
}

std::optional<std::vector<std::byte>> ChunkCache::load(const std::string& key,
                                                       std::uint64_t length) const {
  std::ifstream in(file_for(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string head(kCacheMagic.size(), '\0');
  std::uint64_t key_len = 0;
  if (!in.read(head.data(), static_cast<std::streamsize>(head.size())) || head != kCacheMagic)
    return std::nullopt;
  if (!in.read(reinterpret_cast<char*>(&key_len), sizeof key_len) || key_len != key.size())
    return std::nullopt;
  std::string stored(key_len, '\0');
  if (!in.read(stored.data(), static_cast<std::streamsize>(key_len)) || stored != key)
    return std::nullopt;
  std::vector<std::byte> body(static_cast<std::size_t>(length));
  if (!in.read(reinterpret_cast<char*>(body.data()), static_cast<std::streamsize>(length)))
    return std::nullopt;
  if (in.peek() != std::char_traits<char>::eof()) return std::nullopt;  // longer: not ours
  count_hit(length);
  return body;
}

void ChunkCache::store(const std::string& key, std::span<const std::byte> body) const {
  const std::uint64_t key_len = key.size();
  write_atomically(file_for(key), [&](std::ofstream& out) {
    out.write(kCacheMagic.data(), static_cast<std::streamsize>(kCacheMagic.size()));
    out.write(reinterpret_cast<const char*>(&key_len), sizeof key_len);
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(reinterpret_cast<const char*>(body.data()),
              static_cast<std::streamsize>(body.size()));
  });
}

bool ChunkCache::has(const std::string& key) const {
  std::error_code ec;
  return fs::exists(file_for(key), ec);
}

std::optional<std::pair<std::string, std::uint64_t>> ChunkCache::validator(
    const std::string& url) const {
  auto text = system_read_file(file_for("validator\n" + url).string());
  if (!text) return std::nullopt;
  // url \n validator \n size
  const std::size_t a = text->find('\n');
  const std::size_t b = a == std::string::npos ? a : text->find('\n', a + 1);
  if (b == std::string::npos || text->substr(0, a) != url) return std::nullopt;
  return std::pair{text->substr(a + 1, b - a - 1),
                   std::strtoull(text->c_str() + b + 1, nullptr, 10)};
}

void ChunkCache::set_validator(const std::string& url, const std::string& validator,
                               std::uint64_t size) const {
  write_atomically(file_for("validator\n" + url), [&](std::ofstream& out) {
    out << fmt::format("{}\n{}\n{}", url, validator, size);
  });
}

IoStats io_stats(const HttpClient& client, const ChunkCache* cache) {
  IoStats s = client.stats();
  if (cache) {
    s.cache_hits = cache->hits();
    s.cache_bytes = cache->hit_bytes();
  }
  return s;
}

std::string validator_of(const HttpResponse& r) {
  if (!r.etag.empty()) return "etag " + r.etag;
  if (!r.last_modified.empty()) return "modified " + r.last_modified;
  return {};
}

// ---- read-ahead
// -----------------------------------------------------------------------------------

struct ReadAhead::State {
  struct Fetch {
    PlannedFetch plan;
    std::optional<ResponseFuture> future;  // set once sent
    std::size_t remaining = 0;             // parts not yet taken
    std::uint64_t seq = 0;
    std::uint64_t batch = 0;   // the add() call that hinted it
    std::int64_t charged = 0;  // bytes counted against the budget while sent and not taken
    bool counted = false;      // in held/started (sent, not released)
  };

  HttpClient& client;
  const std::int64_t budget;
  const std::size_t max_ahead;
  std::mutex mutex;
  std::deque<std::shared_ptr<Fetch>> queue;                       // not yet sent, in hint order
  std::unordered_map<std::string, std::shared_ptr<Fetch>> parts;  // hinted, not taken
  std::map<std::uint64_t, std::shared_ptr<Fetch>> sent;           // sent and counted, by seq
  std::int64_t held = 0;
  std::size_t in_flight = 0;  // sent and not yet arrived
  std::uint64_t next_seq = 0;
  std::uint64_t next_batch = 0;
  double mean_unknown = 256 * 1024;  // charge of a fetch of unknown size
  std::int64_t arrived_unknown = 0;
  std::function<void(const PlannedFetch&, const ResponsePtr&)> arrival;

  State(HttpClient& c, std::int64_t b, std::size_t m) : client(c), budget(b), max_ahead(m) {}

  void release(const std::shared_ptr<Fetch>& f) {
    if (!f->counted) return;
    f->counted = false;
    held -= f->charged;
    sent.erase(f->seq);
  }

  void send(const std::shared_ptr<Fetch>& f, bool urgent, const std::shared_ptr<State>& self) {
    f->charged = f->plan.expected_bytes > 0 ? static_cast<std::int64_t>(f->plan.expected_bytes)
                                            : static_cast<std::int64_t>(mean_unknown);
    f->counted = true;
    held += f->charged;
    sent.emplace(f->seq, f);
    ++in_flight;
    std::weak_ptr<State> weak = self;
    f->future = client.submit(f->plan.request, urgent, [weak, f](const ResponsePtr& r) {
      auto s = weak.lock();
      if (!s) return;
      std::function<void(const PlannedFetch&, const ResponsePtr&)> notify;
      {
        std::lock_guard lock(s->mutex);
        --s->in_flight;
        if (r && f->plan.expected_bytes == 0) {
          const auto actual = static_cast<std::int64_t>(r->body.size());
          ++s->arrived_unknown;
          s->mean_unknown += (static_cast<double>(actual) - s->mean_unknown) /
                             static_cast<double>(std::min<std::int64_t>(s->arrived_unknown, 64));
          if (f->counted) {
            s->held += actual - f->charged;
            f->charged = actual;
          }
        }
        notify = s->arrival;
        s->pump(s);
      }
      if (r && notify) notify(f->plan, r);
    });
  }

  void pump(const std::shared_ptr<State>& self) {
    while (!queue.empty()) {
      auto& f = queue.front();
      if (f->future || f->remaining == 0) {  // sent early by take(), or dropped
        queue.pop_front();
        continue;
      }
      // Requests in flight are limited in number; what arrived and waits for its reader only
      // by bytes (hints a reader never takes, e.g. the end of a read-ahead window past the
      // last chunk it reads, must not stop the read-ahead).
      if (in_flight >= max_ahead || (!sent.empty() && held >= budget)) break;
      auto next = std::move(f);
      queue.pop_front();
      send(next, false, self);
    }
  }
};

ReadAhead::ReadAhead(HttpClient& client, std::int64_t budget_bytes, std::size_t max_ahead)
    : state_(std::make_shared<State>(client, std::max<std::int64_t>(budget_bytes, 1),
                                     std::max<std::size_t>(max_ahead, 1))) {}

ReadAhead::~ReadAhead() {
  cancel();
}

void ReadAhead::on_arrival(std::function<void(const PlannedFetch&, const ResponsePtr&)> fn) {
  std::lock_guard lock(state_->mutex);
  state_->arrival = std::move(fn);
}

void ReadAhead::add(std::vector<PlannedFetch> fetches) {
  std::lock_guard lock(state_->mutex);
  const std::uint64_t batch = state_->next_batch++;
  for (auto& plan : fetches) {
    if (plan.parts.empty() || state_->parts.count(plan.parts.front().id)) continue;
    auto f = std::make_shared<State::Fetch>();
    f->plan = std::move(plan);
    f->seq = state_->next_seq++;
    f->batch = batch;
    for (const auto& p : f->plan.parts)
      if (state_->parts.emplace(p.id, f).second) ++f->remaining;
    if (f->remaining > 0) state_->queue.push_back(std::move(f));
  }
  state_->pump(state_);
}

void ReadAhead::cancel() {
  std::lock_guard lock(state_->mutex);
  for (auto& [id, f] : state_->parts) f->remaining = 0;
  state_->parts.clear();
  state_->queue.clear();
  state_->sent.clear();
  state_->held = 0;
}

bool ReadAhead::hinted(const std::string& id) const {
  std::lock_guard lock(state_->mutex);
  return state_->parts.count(id) > 0;
}

std::optional<PartClaim> ReadAhead::take(const std::string& id) {
  auto& s = *state_;
  std::lock_guard lock(s.mutex);
  auto it = s.parts.find(id);
  if (it == s.parts.end()) return std::nullopt;
  std::shared_ptr<State::Fetch> f = it->second;
  s.parts.erase(it);
  if (!f->future) s.send(f, true, state_);  // still queued: the reader needs it now
  PartClaim claim;
  claim.future = *f->future;
  for (const auto& p : f->plan.parts) {
    if (p.id == id) {
      claim.offset = p.offset;
      claim.length = p.length;
      break;
    }
  }
  if (--f->remaining == 0) s.release(f);
  // Fetches of the same hints far behind this one were skipped by the reader: drop them.
  // (Other hints, e.g. a region read while a plan streams, are read at their own pace.)
  std::vector<std::shared_ptr<State::Fetch>> stale;
  for (const auto& [seq, g] : s.sent) {
    if (seq + s.max_ahead >= f->seq) break;
    if (g->batch == f->batch) stale.push_back(g);
  }
  for (const auto& g : stale) {
    for (const auto& p : g->plan.parts) {
      auto pit = s.parts.find(p.id);
      if (pit != s.parts.end() && pit->second == g) s.parts.erase(pit);
    }
    g->remaining = 0;
    s.release(g);
  }
  s.pump(state_);
  return claim;
}

// ---- HTTP range source
// ----------------------------------------------------------------------------

namespace {

std::string range_id(std::uint64_t offset, std::uint64_t length) {
  return fmt::format("{}+{}", offset, length);
}

class HttpRangeSource final : public detail::ByteSource {
 public:
  HttpRangeSource(std::string url, std::shared_ptr<HttpClient> client,
                  std::shared_ptr<const ChunkCache> cache, const StoreOptions& options,
                  std::uint64_t tail)
      : url_(std::move(url)),
        client_(std::move(client)),
        cache_(std::move(cache)),
        readahead_(*client_, options.readahead_bytes,
                   std::max<std::size_t>(64, 8 * std::size_t{client_->options().max_requests})),
        coalesce_bytes_(std::uint64_t{8} << 20) {
    HttpRequest req;
    req.url = url_;
    req.suffix = tail;
    auto r = client_->fetch(req);
    if (r->status == 404) throw IoError(url_ + ": HTTP 404 Not Found");
    if (!r->object_size)
      throw IoError(url_ + ": the server did not give the object's size (no Content-Range)");
    size_ = *r->object_size;
    validator_ = validator_of(*r);
    tail_offset_ = r->body_offset;
    tail_ = Bytes(std::span<const std::byte>(r->body), r);
    if (cache_ && !validator_.empty()) {
      readahead_.on_arrival(
          [this](const PlannedFetch& plan, const ResponsePtr& resp) { store_parts(plan, *resp); });
    }
  }

  ~HttpRangeSource() override {
    readahead_.cancel();
    // Stop the I/O thread before the members go: arrival callbacks use this object.
    client_.reset();
  }

  const std::string& name() const override { return url_; }
  std::uint64_t size() const override { return size_; }
  bool remote() const override { return true; }

  Bytes read(std::uint64_t offset, std::uint64_t length) const override {
    if (offset > size_ || length > size_ - offset)
      throw FormatError(fmt::format("{}: bytes {}+{} pass the end of the file ({} bytes)", url_,
                                    offset, length, size_));
    if (offset >= tail_offset_ && offset + length <= tail_offset_ + tail_.size())
      return tail_.slice(static_cast<std::size_t>(offset - tail_offset_),
                         static_cast<std::size_t>(length));
    if (auto claim = readahead_.take(range_id(offset, length))) {
      const ResponsePtr r = claim->future.get();
      const std::uint64_t in_body = claim->offset;
      if (r->status != 404 && r->body_offset + in_body == offset &&
          r->body.size() >= in_body + length) {
        return Bytes(std::span<const std::byte>(r->body).subspan(static_cast<std::size_t>(in_body),
                                                                 static_cast<std::size_t>(length)),
                     r);
      }
      // A coalesced response shorter than planned (the object changed?): fetch the part alone.
    }
    const std::string ckey = cache_key(offset, length);
    if (!ckey.empty()) {
      if (auto body = cache_->load(ckey, length)) return Bytes(std::move(*body));
    }
    HttpRequest req;
    req.url = url_;
    req.range = ByteRange{offset, length};
    auto r = client_->fetch(req);
    check(*r, offset, length);
    if (!ckey.empty()) cache_->store(ckey, r->body);
    return Bytes(std::span<const std::byte>(r->body), r);
  }

  void prefetch(std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges) const override {
    // Ranges near each other in the file travel in one request, whatever order they were hinted
    // in (a zip lists chunk 10 before chunk 2); requests go out in the order their first range
    // was hinted, so the reader's next chunk comes first.
    struct Hint {
      std::uint64_t offset, length;
      std::size_t order;
    };
    std::vector<Hint> hints;
    hints.reserve(ranges.size());
    for (const auto& [offset, length] : ranges) {
      if (length == 0 || offset > size_ || length > size_ - offset) continue;
      if (offset >= tail_offset_ && offset + length <= tail_offset_ + tail_.size()) continue;
      const std::string ckey = cache_key(offset, length);
      if (!ckey.empty() && cache_->has(ckey)) continue;
      // Hinted before and not yet read: a fetch joining it would be dropped whole.
      if (readahead_.hinted(range_id(offset, length))) continue;
      hints.push_back({offset, length, hints.size()});
    }
    std::sort(hints.begin(), hints.end(),
              [](const Hint& a, const Hint& b) { return a.offset < b.offset; });
    constexpr std::uint64_t kGap = 64 * 1024;                 // worth fetching to save a request
    std::vector<std::pair<std::size_t, PlannedFetch>> plans;  // (first hint order, fetch)
    std::uint64_t cur_end = 0, useful = 0;
    for (const Hint& h : hints) {
      PlannedFetch* cur = plans.empty() ? nullptr : &plans.back().second;
      // Gaps are fetched to save a request, but a request is mostly what was asked for: the
      // chunks of one array may lie anywhere among other arrays' in a zip, and a window of
      // them must not pull in everything between.
      const std::uint64_t span = cur ? h.offset + h.length - cur->request.range->offset : 0;
      const bool joins = cur && h.offset >= cur_end && h.offset - cur_end <= kGap &&
                         span <= coalesce_bytes_ &&
                         span - (useful + h.length) <= std::max(useful + h.length, kGap);
      if (joins) {
        useful += h.length;
      } else {
        useful = h.length;
        plans.emplace_back(h.order, PlannedFetch{});
        cur = &plans.back().second;
        cur->request.url = url_;
        cur->request.range = ByteRange{h.offset, 0};
      }
      plans.back().first = std::min(plans.back().first, h.order);
      cur->parts.push_back(
          {range_id(h.offset, h.length), h.offset - cur->request.range->offset, h.length});
      cur_end = std::max(cur_end, h.offset + h.length);
      cur->request.range->length = cur_end - cur->request.range->offset;
      cur->expected_bytes = cur->request.range->length;
    }
    std::sort(plans.begin(), plans.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<PlannedFetch> fetches;
    fetches.reserve(plans.size());
    for (auto& [order, plan] : plans) fetches.push_back(std::move(plan));
    readahead_.add(std::move(fetches));
  }

  void cancel_prefetch() const override { readahead_.cancel(); }

  IoStats io_stats() const override { return remote::io_stats(*client_, cache_.get()); }

 private:
  std::string cache_key(std::uint64_t offset, std::uint64_t length) const {
    if (!cache_ || validator_.empty()) return {};
    return ChunkCache::key(url_, validator_, size_, ByteRange{offset, length});
  }

  void check(const HttpResponse& r, std::uint64_t offset, std::uint64_t length) const {
    if (r.status == 404) throw IoError(url_ + ": HTTP 404 Not Found (the file went away)");
    if (r.body.size() != length || r.body_offset != offset)
      throw IoError(fmt::format("{}: asked for bytes {}+{}, received {}+{}", url_, offset, length,
                                r.body_offset, r.body.size()));
    const std::string v = validator_of(r);
    if (!validator_.empty() && !v.empty() && v != validator_)
      throw IoError(fmt::format("{}: the file changed while it was being read ({} became {})", url_,
                                validator_, v));
  }

  void store_parts(const PlannedFetch& plan, const HttpResponse& r) const {
    if (validator_of(r) != validator_) return;
    for (const auto& p : plan.parts) {
      if (p.offset + p.length > r.body.size()) continue;
      const std::uint64_t offset = plan.request.range->offset + p.offset;
      cache_->store(cache_key(offset, p.length),
                    std::span<const std::byte>(r.body).subspan(static_cast<std::size_t>(p.offset),
                                                               static_cast<std::size_t>(p.length)));
    }
  }

  std::string url_;
  std::shared_ptr<HttpClient> client_;
  std::shared_ptr<const ChunkCache> cache_;
  mutable ReadAhead readahead_;
  std::uint64_t coalesce_bytes_;
  std::uint64_t size_ = 0;
  std::string validator_;
  std::uint64_t tail_offset_ = 0;
  Bytes tail_;
};

}  // namespace

std::shared_ptr<const detail::ByteSource> open_http_range_source(
    const std::string& url, std::shared_ptr<HttpClient> client,
    std::shared_ptr<const ChunkCache> cache, const StoreOptions& options, std::uint64_t tail) {
  return std::make_shared<const HttpRangeSource>(url, std::move(client), std::move(cache), options,
                                                 tail);
}

}  // namespace vczstats::zarr::remote
