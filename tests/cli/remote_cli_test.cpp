// Every statistic on a remote store equals the local store's output byte for byte: the stores
// are served by Debian's nginx (directory and zip) and by s3rver (s3:// and gs://, directory and
// zip) on the loopback address. Stores: the vcztools fixtures of ../shared/data (v2 and v3) and a
// simulated store with four populations, absent chunks and several sample chunks.

#include <filesystem>
#include <fstream>

#include "test_util.hpp"
#include "vczstats/vcz.hpp"
#include "zarr/remote_test_support.hpp"

#ifdef VCZSTATS_HAVE_REMOTE

namespace {

namespace fs = std::filesystem;
using vcztest::binary;
using vcztest::python;
using vcztest::run;
using vcztest::run_ok;
using vcztest::shell_quote;
using vcztest::TempDir;
using vcztest::remote::Nginx;
using vcztest::remote::S3Server;

/// Extract a zip store into @p dir and return the folder that holds its root metadata.
fs::path unzip_store(const fs::path& zip, const fs::path& dir) {
  run_ok(python() +
         " -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' " +
         shell_quote(zip.string()) + " " + shell_quote(dir.string()));
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename() == ".zgroup" || e.path().filename() == "zarr.json")
      if (!fs::exists(e.path().parent_path().parent_path() / e.path().filename()) ||
          e.path().parent_path() == dir)
        return e.path().parent_path();
  return dir;
}

/// A populations file: the store's samples dealt round-robin into @p k populations.
fs::path pops_file(const TempDir& dir, const std::string& store, int k, const std::string& name) {
  const fs::path p = dir / name;
  std::ofstream out(p);
  int i = 0;
  const auto opened = vczstats::vcz::VczStore::open(store);
  for (const auto& id : opened.sample_ids())
    if (!id.empty()) out << id << " p" << (i++ % k) << "\n";
  return p;
}

/// The statistic commands run on each store (arguments after STORE).
std::vector<std::string> commands(const fs::path& pops, bool four_pops) {
  const std::string P = " -P " + shell_quote(pops.string());
  std::vector<std::string> c = {
      "afdist",
      "afdist --method zarr-afdist --bins 7",
      "freq" + P,
      "geno-counts" + P,
      "hardy",
      "missing" + P,
      "sample-stats" + P,
      "diversity" + P + " --window-variants 50",
      "divergence" + P,
      "stats --stats pi,theta_w,tajima_d,dxy,fst_hudson" + P,
      "sfs" + P + " --folded",
  };
  if (four_pops) {
    c.push_back("fstats --f2 p0,p1 --blocks 5" + P);
    c.push_back("fstats --d p0,p1,p2,p3 --blocks 5" + P);
    c.push_back("sfs --joint p0,p2" + P);
  }
  return c;
}

struct Served {
  std::string name;
  fs::path local;                 // the store as files here
  std::vector<std::string> urls;  // the same store remotely
};

void expect_same_output(const Served& s, const std::vector<std::string>& cmds,
                        const std::string& env, const std::string& options) {
  for (const auto& cmd : cmds) {
    const auto want =
        run(binary() + " " + cmd.substr(0, cmd.find(' ')) + " " + shell_quote(s.local.string()) +
            (cmd.find(' ') == std::string::npos ? "" : cmd.substr(cmd.find(' '))) +
            " --no-progress -t 2");
    ASSERT_EQ(want.exit_code, 0) << cmd << ": " << want.err;
    EXPECT_NE(want.out.find('\n'), std::string::npos) << cmd << " printed nothing";
    for (const auto& url : s.urls) {
      SCOPED_TRACE(s.name + ": " + cmd + " on " + url);
      const auto got =
          run(env + binary() + " " + cmd.substr(0, cmd.find(' ')) + " " + shell_quote(url) +
              (cmd.find(' ') == std::string::npos ? "" : cmd.substr(cmd.find(' '))) +
              " --no-progress -t 2" + options);
      ASSERT_EQ(got.exit_code, 0) << got.err;
      EXPECT_EQ(got.out, want.out);
    }
  }
}

TEST(RemoteCli, EveryStatisticOnARemoteStoreEqualsTheLocalOutput) {
  VCZ_REQUIRE_NGINX();
  VCZ_REQUIRE_S3RVER();
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const fs::path www = dir / "www";
  fs::create_directories(www);
  // A simulated store: 4 populations, 3 sample chunks, missing calls; zipped too.
  const fs::path sim = www / "sim.vcz";
  run_ok(binary() + " simulate " + shell_quote(sim.string()) +
         " --samples 40 --variants 1500 --pops 4 --missing 0.02 --variants-chunk-size 200 "
         "--samples-chunk-size 16 --seed 11 --no-progress");
  run_ok("cd " + shell_quote(sim.string()) + " && " + python() +
         " -c 'import os, zipfile\nwith zipfile.ZipFile(\"../sim.vcz.zip\", \"w\") as z:\n"
         "    [z.write(os.path.join(d, f), os.path.relpath(os.path.join(d, f), \".\")) "
         "for d, _, fs in os.walk(\".\") for f in fs]'");
  std::vector<std::pair<std::string, fs::path>> stores = {{"sim.vcz", sim},
                                                          {"sim.vcz.zip", www / "sim.vcz.zip"}};
  const auto shared = vcztest::shared_data();
  if (!shared.empty()) {
    for (const std::string name : {"sample.vcz.zip", "sample.vcz3.zip", "chr22.vcz.zip"}) {
      const fs::path zip = shared / "vcztools" / name;
      fs::copy(zip, www / name);
      stores.emplace_back(name, www / name);
      const fs::path unzipped = unzip_store(zip, dir / ("unz-" + name));
      fs::copy(unzipped, www / (name + ".dir"), fs::copy_options::recursive);
      stores.emplace_back(name + ".dir", www / (name + ".dir"));
    }
  } else {
    GTEST_LOG_(INFO) << "../shared/data is absent: only the simulated store is checked";
  }

  Nginx nginx(www);
  ASSERT_TRUE(nginx.ok()) << nginx.log();
  S3Server s3("vcz");
  ASSERT_TRUE(s3.ok()) << s3.log();
  std::vector<fs::path> all;
  for (const auto& [name, path] : stores) all.push_back(path);
  s3.put("stores", all);

  for (const auto& [name, path] : stores) {
    Served s{name, path, {nginx.url() + "/" + name, "s3://vcz/stores/" + name}};
    if (name.ends_with(".zip") || name == "sim.vcz") s.urls.push_back("gs://vcz/stores/" + name);
    const bool four = name.starts_with("sim");
    const fs::path pops = pops_file(dir, path.string(), four ? 4 : 2, name + ".pops");
    // S3RVER is s3rver's key; gs:// goes to s3rver as its emulator endpoint.
    expect_same_output(s, commands(pops, four),
                       "env -u AWS_PROFILE -u AWS_SESSION_TOKEN AWS_ACCESS_KEY_ID=S3RVER "
                       "AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1 STORAGE_EMULATOR_HOST=" +
                           s3.url() + " ",
                       " --s3-endpoint " + s3.url() + " --max-requests 8");
  }

  // -v reports what was fetched; recompress reads a remote input into a local store.
  const auto v = run(binary() + " afdist " + nginx.url() + "/sim.vcz -v --no-progress");
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_NE(v.err.find("remote"), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("requests (0 retries)"), std::string::npos) << v.err;
  const fs::path copy = dir / "copy.vcz";
  run_ok(binary() + " recompress " + nginx.url() + "/sim.vcz.zip " + shell_quote(copy.string()) +
         " --variants-chunk-size 300 --verify --no-progress");
  EXPECT_EQ(run_ok(binary() + " afdist " + shell_quote(copy.string())),
            run_ok(binary() + " afdist " + shell_quote(sim.string())));
  // A remote store that is not there: one line naming the URL, exit 1.
  const auto missing = run(binary() + " afdist " + nginx.url() + "/nothing.vcz --no-progress");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find(nginx.url() + "/nothing.vcz"), std::string::npos) << missing.err;
}

}  // namespace

#endif  // VCZSTATS_HAVE_REMOTE
