// Remote stores against real servers on the loopback address: Debian's nginx (directory stores
// and zips read with range requests), s3rver (S3 and gs:// through an emulator endpoint) and
// tests/tools/fault_server.py (dropped connections, random 500s, cut bodies, slow and silent
// servers, refusals, Signature V4 checked by an independent implementation). Every array must
// decode to what numpy/zarr-python wrote (the fixtures' expected values), or fail with an error
// naming the URL; nothing may hang.

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "vczstats/error.hpp"
#include "vczstats/zarr.hpp"
#include "zarr/remote/remote_util.hpp"
#include "zarr/remote_test_support.hpp"
#include "zarr/zarr_test_support.hpp"

#ifdef VCZSTATS_HAVE_REMOTE

namespace {

using namespace vczstats::zarr;
using vcztest::remote::FaultServer;
using vcztest::remote::Nginx;
using vcztest::remote::S3Server;
using vcztest::zarr::check_fixture_store;
using vcztest::zarr::fixtures;

const std::vector<std::string> kFixtureStores = {"v2",
                                                 "v3",
                                                 "v2_stored.zip",
                                                 "v2_deflated.zip",
                                                 "v2_folder.zip",
                                                 "v2_zip64.zip",
                                                 "v3_deflated.zip"};

std::string text(const Bytes& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

/// Options for tests: quick retries, a short stall timeout.
StoreOptions quick() {
  StoreOptions o;
  o.use_environment = false;
  o.max_retries = 10;
  o.retry_backoff_seconds = 0.005;
  o.stall_seconds = 2;
  o.connect_seconds = 2;
  return o;
}

TEST(RemoteUtil, ParsesListObjectsV2) {
  const std::string xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>
<Prefix>p/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>
<Contents><Key>p/a&amp;b/.zarray</Key><Size>12</Size><ETag>&quot;x&quot;</ETag></Contents>
<Contents><Key>p/c/0.0</Key><Size>345</Size></Contents>
<CommonPrefixes><Prefix>p/d/</Prefix></CommonPrefixes>
<NextContinuationToken>tok/en=</NextContinuationToken></ListBucketResult>)";
  const auto page = remote::parse_list_objects(xml);
  ASSERT_EQ(page.objects.size(), 2u);
  EXPECT_EQ(page.objects[0].key, "p/a&b/.zarray");
  EXPECT_EQ(page.objects[0].stored_size, 12u);
  EXPECT_EQ(page.objects[1].stored_size, 345u);
  EXPECT_EQ(page.prefixes, std::vector<std::string>{"p/d/"});
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next_token, "tok/en=");
  EXPECT_THROW(remote::parse_list_objects("<Error/>"), vczstats::FormatError);
}

TEST(RemoteUtil, FindsTheEntriesOfHtmlListings) {
  // nginx autoindex, python http.server and Apache styles.
  const std::string html = R"(<html><body><h1>Index of /s/</h1><hr><pre>
<a href="../">../</a>
<a href="call_genotype/">call_genotype/</a>   24-Nov-2026 04:00   -
<a href=".zgroup">.zgroup</a>   24-Nov-2026 04:00   24
<a href='sample%20id/'>sample id/</a>
<A HREF="?C=N;O=D">Name</A> <a href="/icons/x.gif">x</a> <a href="http://e.org/">e</a>
<a href="./.zattrs">.zattrs</a> <a href="a/b">deeper</a> <a href=".zgroup">again</a>
</pre></body></html>)";
  EXPECT_EQ(remote::html_links(html),
            (std::vector<std::string>{"call_genotype/", ".zgroup", "sample id/", ".zattrs"}));
}

TEST(RemoteUtil, ResolvesS3SettingsFromTheEnvironmentAndAwsFiles) {
  std::map<std::string, std::string> env{{"HOME", "/h"}, {"AWS_PROFILE", "lab"}};
  std::map<std::string, std::string> files{
      {"/h/.aws/credentials",
       "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n"
       "[lab]\naws_access_key_id = L\naws_secret_access_key = LS\naws_session_token = T\n"},
      {"/h/.aws/config",
       "[default]\nregion = eu-west-1\n[profile lab]\nregion = us-west-2\n"
       "endpoint_url = http://127.0.0.1:9000/\ns3 =\n  endpoint_url = http://ignored\n"}};
  auto getenv = [&](const std::string& k) -> std::optional<std::string> {
    auto it = env.find(k);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  auto read = [&](const std::string& k) -> std::optional<std::string> {
    auto it = files.find(k);
    return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  StoreOptions o;
  auto s = remote::resolve_s3_settings(o, getenv, read);
  EXPECT_EQ(s.access_key_id, "L");
  EXPECT_EQ(s.secret_access_key, "LS");
  EXPECT_EQ(s.session_token, "T");
  EXPECT_EQ(s.region, "us-west-2");
  EXPECT_EQ(s.endpoint, "http://127.0.0.1:9000");
  EXPECT_FALSE(s.anonymous);
  // Variables win over files; options win over variables.
  env["AWS_ACCESS_KEY_ID"] = "E";
  env["AWS_SECRET_ACCESS_KEY"] = "ES";
  env["AWS_REGION"] = "ap-south-1";
  env["AWS_ENDPOINT_URL"] = "http://e:1";
  s = remote::resolve_s3_settings(o, getenv, read);
  EXPECT_EQ(s.access_key_id, "E");
  EXPECT_EQ(s.session_token, "");
  EXPECT_EQ(s.region, "ap-south-1");
  EXPECT_EQ(s.endpoint, "http://e:1");
  o.s3_endpoint = "http://o:2";
  o.s3_region = "r";
  s = remote::resolve_s3_settings(o, getenv, read);
  EXPECT_EQ(s.endpoint, "http://o:2");
  EXPECT_EQ(s.region, "r");
  o.anonymous = true;
  s = remote::resolve_s3_settings(o, getenv, read);
  EXPECT_TRUE(s.anonymous);
  EXPECT_EQ(s.access_key_id, "");
  // Without the environment, nothing is found: anonymous.
  StoreOptions bare;
  bare.use_environment = false;
  EXPECT_TRUE(remote::resolve_s3_settings(bare, getenv, read).anonymous);
}

TEST(RemoteUtil, BuildsS3Urls) {
  remote::S3Settings aws;
  aws.region = "eu-west-1";
  EXPECT_EQ(remote::s3_object_url(aws, "vo_agam", "v3/a%20b/0.0"),
            "https://vo_agam.s3.eu-west-1.amazonaws.com/v3/a%20b/0.0");
  EXPECT_EQ(remote::s3_object_url(aws, "my.bucket", "k"),
            "https://s3.eu-west-1.amazonaws.com/my.bucket/k");
  remote::S3Settings local;
  local.endpoint = "http://127.0.0.1:9000";
  EXPECT_EQ(remote::s3_object_url(local, "b", "k/0"), "http://127.0.0.1:9000/b/k/0");
  EXPECT_EQ(remote::uri_encode("a b/c~d:é", true), "a%20b/c~d%3A%C3%A9");
  EXPECT_EQ(remote::uri_encode("a/b", false), "a%2Fb");
  EXPECT_EQ(remote::uri_decode("a%20b%2fc%zz"), "a b/c%zz");
  EXPECT_TRUE(is_remote_url("HTTPS://x/y"));
  EXPECT_TRUE(is_remote_url("s3://b"));
  EXPECT_FALSE(is_remote_url("/data/s3://b"));
  EXPECT_FALSE(is_remote_url("store.vcz"));
}

TEST(RemoteStore, NginxServesEveryFixtureStoreAsTheLocalOne) {
  VCZ_REQUIRE_NGINX();
  Nginx nginx(fixtures());
  ASSERT_TRUE(nginx.ok()) << nginx.log();
  for (const auto& name : kFixtureStores) {
    SCOPED_TRACE(name);
    const auto store = open_store(nginx.url() + "/" + name, quick());
    check_fixture_store(name, store);
    const auto io = store->io_stats();
    EXPECT_GT(io.requests, 0);
    EXPECT_EQ(io.retries, 0);
  }
}

TEST(RemoteStore, ListingAndKeysMatchTheLocalStore) {
  VCZ_REQUIRE_NGINX();
  Nginx nginx(fixtures());
  ASSERT_TRUE(nginx.ok()) << nginx.log();
  for (const std::string name : {"v2", "v2_folder.zip"}) {
    SCOPED_TRACE(name);
    const auto local = open_store(fixtures() / name);
    const auto remote = open_store(nginx.url() + "/" + name, quick());
    const auto want = local->list("");
    const auto got = remote->list("");
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].key, want[i].key);
      EXPECT_EQ(got[i].stored_size, want[i].stored_size) << got[i].key;
    }
    EXPECT_EQ(remote->children(""), local->children(""));
    EXPECT_EQ(remote->children("sep_slash/0"), local->children("sep_slash/0"));
    EXPECT_EQ(list_arrays(*remote), list_arrays(*local));
    EXPECT_TRUE(remote->contains(".zgroup"));
    EXPECT_FALSE(remote->contains("no/such/key"));
    EXPECT_FALSE(remote->get("no/such/key"));  // 404: absent (a chunk reads as the fill value)
    EXPECT_FALSE(remote->get("../v2/.zgroup"));
  }
}

TEST(RemoteStore, ZipCentralDirectoryTakesOneRequestAndReadAheadCoalesces) {
  VCZ_REQUIRE_NGINX();
  Nginx nginx(fixtures());
  ASSERT_TRUE(nginx.ok()) << nginx.log();
  const auto store = open_store(nginx.url() + "/v2_stored.zip", quick());
  // The end records and the central directory: at most two range requests.
  const auto opened = store->io_stats().requests;
  EXPECT_LE(opened, 2);
  std::vector<std::string> keys;
  for (const auto& e : store->list("")) keys.push_back(e.key);
  ASSERT_GT(keys.size(), 20u);
  store->prefetch(keys);
  const auto local = open_store(fixtures() / "v2_stored.zip");
  for (const auto& k : keys) EXPECT_EQ(text(*store->get(k)), text(*local->get(k))) << k;
  // Neighbouring entries travel together: far fewer requests than keys.
  EXPECT_LE(store->io_stats().requests - opened, 2);
}

TEST(RemoteStore, ReadAheadSendsEachHintedKeyOnce) {
  VCZ_REQUIRE_NGINX();
  Nginx nginx(fixtures());
  ASSERT_TRUE(nginx.ok()) << nginx.log();
  const auto local = open_store(fixtures() / "v2");
  const auto store = open_store(nginx.url() + "/v2", quick());
  std::vector<std::string> keys;
  for (const auto& e : local->list("")) keys.push_back(e.key);
  // The root documents were all asked for when the store opened (those present are kept): wait
  // for every one of them, absent ones included (an answer still in flight would count after
  // `before`), then every other key costs one request.
  std::int64_t root_docs = 0;
  for (const std::string doc : {".zmetadata", "zarr.json", ".zgroup", ".zattrs"}) {
    const auto got = store->get(doc);
    if (const auto want = local->get(doc)) {
      ++root_docs;
      ASSERT_TRUE(got) << doc;
      EXPECT_EQ(text(*got), text(*want));
    } else {
      EXPECT_FALSE(got) << doc;
    }
  }
  const auto before = store->io_stats().requests;
  store->prefetch(keys);
  for (const auto& k : keys) EXPECT_EQ(text(*store->get(k)), text(*local->get(k))) << k;
  EXPECT_EQ(store->io_stats().requests - before,
            static_cast<std::int64_t>(keys.size()) - root_docs);
  // Skipped hints do not hold the read-ahead: later reads still work.
  store->prefetch(keys);
  store->cancel_prefetch();
  EXPECT_EQ(text(*store->get(keys.back())), text(*local->get(keys.back())));
}

TEST(RemoteStore, ConsolidatedMetadataAnswersMetadataReads) {
  VCZ_REQUIRE_NGINX();
  VCZ_REQUIRE_PYTHON_ZARR();
  vcztest::TempDir dir;
  std::filesystem::copy(fixtures() / "v2", dir / "v2", std::filesystem::copy_options::recursive);
  vcztest::run_ok(vcztest::python() +
                  " -c 'import sys, zarr; zarr.consolidate_metadata(sys.argv[1])' " +
                  vcztest::shell_quote((dir / "v2").string()));
  Nginx nginx(dir.path());
  ASSERT_TRUE(nginx.ok()) << nginx.log();
  const auto store = open_store(nginx.url() + "/v2", quick());
  const auto local = open_store(fixtures() / "v2");
  const auto opened = store->io_stats().requests;
  // .zmetadata, with the root's other documents asked for beside it (one round trip)
  EXPECT_LE(opened, 4);
  EXPECT_EQ(list_arrays(*store), list_arrays(*local));
  for (const auto& name : list_arrays(*local)) Array::open(store, name);
  // Every document came from .zmetadata: no request beyond the root's four (requests count when
  // they complete, and the root's other documents may complete after the open returned).
  EXPECT_LE(store->io_stats().requests, 4);
  vcztest::zarr::check_fixture_store("v2", store);
}

TEST(RemoteStore, V3ConsolidatedMetadataAnswersMetadataReads) {
  VCZ_REQUIRE_NGINX();
  vcztest::TempDir dir;
  std::filesystem::copy(fixtures() / "v3", dir / "v3", std::filesystem::copy_options::recursive);
  // The root zarr.json gains consolidated_metadata with every node's zarr.json inline (written
  // here by Python's json, the layout of zarr-python 3's consolidate_metadata).
  const auto script = dir / "consolidate.py";
  std::ofstream(script) << R"PY(import json, os, sys
root = sys.argv[1]
docs = {}
for d, _, files in os.walk(root):
    if d != root and "zarr.json" in files:
        with open(os.path.join(d, "zarr.json")) as f:
            docs[os.path.relpath(d, root)] = json.load(f)
with open(os.path.join(root, "zarr.json")) as f:
    top = json.load(f)
top["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": docs}
with open(os.path.join(root, "zarr.json"), "w") as f:
    json.dump(top, f)
)PY";
  vcztest::run_ok(vcztest::python() + " " + vcztest::shell_quote(script.string()) + " " +
                  vcztest::shell_quote((dir / "v3").string()));
  Nginx nginx(dir.path());
  ASSERT_TRUE(nginx.ok()) << nginx.log();
  const auto store = open_store(nginx.url() + "/v3", quick());
  const auto local = open_store(fixtures() / "v3");
  const auto opened = store->io_stats().requests;
  EXPECT_LE(opened, 4);  // .zmetadata (absent), zarr.json, .zgroup, .zattrs: one round trip
  EXPECT_EQ(list_arrays(*store), list_arrays(*local));
  for (const auto& name : list_arrays(*local)) Array::open(store, name);
  // Every document came from zarr.json: no request beyond the root's four (counted as they
  // complete, possibly after the open returned).
  EXPECT_LE(store->io_stats().requests, 4);
  vcztest::zarr::check_fixture_store("v3", store);
}

TEST(RemoteStore, S3AndGsThroughS3rver) {
  VCZ_REQUIRE_S3RVER();
  S3Server s3("fixtures");
  ASSERT_TRUE(s3.ok()) << s3.log();
  s3.put("data", {fixtures() / "v2", fixtures() / "v3", fixtures() / "v2_deflated.zip"});
  StoreOptions o = quick();
  o.s3_endpoint = s3.url();
  o.access_key_id = "S3RVER";  // s3rver's account
  o.secret_access_key = "S3RVER";
  for (const std::string name : {"v2", "v3", "v2_deflated.zip"}) {
    SCOPED_TRACE(name);
    check_fixture_store(name, open_store("s3://fixtures/data/" + name, o));
  }
  // Listing through ListObjectsV2 (paged by 1000 keys) matches the local store.
  const auto local = open_store(fixtures() / "v2");
  const auto remote = open_store("s3://fixtures/data/v2", o);
  const auto want = local->list("");
  const auto got = remote->list("");
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].key, want[i].key);
    EXPECT_EQ(got[i].stored_size, want[i].stored_size);
  }
  EXPECT_EQ(remote->children(""), local->children(""));
  EXPECT_EQ(remote->list("sep_slash").size(), local->list("sep_slash").size());
  // Anonymous reads of the same bucket, and gs:// through an emulator endpoint.
  StoreOptions anon = o;
  anon.anonymous = true;
  check_fixture_store("v2", open_store("s3://fixtures/data/v2", anon));
  StoreOptions gs = quick();
  gs.gcs_endpoint = s3.url();
  check_fixture_store("v2_deflated.zip", open_store("gs://fixtures/data/v2_deflated.zip", gs));
  // An unknown access key: 403, an error naming the URL.
  StoreOptions bad = o;
  bad.access_key_id = "NOBODY";
  try {
    open_group(*open_store("s3://fixtures/data/v2", bad));
    FAIL() << "expected IoError";
  } catch (const vczstats::IoError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(s3.url() + "/fixtures/data/v2/"), std::string::npos) << m;
    EXPECT_NE(m.find("403"), std::string::npos) << m;
    EXPECT_NE(m.find("InvalidAccessKeyId"), std::string::npos) << m;
  }
}

TEST(RemoteStore, SignatureV4IsCheckedByAnIndependentServer) {
  // fault_server.py --sigv4 recomputes each signature from AWS's specification (Python hmac).
  vcztest::TempDir dir;
  std::filesystem::create_directories(dir / "bucket");
  std::filesystem::copy(fixtures() / "v2", dir / "bucket/v2",
                        std::filesystem::copy_options::recursive);
  std::filesystem::copy(fixtures() / "v2_stored.zip", dir / "bucket/v2_stored.zip");
  FaultServer server(dir.path(), {"--sigv4", "AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG"});
  ASSERT_TRUE(server.ok()) << server.log();
  StoreOptions o = quick();
  o.s3_endpoint = server.url();
  o.s3_region = "eu-central-1";
  o.access_key_id = "AKIDEXAMPLE";
  o.secret_access_key = "wJalrXUtnFEMI/K7MDENG";
  check_fixture_store("v2", open_store("s3://bucket/v2", o), false);
  check_fixture_store("v2_stored.zip", open_store("s3://bucket/v2_stored.zip", o), false);
  // Signed listings (ListObjectsV2 with a query string to sign, paged) match the local store.
  const auto local = open_store(fixtures() / "v2");
  const auto remote = open_store("s3://bucket/v2", o);
  const auto want = local->list("");
  const auto got = remote->list("");
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].key, want[i].key);
  EXPECT_EQ(remote->children(""), local->children(""));
  EXPECT_EQ(remote->children("sep_slash/0"), local->children("sep_slash/0"));
  // Every request was signed and checked: none was refused.
  const auto log = server.requests();
  EXPECT_EQ(log.find(" 403"), std::string::npos) << log;
  EXPECT_NE(log.find(" 206"), std::string::npos) << log;
}

TEST(RemoteStore, AWrongSignatureIsAClearErrorNamingTheUrl) {
  vcztest::TempDir dir;
  std::filesystem::create_directories(dir / "bucket");
  std::filesystem::copy(fixtures() / "v2", dir / "bucket/v2",
                        std::filesystem::copy_options::recursive);
  FaultServer server(dir.path(), {"--sigv4", "AKIDEXAMPLE:right-secret"});
  ASSERT_TRUE(server.ok()) << server.log();
  StoreOptions o = quick();
  o.s3_endpoint = server.url();
  o.access_key_id = "AKIDEXAMPLE";
  o.secret_access_key = "wrong-secret";
  const auto t0 = std::chrono::steady_clock::now();
  try {
    open_group(*open_store("s3://bucket/v2", o));
    FAIL() << "expected IoError";
  } catch (const vczstats::IoError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(server.url() + "/bucket/v2/"), std::string::npos) << m;
    EXPECT_NE(m.find("HTTP 403 Forbidden"), std::string::npos) << m;
    EXPECT_NE(m.find("SignatureDoesNotMatch"), std::string::npos) << m;
  }
  // Refusals are not retried.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(server.requests().find("403") != std::string::npos, true);
}

/// Every fixture array through a faulty server equals the expected values; returns the retries.
std::int64_t check_through(const std::vector<std::string>& faults, const std::string& name) {
  FaultServer server(fixtures(), faults);
  EXPECT_TRUE(server.ok()) << server.log();
  if (!server.ok()) return 0;
  const auto store = open_store(server.url() + "/" + name, quick());
  check_fixture_store(name, store, false, 16);  // 16 arrays: hundreds of requests
  return store->io_stats().retries;
}

// Directory stores make hundreds of requests, so faults at these rates must cause retries; zips
// make a few (coalesced ranges), which may all succeed: there only the values are checked.
TEST(RemoteStoreFaults, DroppedConnectionsAreRetried) {
  EXPECT_GT(check_through({"--drop", "0.25", "--seed", "3"}, "v2"), 0);
  check_through({"--drop", "0.3", "--seed", "4"}, "v2_deflated.zip");
}

TEST(RemoteStoreFaults, Random500sAreRetried) {
  EXPECT_GT(check_through({"--error500", "0.3", "--seed", "5"}, "v2"), 0);
  check_through({"--error500", "0.3", "--seed", "6"}, "v3_deflated.zip");
}

TEST(RemoteStoreFaults, CutBodiesAreDetectedByTheirLengthAndRetried) {
  EXPECT_GT(check_through({"--truncate", "0.3", "--seed", "7"}, "v2"), 0);
  check_through({"--truncate", "0.3", "--seed", "8"}, "v2_stored.zip");
}

TEST(RemoteStoreFaults, ASlowServerGivesTheSameValues) {
  EXPECT_EQ(check_through({"--delay", "0.02"}, "v2_folder.zip"), 0);
}

TEST(RemoteStoreFaults, ASilentServerTimesOutWithAnErrorNotAHang) {
  FaultServer server(fixtures(), {"--stall"});
  ASSERT_TRUE(server.ok()) << server.log();
  StoreOptions o = quick();
  o.stall_seconds = 1;
  o.max_retries = 1;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    open_group(*open_store(server.url() + "/v2", o));
    FAIL() << "expected IoError";
  } catch (const vczstats::IoError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(server.url() + "/v2/"), std::string::npos) << m;
    EXPECT_NE(m.find("gave up after 2 attempts"), std::string::npos) << m;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

TEST(RemoteStoreFaults, FuzzedResponsesAreRetriedOrRejectedNeverMisread) {
  // fault_server.py --fuzz mangles one answer in five (lying or malformed Content-Range and
  // Content-Length, odd statuses, redirects to nowhere, 100 KB header lines, bytes past the
  // body). Each run either reads every value numpy wrote, or stops with an error naming the
  // server, in bounded time; wrong values are never accepted.
  int finished = 0, failed = 0, mangled = 0;
  for (const int seed : {21, 22, 23, 24}) {
    for (const std::string name : {"v2", "v2_stored.zip", "v3_deflated.zip"}) {
      SCOPED_TRACE(name + " seed " + std::to_string(seed));
      FaultServer server(fixtures(), {"--fuzz", "0.2", "--seed", std::to_string(seed)});
      ASSERT_TRUE(server.ok()) << server.log();
      const auto t0 = std::chrono::steady_clock::now();
      try {
        check_fixture_store(name, open_store(server.url() + "/" + name, quick()), false, 8);
        ++finished;
      } catch (const vczstats::Error& e) {
        ++failed;
        EXPECT_NE(std::string(e.what()).find(server.url()), std::string::npos) << e.what();
      }
      EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
      if (server.requests().find("fuzz") != std::string::npos) ++mangled;
    }
  }
  EXPECT_GE(mangled, 8);  // of 12 runs
  EXPECT_GT(finished, 0);
  RecordProperty("finished", finished);
  RecordProperty("failed", failed);
}

TEST(RemoteStoreFaults, PersistentErrorsAndRefusalsNameTheUrl) {
  {
    FaultServer server(fixtures(), {"--status", "500"});
    ASSERT_TRUE(server.ok()) << server.log();
    StoreOptions o = quick();
    o.max_retries = 2;
    try {
      open_store(server.url() + "/v2_stored.zip", o);
      FAIL() << "expected IoError";
    } catch (const vczstats::IoError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(server.url() + "/v2_stored.zip: HTTP 500"), std::string::npos) << m;
      EXPECT_NE(m.find("gave up after 3 attempts"), std::string::npos) << m;
    }
  }
  {
    FaultServer server(fixtures(), {"--status", "403"});
    ASSERT_TRUE(server.ok()) << server.log();
    try {
      open_group(*open_store(server.url() + "/v2", quick()));
      FAIL() << "expected IoError";
    } catch (const vczstats::IoError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(server.url() + "/v2/"), std::string::npos) << m;
      EXPECT_NE(m.find("HTTP 403 Forbidden: AccessDenied"), std::string::npos) << m;
    }
    // A refusal is not retried: one request for each of the root's documents, asked for at once.
    const auto log = server.requests();
    std::map<std::string, int> asked;
    std::istringstream lines(log);
    for (std::string method, path, rest; lines >> method >> path && std::getline(lines, rest);)
      ++asked[path];
    EXPECT_LE(asked.size(), 4u) << log;
    for (const auto& [path, n] : asked) EXPECT_EQ(n, 1) << path << "\n" << log;
  }
}

TEST(RemoteStore, CacheServesRepeatedReadsAndNeverAStaleObject) {
  VCZ_REQUIRE_NGINX();
  vcztest::TempDir dir;
  std::filesystem::copy(fixtures() / "v2", dir / "v2", std::filesystem::copy_options::recursive);
  std::filesystem::copy(fixtures() / "v2_stored.zip", dir / "v2_stored.zip");
  Nginx nginx(dir.path());
  ASSERT_TRUE(nginx.ok()) << nginx.log();
  StoreOptions o = quick();
  o.cache_dir = (dir / "cache").string();
  for (const std::string name : {"v2", "v2_stored.zip"}) {
    SCOPED_TRACE(name);
    const auto first = open_store(nginx.url() + "/" + name, o);
    check_fixture_store(name, first, false);
    const auto second = open_store(nginx.url() + "/" + name, o);
    check_fixture_store(name, second, false);
    const auto io1 = first->io_stats(), io2 = second->io_stats();
    EXPECT_GT(io2.cache_hits, io1.cache_hits);
    EXPECT_LT(io2.bytes_fetched, io1.bytes_fetched);
  }
  // A changed object (new ETag and size) is fetched again, not served from the cache.
  const auto before = open_store(nginx.url() + "/v2", o)->get("positions/0");
  ASSERT_TRUE(before);
  std::ofstream(dir / "v2/positions/0") << "changed";
  const auto after = open_store(nginx.url() + "/v2", o)->get("positions/0");
  ASSERT_TRUE(after);
  EXPECT_EQ(text(*after), "changed");
}

TEST(RemoteStore, UrlsWithoutRemoteSupportOrWithBadSchemesAreUsageErrors) {
  EXPECT_THROW(open_store("ftp://x/y"), vczstats::IoError);  // a local path that does not exist
  EXPECT_THROW(open_store("s3://"), vczstats::UsageError);
}

}  // namespace

#endif  // VCZSTATS_HAVE_REMOTE
