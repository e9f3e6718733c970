#pragma once
// What the tests of spread runs share (tests/dist/mpi_cli_test.cpp, MPI's ranks;
// tests/dist/thread_shares_test.cpp, the shares of one process): the statistic commands and the
// stores they run on, and how outputs are compared.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "backend/gpu_test_support.hpp"
#include "test_util.hpp"
#include "vczstats/vcz.hpp"

namespace spreadtest {

namespace fs = std::filesystem;
using vcztest::shell_quote;

inline std::string plain() {
  return "timeout 300 " + vcztest::binary() + " ";
}

/// Populations A, B, C interleaved over the store's samples.
inline std::string write_pops(const vcztest::TempDir& dir, const std::string& name,
                              const std::string& store_path) {
  const auto store = vczstats::vcz::VczStore::open(store_path);
  const std::string path = (dir / (name + ".pops")).string();
  std::ofstream f(path);
  int i = 0;
  for (const auto& id : store.sample_ids())
    if (!id.empty())
      f << id << "\t"
        << "ABC"[i++ % 3] << "\n";
  return path;
}

/// The statistic commands run on a store (every one, with the options that cut things).
inline std::vector<std::string> commands(const vcztest::TempDir& dir, const std::string& name,
                                         const std::string& path,
                                         const std::string& units = "--max-unit-variants 11") {
  const auto store = vczstats::vcz::VczStore::open(path);
  const auto& contigs = store.contig_ids();
  const fs::path bed = dir / (name + ".windows.bed");
  const fs::path mask = dir / (name + ".mask.bed");
  {
    std::ofstream b(bed), m(mask);
    b << contigs[0] << "\t0\t3000\n"
      << contigs[0] << "\t1000\t2000\n"
      << contigs[0] << "\t2500\t9000\n";
    m << contigs[0] << "\t100\t2200\n" << contigs[0] << "\t2500\t1000000\n";
    for (std::size_t c = 1; c < contigs.size(); ++c) m << contigs[c] << "\t0\t500000\n";
  }
  const std::string regions = contigs[0] + ":500-2600" +
                              (contigs.size() > 1 ? "," + contigs[1] + ":1-1500" : "") + "," +
                              contigs[0] + ":2000-4000";
  const std::string s = shell_quote(path) + " " + units + " ";
  const std::string p = s + "-P " + shell_quote(write_pops(dir, name, path)) + " ";
  std::vector<std::string> c = {
      "afdist " + s,
      "afdist " + s + "--format json --bins 13",
      "freq " + p,
      "geno-counts " + p,
      "hardy " + p,
      "missing " + p + "--format json",
      "sample-stats " + p,
      "sfs " + p,
      "sfs " + p + "--joint A,C --folded",
      "sfs " + p + "--scaled",
      "fstats " + p + "--f2 A,B --blocks 7",
      "fstats " + p + "--f3 C,A,B --blocks 5",
      "fstats " + p + "--d A,B,C,A --blocks 13",
      "diversity " + p,
      "diversity " + p + "--window-size 700 --window-step 300",
      "diversity " + p + "--window-size 700 --window-step 300 --window-span contig",
      "diversity " + p + "-r " + regions,
      "divergence " + p + "--window-variants 9",
      "divergence " + p + "--windows-file " + shell_quote(bed.string()) + " --pairs 'A,B;C,B'",
      "stats " + p + "-r " + regions + " --accessible " + shell_quote(mask.string()) +
          " --window-size 500 --stats pi,tajima_d,zeng_e,dxy,fst_wc,pbs --pbs A,B,C",
      "stats " + p + "-r " + regions +
          " --regions-overlap pos --window-variants 4 --stats theta_w,fst_hudson --format json",
      "sfs " + p + "--project 5 --folded",
      "sfs " + p + "--project A=4,B=3,C=5 --joint C,A,B --format fs",
      "sfs " + p + "--project-preview --project 9",
      "sfs " + p + "--project 4 --window-size 700 --joint B,A",
      "sfs " + p + "--project 3 --windows-file " + shell_quote(bed.string()),
  };
  if (store.ploidy() == 2) c.push_back("afdist " + s + "--method zarr-afdist --bins 7");
  return c;
}

/// The generated store missing_multi (empty when it cannot be made).
inline std::string missing_multi(const vcztest::TempDir& dir) {
  for (const auto& spec : gputest::store_specs())
    if (spec.name == "missing_multi") return gputest::obtain_store(dir, spec);
  return "";
}

/// Declares `dir` (a temporary folder) and `path` (the generated store missing_multi in it), or
/// skips the test when the store cannot be made.
#define VCZ_MISSING_MULTI_OR_SKIP(dir, path)               \
  vcztest::TempDir dir;                                    \
  const std::string path = spreadtest::missing_multi(dir); \
  if (path.empty()) GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools)"

/// Whether two outputs hold the same tokens, numbers equal to within @p rel of the row's largest
/// magnitude (doubles summed in another order: the matrix family's products across ranks).
inline ::testing::AssertionResult same_within(const std::string& a, const std::string& b,
                                              double rel) {
  std::istringstream ia(a), ib(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(ia, la)),
               gb = static_cast<bool>(std::getline(ib, lb));
    if (ga != gb) return ::testing::AssertionFailure() << "line counts differ at line " << line;
    if (!ga) return ::testing::AssertionSuccess();
    std::istringstream ta(la), tb(lb);
    std::vector<std::string> xa, xb;
    for (std::string t; ta >> t;) xa.push_back(t);
    for (std::string t; tb >> t;) xb.push_back(t);
    if (xa.size() != xb.size())
      return ::testing::AssertionFailure() << "line " << line << " fields differ";
    double scale = 0;
    for (const auto& t : xa) {
      char* end = nullptr;
      const double v = std::strtod(t.c_str(), &end);
      if (end && *end == 0 && !t.empty()) scale = std::max(scale, std::abs(v));
    }
    for (std::size_t i = 0; i < xa.size(); ++i) {
      if (xa[i] == xb[i]) continue;
      char *ea = nullptr, *eb = nullptr;
      const double va = std::strtod(xa[i].c_str(), &ea), vb = std::strtod(xb[i].c_str(), &eb);
      if (*ea || *eb || !(std::abs(va - vb) <= rel * scale))
        return ::testing::AssertionFailure()
               << "line " << line << " field " << i + 1 << ": " << xa[i] << " vs " << xb[i];
    }
  }
}

/// The files of a folder and their contents.
inline std::map<std::string, std::string> folder(const fs::path& d) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(d)) {
    std::ifstream f(e.path(), std::ios::binary);
    out[e.path().filename().string()] = std::string(std::istreambuf_iterator<char>(f), {});
  }
  return out;
}

/// The rank lines of -v: rank -> number of variants of its share.
inline std::map<int, long> rank_variants(const std::string& err) {
  std::map<int, long> out;
  const std::regex line(R"(vczstats: rank (\d+) \(.*\(([0-9]+) variants)");
  std::istringstream in(err);
  std::string l;
  std::smatch m;
  while (std::getline(in, l))
    if (std::regex_search(l, m, line)) out[std::stoi(m[1])] = std::stol(m[2]);
  return out;
}

/// Lines of @p err that vczstats printed (mpirun adds its own when a rank exits non-zero).
inline int vczstats_lines(const std::string& err) {
  std::istringstream in(err);
  int n = 0;
  for (std::string l; std::getline(in, l);) n += l.rfind("vczstats:", 0) == 0 ? 1 : 0;
  return n;
}

/// A phased store of 40 samples x 1,200 variants in two populations (phased.vcz and pops.tsv in
/// @p dir), cut in sample chunks of 15 and units of 37 variants: "STORE -P POPS
/// --max-unit-variants 37 " for the haplotype family's commands.
inline std::string phased_store(const vcztest::TempDir& dir) {
  const std::string store = (dir / "phased.vcz").string(), pops = (dir / "pops.tsv").string();
  vcztest::run_ok(plain() + "simulate " + shell_quote(store) +
                  " --seed 5 --samples 40 --variants 1200 --pops 2 --missing 0.01 "
                  "--variants-chunk-size 100 --samples-chunk-size 15 --pops-file " +
                  shell_quote(pops));
  return shell_quote(store) + " -P " + shell_quote(pops) + " --max-unit-variants 37 ";
}

/// A copy of the store @p path (bad.vcz in @p dir) whose last variant chunk's first sample chunk
/// is corrupt, so that the last share of a spread run reads it. (One chunk only: with several
/// corrupt ones, which is reported first depends on timing.)
inline fs::path corrupt_last_chunk(const vcztest::TempDir& dir, const std::string& path) {
  const fs::path bad = dir / "bad.vcz";
  fs::copy(path, bad, fs::copy_options::recursive);
  const auto store = vczstats::vcz::VczStore::open(bad);
  const std::int64_t last = store.genotypes().num_chunks(0) - 1;
  for (const auto& e : fs::directory_iterator(bad / "call_genotype"))
    if (e.path().filename().string().rfind(std::to_string(last) + ".0.", 0) == 0)
      std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "not a blosc chunk";
  return bad;
}

}  // namespace spreadtest
