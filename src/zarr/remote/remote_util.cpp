// Text handling of remote stores: URLs, S3 XML, HTML listings, AWS configuration.

#include "zarr/remote/remote_util.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "vczstats/error.hpp"
#include "zarr/codecs.hpp"

namespace vczstats::zarr::remote {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// XML and HTML character references: the five named ones and numeric ones.
std::string unescape_entities(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const std::size_t semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out += s[i];
      continue;
    }
    const std::string_view name = s.substr(i + 1, semi - i - 1);
    if (name == "amp")
      out += '&';
    else if (name == "lt")
      out += '<';
    else if (name == "gt")
      out += '>';
    else if (name == "quot")
      out += '"';
    else if (name == "apos")
      out += '\'';
    else if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const std::string digits(name.substr(hex ? 2 : 1));
      char* end = nullptr;
      const unsigned long cp = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
      if (digits.empty() || *end != '\0' || cp > 0x10FFFF) {
        out.append(s.substr(i, semi - i + 1));
      } else {
        detail::append_utf8(out, static_cast<std::uint32_t>(cp));
      }
    } else {
      out.append(s.substr(i, semi - i + 1));
    }
    i = semi;
  }
  return out;
}

/// Every <tag>...</tag> body of @p xml (raw, not unescaped).
std::vector<std::string_view> xml_blocks(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  // (Built with fmt: GCC 12 warns falsely about "<" + std::string concatenations.)
  const std::string open = fmt::format("<{}>", tag);
  const std::string close = fmt::format("</{}>", tag);
  std::size_t pos = 0;
  for (;;) {
    const std::size_t a = xml.find(open, pos);
    if (a == std::string_view::npos) break;
    const std::size_t b = xml.find(close, a + open.size());
    if (b == std::string_view::npos) break;
    out.push_back(xml.substr(a + open.size(), b - a - open.size()));
    pos = b + close.size();
  }
  return out;
}

}  // namespace

Url parse_url(std::string_view url) {
  Url u;
  const std::size_t colon = url.find("://");
  if (colon == std::string_view::npos || colon == 0)
    throw UsageError(fmt::format("{}: not a URL (expected scheme://host/path)", url));
  u.scheme = lower(url.substr(0, colon));
  std::string_view rest = url.substr(colon + 3);
  const std::size_t slash = rest.find_first_of("/?");
  u.authority = std::string(rest.substr(0, slash));
  if (u.authority.empty())
    throw UsageError(fmt::format("{}: the URL names no host or bucket", url));
  rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  const std::size_t q = rest.find('?');
  u.path = std::string(rest.substr(0, q));
  if (q != std::string_view::npos) u.query = std::string(rest.substr(q + 1));
  if (u.path.empty()) u.path.assign(1, '/');
  return u;
}

std::string uri_encode(std::string_view s, bool keep_slash) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string uri_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int a = hex_value(s[i + 1]), b = hex_value(s[i + 2]);
      if (a >= 0 && b >= 0) {
        out += static_cast<char>(a * 16 + b);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string xml_text(std::string_view xml, std::string_view tag) {
  const auto blocks = xml_blocks(xml, tag);
  return blocks.empty() ? std::string() : unescape_entities(blocks.front());
}

ListPage parse_list_objects(std::string_view xml) {
  if (xml.find("<ListBucketResult") == std::string_view::npos)
    throw FormatError("not an S3 ListBucketResult document");
  ListPage page;
  for (std::string_view c : xml_blocks(xml, "Contents")) {
    StoreEntry e;
    e.key = xml_text(c, "Key");
    const std::string size = xml_text(c, "Size");
    e.stored_size = size.empty() ? 0 : std::strtoull(size.c_str(), nullptr, 10);
    page.objects.push_back(std::move(e));
  }
  for (std::string_view p : xml_blocks(xml, "CommonPrefixes"))
    page.prefixes.push_back(xml_text(p, "Prefix"));
  // The document's own IsTruncated, not one inside an object.
  const std::size_t last_contents = xml.rfind("</Contents>");
  const std::string_view tail =
      last_contents == std::string_view::npos ? xml : xml.substr(last_contents);
  page.truncated =
      xml_text(tail, "IsTruncated") == "true" || xml_text(xml, "IsTruncated") == "true";
  page.next_token = xml_text(xml, "NextContinuationToken");
  return page;
}

std::vector<std::string> html_links(std::string_view html) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (;;) {
    // href= in any case, with single, double or no quotes.
    std::size_t at = std::string_view::npos;
    for (std::size_t i = pos; i + 5 <= html.size(); ++i) {
      if ((html[i] == 'h' || html[i] == 'H') && lower(html.substr(i, 5)) == "href=") {
        at = i + 5;
        break;
      }
    }
    if (at == std::string_view::npos) break;
    std::size_t end;
    std::size_t start = at;
    if (start < html.size() && (html[start] == '"' || html[start] == '\'')) {
      const char q = html[start++];
      end = html.find(q, start);
    } else {
      end = html.find_first_of(" \t\r\n>", start);
    }
    if (end == std::string_view::npos) break;
    pos = end;
    std::string link = unescape_entities(html.substr(start, end - start));
    if (link.empty() || link.front() == '/' || link.front() == '?' || link.front() == '#' ||
        link.find("://") != std::string::npos || link.starts_with("mailto:"))
      continue;
    if (link.starts_with("./")) link.erase(0, 2);
    link = uri_decode(link);
    if (link.empty() || link.find('?') != std::string::npos || link.find('#') != std::string::npos)
      continue;
    const std::string_view name = std::string_view(link).substr(0, link.find('/'));
    if (name.empty() || name == "." || name == "..") continue;
    // Only direct children: "a/" or "a", not "a/b".
    const std::size_t slash = link.find('/');
    if (slash != std::string::npos && slash + 1 != link.size()) continue;
    if (std::find(out.begin(), out.end(), link) == out.end()) out.push_back(std::move(link));
  }
  return out;
}

std::map<std::string, std::map<std::string, std::string>> parse_ini(std::string_view text) {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::string section;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) continue;  // nested
    const std::string t = trim(line);
    if (t.empty() || t.front() == '#' || t.front() == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      section = trim(std::string_view(t).substr(1, t.size() - 2));
      out[section];
      continue;
    }
    const std::size_t eq = t.find('=');
    if (eq == std::string::npos || section.empty()) continue;
    out[section][lower(trim(std::string_view(t).substr(0, eq)))] =
        trim(std::string_view(t).substr(eq + 1));
  }
  return out;
}

S3Settings resolve_s3_settings(const StoreOptions& options, const GetEnv& getenv,
                               const ReadFile& read_file) {
  S3Settings s;
  s.endpoint = options.s3_endpoint;
  s.region = options.s3_region;
  s.access_key_id = options.access_key_id;
  s.secret_access_key = options.secret_access_key;
  s.session_token = options.session_token;
  if (!s.access_key_id.empty()) s.credentials = "options";

  if (options.use_environment) {
    auto env = [&](const char* name) {
      auto v = getenv(name);
      return v && !v->empty() ? *v : std::string();
    };
    if (s.endpoint.empty()) s.endpoint = env("AWS_ENDPOINT_URL_S3");
    if (s.endpoint.empty()) s.endpoint = env("AWS_ENDPOINT_URL");
    if (s.region.empty()) s.region = env("AWS_REGION");
    if (s.region.empty()) s.region = env("AWS_DEFAULT_REGION");
    if (s.access_key_id.empty() && !env("AWS_ACCESS_KEY_ID").empty()) {
      s.access_key_id = env("AWS_ACCESS_KEY_ID");
      s.secret_access_key = env("AWS_SECRET_ACCESS_KEY");
      s.session_token = env("AWS_SESSION_TOKEN");
      s.credentials = "environment (AWS_ACCESS_KEY_ID)";
    }
    std::string profile = env("AWS_PROFILE");
    if (profile.empty()) profile = "default";
    std::string home = env("HOME");
    std::string cred_file = env("AWS_SHARED_CREDENTIALS_FILE");
    if (cred_file.empty() && !home.empty()) cred_file = home + "/.aws/credentials";
    std::string config_file = env("AWS_CONFIG_FILE");
    if (config_file.empty() && !home.empty()) config_file = home + "/.aws/config";

    auto take_credentials = [&](const std::map<std::string, std::string>& sec,
                                const std::string& where) {
      auto it = sec.find("aws_access_key_id");
      if (!s.access_key_id.empty() || it == sec.end() || it->second.empty()) return;
      s.access_key_id = it->second;
      if (auto k = sec.find("aws_secret_access_key"); k != sec.end())
        s.secret_access_key = k->second;
      if (auto k = sec.find("aws_session_token"); k != sec.end()) s.session_token = k->second;
      s.credentials = where;
    };
    if (!cred_file.empty()) {
      if (auto text = read_file(cred_file)) {
        const auto ini = parse_ini(*text);
        if (auto it = ini.find(profile); it != ini.end())
          take_credentials(it->second, cred_file + " [" + profile + "]");
      }
    }
    if (!config_file.empty()) {
      if (auto text = read_file(config_file)) {
        const auto ini = parse_ini(*text);
        auto it = ini.find(profile == "default" ? "default" : "profile " + profile);
        if (it == ini.end()) it = ini.find(profile);
        if (it != ini.end()) {
          const auto& sec = it->second;
          if (auto k = sec.find("region"); s.region.empty() && k != sec.end()) s.region = k->second;
          if (auto k = sec.find("endpoint_url"); s.endpoint.empty() && k != sec.end())
            s.endpoint = k->second;
          take_credentials(sec, config_file + " [" + it->first + "]");
        }
      }
    }
  }
  while (!s.endpoint.empty() && s.endpoint.back() == '/') s.endpoint.pop_back();
  if (!s.endpoint.empty() && s.endpoint.find("://") == std::string::npos)
    s.endpoint = "https://" + s.endpoint;
  s.anonymous = options.anonymous || s.access_key_id.empty() || s.secret_access_key.empty();
  if (s.anonymous) {
    s.credentials = options.anonymous ? "none (--anonymous)" : "none found (anonymous requests)";
    s.access_key_id.clear();
    s.secret_access_key.clear();
    s.session_token.clear();
  }
  return s;
}

std::string s3_object_url(const S3Settings& s, const std::string& bucket,
                          const std::string& encoded_key) {
  if (!s.endpoint.empty()) return s.endpoint + "/" + bucket + "/" + encoded_key;
  const std::string region = s.region.empty() ? "us-east-1" : s.region;
  const std::string host = "s3." + region + ".amazonaws.com";
  if (bucket.find('.') != std::string::npos)
    return "https://" + host + "/" + bucket + "/" + encoded_key;
  return "https://" + bucket + "." + host + "/" + encoded_key;
}

std::string gcs_endpoint(const StoreOptions& options, const GetEnv& getenv) {
  std::string e = options.gcs_endpoint;
  if (e.empty() && options.use_environment) {
    if (auto v = getenv("STORAGE_EMULATOR_HOST"); v && !v->empty()) e = *v;
  }
  if (e.empty()) e = "https://storage.googleapis.com";
  if (e.find("://") == std::string::npos) e = "http://" + e;
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

std::optional<std::string> system_getenv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> system_read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace vczstats::zarr::remote
