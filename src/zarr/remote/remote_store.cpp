// Remote stores: directory-style stores over HTTP(S), S3 and gs:// (one object per key), zip
// archives read with range requests, and consolidated metadata in front of both.

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "vczstats/error.hpp"
#include "zarr/json_scan.hpp"
#include "zarr/remote/fetch.hpp"
#include "zarr/remote/http_client.hpp"
#include "zarr/remote/remote_util.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr::detail {

namespace {

using namespace vczstats::zarr::remote;

/// Keys that cannot name an object below the store's root.
bool is_safe_key(std::string_view key) {
  if (key.empty() || key.front() == '/') return false;
  for (std::size_t start = 0; start <= key.size();) {
    const std::size_t end = std::min(key.find('/', start), key.size());
    const std::string_view part = key.substr(start, end - start);
    if (part == ".." || part == ".") return false;
    start = end + 1;
  }
  return true;
}

bool is_metadata_key(std::string_view key) {
  const std::string_view leaf =
      key.substr(key.rfind('/') == std::string_view::npos ? 0 : key.rfind('/') + 1);
  return leaf == ".zarray" || leaf == ".zattrs" || leaf == ".zgroup" || leaf == "zarr.json";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Bounds on listings, which come from servers that may loop: folders below the root, pages
/// (HTML folder pages or S3 ListObjectsV2 pages) in one listing.
constexpr std::size_t kMaxListingDepth = 32;
constexpr std::size_t kMaxListingPages = 10000;

/// How a directory-style store is listed.
enum class Listing {
  Html,  ///< a server's HTML directory pages (nginx autoindex, Apache, python http.server)
  S3,    ///< ListObjectsV2 (S3 and Google Cloud Storage's XML API)
};

struct ObjectStoreSpec {
  std::string display;  ///< the URL as given
  std::string base;     ///< URL of the store's root, ending in '/'
  std::string query;    ///< "" or "?..." appended to object URLs (e.g. a signed URL's token)
  Listing listing = Listing::Html;
  std::string bucket_url;  ///< S3: the bucket's URL (ListObjectsV2 is sent there)
  std::string prefix;      ///< S3: the root's key prefix in the bucket ("" or ending in '/')
};

/// A directory-style remote store: key K is the object at base + K.
class ObjectStore final : public Store {
 public:
  ObjectStore(ObjectStoreSpec spec, std::shared_ptr<HttpClient> client,
              std::shared_ptr<const ChunkCache> cache, const StoreOptions& options)
      : spec_(std::move(spec)),
        client_(std::move(client)),
        cache_(std::move(cache)),
        readahead_(*client_, options.readahead_bytes,
                   std::max<std::size_t>(64, 8 * std::size_t{client_->options().max_requests})) {}

  ~ObjectStore() override { readahead_.cancel(); }

  std::optional<Bytes> get(std::string_view key) const override {
    if (!is_safe_key(key)) return std::nullopt;
    const std::string url = object_url(key);
    if (is_metadata_key(key)) {
      if (auto r = metadata_answer(key)) return resolve(url, r);
    }
    ResponsePtr r;
    if (auto claim = readahead_.take(std::string(key)))
      r = claim->future.get();
    else
      r = client_->fetch(object_request(url));
    return resolve(url, r);
  }

  bool contains(std::string_view key) const override {
    if (!is_safe_key(key)) return false;
    if (is_metadata_key(key)) {
      // A metadata document asked for ahead (the arrays a reader opens): its answer, kept for
      // the get() that follows, instead of a HEAD request.
      if (auto r = metadata_answer(key)) return r->status != 404 && r->status != 410;
    }
    HttpRequest req;
    req.url = object_url(key);
    req.head = true;
    const long status = client_->fetch(req)->status;
    return status != 404 && status != 410;
  }

  std::vector<StoreEntry> list(std::string_view prefix) const override {
    prefix = trim_prefix(prefix);
    if (!prefix.empty() && !is_safe_key(prefix)) return {};
    std::vector<StoreEntry> out =
        spec_.listing == Listing::S3 ? list_s3(prefix, false, nullptr) : list_html(prefix);
    std::sort(out.begin(), out.end(),
              [](const StoreEntry& a, const StoreEntry& b) { return a.key < b.key; });
    return out;
  }

  std::vector<std::string> children(std::string_view prefix) const override {
    prefix = trim_prefix(prefix);
    if (!prefix.empty() && !is_safe_key(prefix)) return {};
    std::vector<std::string> names;
    if (spec_.listing == Listing::S3) {
      std::vector<std::string> folders;
      for (const auto& e : list_s3(prefix, true, &folders)) names.push_back(leaf(e.key));
      for (const auto& f : folders) names.push_back(leaf(f));
    } else {
      for (const auto& link : html_page(prefix))
        names.push_back(link.back() == '/' ? link.substr(0, link.size() - 1) : link);
      const std::string folder(prefix);
      for (const auto& e : probe_hidden({folder})) names.push_back(leaf(e.key));
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }

  const std::string& path() const override { return spec_.display; }

  void prefetch(std::span<const std::string> keys) const override {
    std::vector<PlannedFetch> plans;
    plans.reserve(keys.size());
    for (const auto& k : keys) {
      if (!is_safe_key(k) || readahead_.hinted(k)) continue;
      if (is_metadata_key(k)) {
        std::lock_guard lock(metadata_mutex_);
        if (metadata_.contains(k)) continue;
      }
      PlannedFetch p;
      p.request = object_request(object_url(k));
      p.parts.push_back({k, 0, UINT64_MAX});
      plans.push_back(std::move(p));
    }
    readahead_.add(std::move(plans));
  }
  void cancel_prefetch() const override { readahead_.cancel(); }
  bool reads_ahead() const override { return true; }
  IoStats io_stats() const override { return remote::io_stats(*client_, cache_.get()); }

 private:
  static std::string leaf(std::string_view key) {
    key = trim_prefix(key);
    const std::size_t slash = key.rfind('/');
    return std::string(slash == std::string_view::npos ? key : key.substr(slash + 1));
  }

  std::string object_url(std::string_view key) const {
    return spec_.base + uri_encode(key, true) + spec_.query;
  }

  /// A GET of @p url, conditional when the cache holds a copy.
  HttpRequest object_request(const std::string& url) const {
    HttpRequest req;
    req.url = url;
    if (cache_) {
      if (auto v = cache_->validator(url); v && v->first.starts_with("etag "))
        req.headers.push_back("If-None-Match: " + v->first.substr(5));
    }
    return req;
  }

  /// The bytes of a response: none for 404, the cached copy for 304 (refetched when the cache
  /// lost it), the body otherwise (stored in the cache).
  std::optional<Bytes> resolve(const std::string& url, ResponsePtr r) const {
    if (r->status == 404 || r->status == 410) return std::nullopt;
    if (r->status == 304) {
      if (cache_) {
        if (auto v = cache_->validator(url)) {
          if (auto body = cache_->load(ChunkCache::key(url, v->first, v->second), v->second))
            return Bytes(std::move(*body));
        }
      }
      HttpRequest req;
      req.url = url;
      r = client_->fetch(req);
      if (r->status == 404 || r->status == 410) return std::nullopt;
    }
    if (r->status != 200 && r->status != 206)
      throw IoError(fmt::format("{}: unexpected HTTP {}", url, r->status));
    if (cache_) {
      const std::string v = validator_of(*r);
      if (!v.empty()) {
        cache_->store(ChunkCache::key(url, v, r->body.size()), r->body);
        cache_->set_validator(url, v, r->body.size());
      }
    }
    return Bytes(std::span<const std::byte>(r->body), r);
  }

  /// ListObjectsV2 below the root + @p prefix; with @p delimited, only direct children (folders
  /// in @p folders, relative to the root).
  std::vector<StoreEntry> list_s3(std::string_view prefix, bool delimited,
                                  std::vector<std::string>* folders) const {
    std::string full = spec_.prefix + std::string(prefix);
    if (!prefix.empty()) full += '/';
    std::vector<StoreEntry> out;
    std::string token;
    std::set<std::string> tokens;
    for (std::size_t page_no = 0;; ++page_no) {
      if (page_no == kMaxListingPages)
        throw IoError(fmt::format("{}: the listing has more than {} pages", spec_.bucket_url,
                                  kMaxListingPages));
      // Parameters in canonical (sorted) order and encoding: the URL is what gets signed.
      std::string q;
      if (!token.empty()) q += "continuation-token=" + uri_encode(token, false) + "&";
      if (delimited) q += "delimiter=%2F&";
      q += "list-type=2&prefix=" + uri_encode(full, false);
      HttpRequest req;
      req.url = spec_.bucket_url + "?" + q;
      const auto r = client_->fetch(req);
      if (r->status == 404)
        throw IoError(fmt::format("{}: the bucket does not exist (HTTP 404)", spec_.display));
      ListPage page;
      try {
        page = parse_list_objects(
            std::string_view(reinterpret_cast<const char*>(r->body.data()), r->body.size()));
      } catch (const FormatError& e) {
        throw IoError(fmt::format("{}: cannot list: {}", req.url, e.what()));
      }
      for (auto& e : page.objects) {
        if (!e.key.starts_with(spec_.prefix) || e.key.size() == spec_.prefix.size()) continue;
        e.key.erase(0, spec_.prefix.size());
        if (!e.key.empty() && e.key.back() != '/') out.push_back(std::move(e));
      }
      if (folders) {
        for (auto& p : page.prefixes) {
          if (!p.starts_with(spec_.prefix)) continue;
          folders->push_back(p.substr(spec_.prefix.size()));
        }
      }
      if (!page.truncated || page.next_token.empty()) break;
      if (!tokens.insert(page.next_token).second)
        throw IoError(
            fmt::format("{}: the listing repeats continuation token '{}' (the server "
                        "loops)",
                        req.url, page.next_token.substr(0, 100)));
      token = page.next_token;
    }
    return out;
  }

  /// The links of the HTML listing of folder @p prefix ("" = root).
  std::vector<std::string> html_page(std::string_view prefix) const {
    HttpRequest req;
    req.url = spec_.base + (prefix.empty() ? std::string() : uri_encode(prefix, true) + "/") +
              spec_.query;
    const auto r = client_->fetch(req);
    if (r->status == 404) {
      if (prefix.empty())
        throw IoError(fmt::format(
            "{}: cannot list the store: the server gives no directory listing (HTTP 404); a "
            "store with consolidated metadata (.zmetadata) needs none",
            spec_.display));
      return {};
    }
    return html_links(
        std::string_view(reinterpret_cast<const char*>(r->body.data()), r->body.size()));
  }

  /// The Zarr metadata documents in @p folders that listings leave out: web servers hide
  /// dot-files (nginx's autoindex always, Apache by default), so they are asked for by name.
  std::vector<StoreEntry> probe_hidden(const std::vector<std::string>& folders) const {
    std::vector<std::pair<std::string, ResponseFuture>> heads;
    for (const auto& folder : folders) {
      for (const char* name : {".zgroup", ".zattrs", ".zarray", ".zmetadata"}) {
        const std::string key = folder.empty() ? name : folder + "/" + name;
        HttpRequest req;
        req.url = object_url(key);
        req.head = true;
        heads.emplace_back(key, client_->submit(req, true));
      }
    }
    std::vector<StoreEntry> out;
    for (auto& [key, future] : heads) {
      const auto r = future.get();
      if (r->status == 200) out.push_back({key, r->object_size.value_or(0)});
    }
    return out;
  }

  /// Every file below folder @p prefix, through the HTML listings; sizes from HEAD requests,
  /// sent together.
  std::vector<StoreEntry> list_html(std::string_view prefix) const {
    std::vector<StoreEntry> out;
    std::vector<std::pair<std::string, std::size_t>> pending{{std::string(prefix), 0}};
    std::vector<std::string> folders;
    while (!pending.empty()) {
      const auto [folder, depth] = pending.back();
      pending.pop_back();
      if (folders.size() == kMaxListingPages)
        throw IoError(fmt::format("{}: the listing has more than {} folders", spec_.display,
                                  kMaxListingPages));
      folders.push_back(folder);
      for (const auto& link : html_page(folder)) {
        const std::string key = folder.empty() ? link : folder + "/" + link;
        if (link.back() == '/' && depth + 1 > kMaxListingDepth)
          throw IoError(fmt::format("{}: the listing goes deeper than {} folders (at {})",
                                    spec_.display, kMaxListingDepth, object_url(key)));
        if (link.back() == '/')
          pending.emplace_back(key.substr(0, key.size() - 1), depth + 1);
        else if (!link.starts_with('.'))  // dot-files come from probe_hidden, listed or not
          out.push_back({key, 0});
      }
    }
    const auto hidden = probe_hidden(folders);
    std::vector<ResponseFuture> heads;
    heads.reserve(out.size());
    for (const auto& e : out) {
      HttpRequest req;
      req.url = object_url(e.key);
      req.head = true;
      heads.push_back(client_->submit(req, true));
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto r = heads[i].get();
      out[i].stored_size = r->object_size.value_or(0);
    }
    out.insert(out.end(), hidden.begin(), hidden.end());
    return out;
  }

  /// The answer for metadata document @p key when it was asked for ahead: taken from the
  /// read-ahead once and kept (documents are small, and a reader asks contains() then get()).
  ResponsePtr metadata_answer(std::string_view key) const {
    const std::string k(key);
    {
      std::lock_guard lock(metadata_mutex_);
      if (auto it = metadata_.find(k); it != metadata_.end()) return it->second;
    }
    auto claim = readahead_.take(k);
    if (!claim) return nullptr;
    ResponsePtr r = claim->future.get();
    std::lock_guard lock(metadata_mutex_);
    return metadata_.emplace(k, std::move(r)).first->second;
  }

  ObjectStoreSpec spec_;
  std::shared_ptr<HttpClient> client_;
  std::shared_ptr<const ChunkCache> cache_;
  mutable ReadAhead readahead_;
  mutable std::mutex metadata_mutex_;
  mutable std::map<std::string, ResponsePtr> metadata_;  // metadata documents asked for ahead
};

/// Consolidated metadata in front of a remote store: the metadata documents of every array and
/// group come from one object (.zmetadata for v2, the root zarr.json's consolidated_metadata for
/// v3), so opening a store costs one request instead of several per array. Each document is a
/// slice of that object's bytes (never parsed whole, never re-serialised).
class ConsolidatedStore final : public Store {
  /// 40 bytes a document, its name in one shared string: millions of documents stay small.
  struct Entry {
    std::size_t key_offset, key_length, offset, length, object;
  };

 public:
  /// The documents, as they are scanned: names and where each lies in one of the objects.
  class Builder {
   public:
    void add(std::string_view name, const Bytes& object, std::string_view doc) {
      const auto* base = reinterpret_cast<const char*>(object.data());
      entries_.push_back({keys_.size(), name.size(), static_cast<std::size_t>(doc.data() - base),
                          doc.size(), objects_.size() - 1});
      keys_.append(name);
    }
    void object(Bytes b) { objects_.push_back(std::move(b)); }
    std::size_t size() const { return entries_.size(); }

   private:
    friend class ConsolidatedStore;
    std::string keys_;
    std::vector<Entry> entries_;
    std::vector<Bytes> objects_;
  };

  ConsolidatedStore(std::shared_ptr<const Store> inner, Builder docs)
      : inner_(std::move(inner)),
        keys_(std::move(docs.keys_)),
        entries_(std::move(docs.entries_)),
        objects_(std::move(docs.objects_)) {
    // Sorted by name; of names given twice the last counts (as JSON parsers do).
    std::stable_sort(entries_.begin(), entries_.end(),
                     [&](const Entry& x, const Entry& y) { return key(x) < key(y); });
    std::vector<Entry> unique;
    unique.reserve(entries_.size());
    for (const Entry& e : entries_) {
      if (!unique.empty() && key(unique.back()) == key(e))
        unique.back() = e;
      else
        unique.push_back(e);
    }
    entries_ = std::move(unique);
    entries_.shrink_to_fit();
  }

  std::optional<Bytes> get(std::string_view key) const override {
    if (!is_metadata_key(key)) return inner_->get(key);
    const Entry* e = find(key);
    if (!e) return std::nullopt;
    return objects_[e->object].slice(e->offset, e->length);
  }
  bool contains(std::string_view key) const override {
    if (!is_metadata_key(key)) return inner_->contains(key);
    return find(key) != nullptr;
  }
  std::vector<StoreEntry> list(std::string_view prefix) const override {
    return inner_->list(prefix);
  }
  /// Folders holding metadata documents, and the documents: enough to find arrays and groups
  /// without a listing (chunk keys are not named).
  std::vector<std::string> children(std::string_view prefix) const override {
    std::string folder(trim_prefix(prefix));
    if (!folder.empty()) folder += '/';
    std::vector<StoreEntry> keys;
    auto it = std::lower_bound(entries_.begin(), entries_.end(), folder,
                               [&](const Entry& e, const std::string& k) { return key(e) < k; });
    for (; it != entries_.end() && key(*it).starts_with(folder); ++it)
      keys.push_back({std::string(key(*it)), it->length});
    return children_from_keys(keys, prefix);
  }
  const std::string& path() const override { return inner_->path(); }
  void prefetch(std::span<const std::string> keys) const override {
    // The metadata documents are here already (or absent from the store).
    std::vector<std::string> rest;
    for (const auto& k : keys)
      if (!is_metadata_key(k)) rest.push_back(k);
    if (!rest.empty()) inner_->prefetch(rest);
  }
  void cancel_prefetch() const override { inner_->cancel_prefetch(); }
  bool reads_ahead() const override { return inner_->reads_ahead(); }
  IoStats io_stats() const override { return inner_->io_stats(); }

 private:
  std::string_view key(const Entry& e) const {
    return std::string_view(keys_).substr(e.key_offset, e.key_length);
  }
  const Entry* find(std::string_view k) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), k,
                               [&](const Entry& e, std::string_view x) { return key(e) < x; });
    return it != entries_.end() && key(*it) == k ? &*it : nullptr;
  }

  std::shared_ptr<const Store> inner_;
  std::string keys_;
  std::vector<Entry> entries_;
  std::vector<Bytes> objects_;
};

std::string_view text_of(const Bytes& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

/// Wrap @p store in its consolidated metadata when it has any.
std::shared_ptr<const Store> with_consolidated_metadata(std::shared_ptr<const Store> store,
                                                        const StoreOptions& options) {
  ConsolidatedStore::Builder docs;
  if (auto z = store->get(".zmetadata")) {
    const std::string what = store->path() + ": .zmetadata";
    check_json_depth(text_of(*z), what);
    const JsonScanner scan(text_of(*z), what);
    const std::string_view meta = scan.member(scan.root(), "metadata");
    if (meta.empty() || meta.front() != '{') throw FormatError(what + ": no \"metadata\" object");
    docs.object(*z);
    scan.for_each_member(meta, [&](std::string_view k, std::string_view v) { docs.add(k, *z, v); });
    if (options.log)
      options.log(fmt::format("{}: consolidated metadata (.zmetadata, {} documents)", store->path(),
                              docs.size()));
  } else if (auto root = store->get("zarr.json")) {
    const std::string what = store->path() + ": zarr.json";
    check_json_depth(text_of(*root), what);
    const JsonScanner scan(text_of(*root), what);
    const std::string_view doc = scan.root();
    if (doc.empty() || doc.front() != '{') return store;  // Array::open reports what it is
    docs.object(*root);
    docs.add("zarr.json", *root, text_of(*root));
    const std::string_view cm = scan.member(doc, "consolidated_metadata");
    if (cm.empty() || cm.front() != '{') return store;
    const std::string_view kind = scan.member(cm, "kind");
    if (kind.empty() || parse_json_bounded(kind, what) != "inline") return store;
    const std::string_view meta = scan.member(cm, "metadata");
    if (meta.empty() || meta.front() != '{') return store;
    std::string name;
    scan.for_each_member(meta, [&](std::string_view k, std::string_view v) {
      name.assign(k);
      name += "/zarr.json";
      docs.add(name, *root, v);
    });
    if (options.log)
      options.log(fmt::format("{}: consolidated metadata (zarr.json, {} documents)", store->path(),
                              docs.size()));
  } else {
    return store;
  }
  return std::make_shared<const ConsolidatedStore>(std::move(store), std::move(docs));
}

/// A remote zip's metadata documents, read once and kept for the store's lifetime: a remote
/// zip keeps no answer once it has been read, and arrays are opened more than once (the query,
/// then each statistic), each time one round trip per document otherwise. Each is kept when
/// first read (not waited for here, so that what the caller hints next travels with them); a
/// document whose read fails is not kept: its error comes each time it is used, as without this
/// cache.
class MetadataKeepingStore final : public Store {
 public:
  MetadataKeepingStore(std::shared_ptr<const Store> inner, std::span<const std::string> keys)
      : inner_(std::move(inner)), keep_(keys.begin(), keys.end()) {}
  std::optional<Bytes> get(std::string_view key) const override {
    if (!keep_.contains(key)) return inner_->get(key);
    {
      std::lock_guard lock(mutex_);
      if (auto it = docs_.find(key); it != docs_.end()) return it->second;
    }
    auto b = inner_->get(key);
    if (b) {
      std::lock_guard lock(mutex_);
      docs_.emplace(std::string(key), *b);
    }
    return b;
  }
  bool contains(std::string_view key) const override {
    {
      std::lock_guard lock(mutex_);
      if (docs_.find(key) != docs_.end()) return true;
    }
    return inner_->contains(key);
  }
  std::vector<StoreEntry> list(std::string_view prefix) const override {
    return inner_->list(prefix);
  }
  std::vector<std::string> children(std::string_view prefix) const override {
    return inner_->children(prefix);
  }
  const std::string& path() const override { return inner_->path(); }
  void prefetch(std::span<const std::string> keys) const override {
    std::vector<std::string> rest;
    {
      std::lock_guard lock(mutex_);
      for (const auto& k : keys)
        if (docs_.find(k) == docs_.end()) rest.push_back(k);
    }
    if (!rest.empty()) inner_->prefetch(rest);
  }
  void cancel_prefetch() const override { inner_->cancel_prefetch(); }
  bool reads_ahead() const override { return inner_->reads_ahead(); }
  IoStats io_stats() const override { return inner_->io_stats(); }

 private:
  std::shared_ptr<const Store> inner_;
  std::set<std::string, std::less<>> keep_;  // the documents kept once read
  mutable std::mutex mutex_;
  mutable std::map<std::string, Bytes, std::less<>> docs_;
};

/// A zip's directory names its metadata documents: without consolidated metadata, ask for
/// them all at once (neighbours in one range request) rather than one round trip each as the
/// arrays are opened, and keep them.
std::shared_ptr<const Store> prefetch_zip_metadata(std::shared_ptr<const Store> zip) {
  std::vector<std::string> keys;
  for (const auto& e : zip->list("")) {
    if (e.key == ".zmetadata") return zip;
    if (is_metadata_key(e.key)) keys.push_back(e.key);
  }
  zip->prefetch(keys);
  return std::make_shared<const MetadataKeepingStore>(std::move(zip), keys);
}

/// A directory-style store: the documents with_consolidated_metadata and open_group look for
/// (consolidated metadata, then the root group's documents of either format) asked for at once,
/// one round trip instead of one each in series (0.4 s of a run at 100 ms per answer).
std::shared_ptr<const Store> prefetch_root_documents(std::shared_ptr<const Store> store) {
  const std::string keys[] = {".zmetadata", "zarr.json", ".zgroup", ".zattrs"};
  store->prefetch(keys);
  return store;
}

/// Bytes fetched from the end of a remote zip first: its end records (with the largest comment
/// allowed) and, for small stores, the central directory; a larger directory takes one more.
constexpr std::uint64_t kZipTail = 65 * 1024 + 512;

HttpClientOptions client_options(const StoreOptions& o) {
  HttpClientOptions c;
  c.max_requests = o.max_requests ? o.max_requests : 256;
  c.max_retries = std::max(0, o.max_retries);
  c.stall_seconds = o.stall_seconds;
  c.connect_seconds = o.connect_seconds;
  c.backoff_seconds = o.retry_backoff_seconds;
  c.min_bytes_per_second = std::max(0.0, o.min_bytes_per_second);
  c.max_object_bytes = o.max_object_bytes;
  c.log = o.log;
  return c;
}

/// The region of an AWS bucket, from the x-amz-bucket-region header S3 sends with any answer
/// about the bucket (even a 403).
std::string discover_region(const std::string& bucket, const StoreOptions& o) {
  HttpClientOptions c = client_options(o);
  c.max_retries = std::min(c.max_retries, 2);
  HttpClient client(c);
  HttpRequest req;
  req.url = "https://" + bucket + ".s3.amazonaws.com/";
  req.head = true;
  try {
    return client.fetch(req)->bucket_region;
  } catch (const IoError&) {
    return {};  // unreachable or refused: sign for us-east-1 and let the reads tell
  }
}

}  // namespace

std::shared_ptr<const Store> open_remote_store(const std::string& url, const StoreOptions& o) {
  const Url u = parse_url(url);
  std::shared_ptr<const ChunkCache> cache;
  if (!o.cache_dir.empty()) cache = std::make_shared<const ChunkCache>(o.cache_dir);
  std::string key_path = u.path.substr(1);  // without the leading '/'
  while (!key_path.empty() && key_path.back() == '/') key_path.pop_back();
  const bool zip = lower(key_path).ends_with(".zip");
  HttpClientOptions copts = client_options(o);

  std::shared_ptr<const Store> store;
  if (u.scheme == "http" || u.scheme == "https") {
    auto client = std::make_shared<HttpClient>(copts);
    if (zip) {
      store = prefetch_zip_metadata(
          open_zip_store(open_http_range_source(url, client, cache, o, kZipTail)));
    } else {
      ObjectStoreSpec spec;
      spec.display = url;
      spec.base = u.scheme + "://" + u.authority + "/" + key_path + (key_path.empty() ? "" : "/");
      if (!u.query.empty()) spec.query = "?" + u.query;
      spec.listing = Listing::Html;
      store = prefetch_root_documents(
          std::make_shared<const ObjectStore>(std::move(spec), client, cache, o));
    }
  } else if (u.scheme == "s3" || u.scheme == "gs") {
    if (!u.query.empty())
      throw UsageError(fmt::format("{}: {}:// URLs take no query string", url, u.scheme));
    S3Settings s;
    if (u.scheme == "s3") {
      s = resolve_s3_settings(o, system_getenv, system_read_file);
      if (s.endpoint.empty() && s.region.empty()) s.region = discover_region(u.authority, o);
      if (s.region.empty()) s.region = "us-east-1";
      if (!s.anonymous) {
        SigV4 sign;
        sign.region = s.region;
        sign.access_key_id = s.access_key_id;
        sign.secret_access_key = s.secret_access_key;
        sign.session_token = s.session_token;
        copts.sign = sign;
      }
      if (o.log)
        o.log(fmt::format("{}: endpoint {}, region {}, credentials: {}", url,
                          s.endpoint.empty() ? "AWS" : s.endpoint, s.region, s.credentials));
    } else {
      // Google Cloud Storage's XML API speaks S3's protocol; reads here are anonymous.
      s.endpoint = gcs_endpoint(o, system_getenv);
      s.anonymous = true;
    }
    auto client = std::make_shared<HttpClient>(copts);
    const std::string& bucket = u.authority;
    if (zip) {
      store = prefetch_zip_metadata(open_zip_store(open_http_range_source(
          s3_object_url(s, bucket, uri_encode(key_path, true)), client, cache, o, kZipTail)));
    } else {
      ObjectStoreSpec spec;
      spec.display = url;
      spec.prefix = key_path.empty() ? std::string() : key_path + "/";
      spec.base = s3_object_url(s, bucket, uri_encode(spec.prefix, true));
      spec.bucket_url = s3_object_url(s, bucket, "");
      spec.listing = Listing::S3;
      store = prefetch_root_documents(
          std::make_shared<const ObjectStore>(std::move(spec), client, cache, o));
    }
  } else {
    throw UsageError(
        fmt::format("{}: unsupported URL scheme '{}' (http, https, s3, gs)", url, u.scheme));
  }
  return with_consolidated_metadata(std::move(store), o);
}

}  // namespace vczstats::zarr::detail
