#pragma once
/// @file remote_util.hpp
/// @brief Private: the text handling of remote stores, kept free of I/O so tests can check it:
/// URLs and percent-encoding, S3 ListObjectsV2 XML, HTML directory listings, the AWS
/// configuration (environment variables, ~/.aws/credentials and ~/.aws/config).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vczstats/zarr.hpp"

namespace vczstats::zarr::remote {

/// @brief scheme://authority/path?query, split. The path keeps its leading '/'.
struct Url {
  std::string scheme;  ///< lower case: http, https, s3, gs
  std::string authority;
  std::string path;
  std::string query;
};
/// @throws UsageError when @p url has no scheme or authority.
Url parse_url(std::string_view url);

/// @brief Percent-encode everything but RFC 3986's unreserved characters (and '/', when
/// @p keep_slash), with upper-case hex as AWS Signature V4 requires.
std::string uri_encode(std::string_view s, bool keep_slash);
/// @brief Decode %XX sequences (a malformed one is kept as is).
std::string uri_decode(std::string_view s);

/// @brief The unescaped text of the first <tag>...</tag> of @p xml ("" when absent).
std::string xml_text(std::string_view xml, std::string_view tag);

/// @brief One page of an S3 ListObjectsV2 answer.
struct ListPage {
  std::vector<StoreEntry> objects;    ///< full keys and sizes
  std::vector<std::string> prefixes;  ///< CommonPrefixes (with a delimiter)
  bool truncated = false;
  std::string next_token;  ///< NextContinuationToken
};
/// @throws FormatError when @p xml is not a ListBucketResult.
ListPage parse_list_objects(std::string_view xml);

/// @brief Relative links of an HTML directory listing (nginx autoindex, Apache, python
/// http.server): decoded hrefs that name an entry below the page (no scheme, no leading '/',
/// no '..', no query), folders ending in '/'.
std::vector<std::string> html_links(std::string_view html);

/// @brief Sections of an INI file (AWS style): section name -> key -> value. Indented lines
/// (nested settings such as "s3 =\n  endpoint_url = ...") are skipped.
std::map<std::string, std::map<std::string, std::string>> parse_ini(std::string_view text);

/// @brief How to reach an S3 bucket, resolved from StoreOptions and the environment.
struct S3Settings {
  std::string endpoint;  ///< "" = AWS (virtual-hosted URLs); else path-style below it
  std::string region;    ///< "" = not given (AWS: asked of the bucket; else us-east-1)
  std::string access_key_id, secret_access_key, session_token;
  bool anonymous = true;    ///< no credentials found, or asked for
  std::string credentials;  ///< where the credentials came from, for -v
};

/// @brief Reads an environment variable (std::getenv in production; a map in tests).
using GetEnv = std::function<std::optional<std::string>(const std::string&)>;
/// @brief Reads a whole file, nullopt when it is absent.
using ReadFile = std::function<std::optional<std::string>(const std::string&)>;

/// @brief Resolve S3 settings: options first, then (when options.use_environment)
/// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_REGION, AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID,
/// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE (default "default") in
/// AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and AWS_CONFIG_FILE (~/.aws/config).
S3Settings resolve_s3_settings(const StoreOptions& options, const GetEnv& getenv,
                               const ReadFile& read_file);

/// @brief The URL of @p key (already encoded) in @p bucket: path-style below a custom endpoint,
/// virtual-hosted on AWS (path-style for bucket names with dots).
std::string s3_object_url(const S3Settings& s, const std::string& bucket,
                          const std::string& encoded_key);

/// @brief The gs:// endpoint: options.gcs_endpoint, else STORAGE_EMULATOR_HOST (http:// added
/// when it has no scheme), else https://storage.googleapis.com.
std::string gcs_endpoint(const StoreOptions& options, const GetEnv& getenv);

/// @brief The production GetEnv and ReadFile.
std::optional<std::string> system_getenv(const std::string& name);
std::optional<std::string> system_read_file(const std::string& path);

/// @brief 64-bit FNV-1a of @p s (cache file names).
std::uint64_t fnv1a64(std::string_view s);

}  // namespace vczstats::zarr::remote
