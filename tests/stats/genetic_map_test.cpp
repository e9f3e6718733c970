// The genetic map reader (stats/haplo_rows.hpp, GeneticMap; ihs --map, ld --ld-wind-cm, ld-stats
// --r-bins --map): a hand-written HapMap-style table (header, chrom bp rate cM) and the same
// points as a plink .map, interpolated at positions whose cM are worked out by hand below, and
// malformed lines reported with the file and line.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "stats/haplo_rows.hpp"
#include "test_util.hpp"
#include "vczstats/error.hpp"

namespace {

using vczstats::stats::haplo::GeneticMap;
using vcztest::TempDir;

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

/// The UsageError's message of reading @p path as a map ("" when it reads).
std::string error_of(const std::string& path) {
  try {
    GeneticMap m(path);
  } catch (const vczstats::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(GeneticMap, HapMapTableInterpolatesAsItsPlinkMap) {
  TempDir dir;
  // chr1: 0.5 cM at 1,000 bp, 4.5 at 3,000 (2 cM/Mb), 8.5 at 11,000 (0.5 cM/Mb); chr2: 0 at 500,
  // 2 at 2,500 (1 cM/Mb). Rates as HapMap gives them (the interval from the row on; 0 last).
  const std::string hapmap = write(dir, "genetic_map_chr1.txt",
                                   "Chromosome\tPosition(bp)\tRate(cM/Mb)\tMap(cM)\r\n"
                                   "chr1\t1000\t2.0\t0.5\r\n"
                                   "chr1 3000  0.5 4.5\r\n"
                                   "\r\n"
                                   "chr1\t11000\t0\t8.5\r\n"
                                   "chr2\t500\t1\t0\n"
                                   "chr2\t2500\t0\t2\n");
  const std::string plink = write(dir, "m.map",
                                  "chr1 a 0.5 1000\nchr1 b 4.5 3000\nchr1 c 8.5 11000\n"
                                  "chr2 d 0 500\nchr2 e 2 2500\n");
  const GeneticMap h(hapmap), p(plink);
  struct Case {
    const char* contig;
    std::int64_t pos;
    double cm;  // by hand
  };
  for (const Case& c : {
           Case{"chr1", 1000, 0.5},  // the map's own points
           Case{"chr1", 3000, 4.5},
           Case{"chr1", 11000, 8.5},
           Case{"chr1", 2000, 2.5},   // 0.5 + 1,000 bp at 4 cM / 2,000 bp
           Case{"chr1", 7000, 6.5},   // 4.5 + 4,000 bp at 4 cM / 8,000 bp
           Case{"chr1", 500, -0.5},   // before the first: the first interval's rate, 0.5 - 1
           Case{"chr1", 12000, 9.0},  // after the last: the last interval's, 8.5 + 0.5
           Case{"1", 2000, 2.5},      // the store's "1" is the map's "chr1"
           Case{"chr2", 1000, 0.5},   // 0 + 500 bp at 1 cM/Mb
           Case{"2", 2500, 2.0},
       }) {
    SCOPED_TRACE(std::string(c.contig) + ":" + std::to_string(c.pos));
    EXPECT_DOUBLE_EQ(h.at(c.contig, c.pos), c.cm);
    EXPECT_EQ(h.at(c.contig, c.pos), p.at(c.contig, c.pos));
  }
  EXPECT_THROW(h.at("chr3", 10), vczstats::UsageError);
}

TEST(GeneticMap, OneRegionMapsServeTheOneContigARunReads) {
  TempDir dir;
  // 1 cM at 1,000 bp, 3 at 5,000 (0.5 cM/Mb), as moments.LD's `pos Map(cM)` and HapMap II's
  // three columns (the rate column read as text and not used).
  const std::string moments = write(dir, "region.map", "pos\tMap(cM)\n1000\t1\n5000\t3\n");
  const std::string hapmap2 =
      write(dir, "genetic_map_chr20_b36.txt",
            "position COMBINED_rate(cM/Mb) Genetic_Map(cM)\n1000 0.5 1\n5000 0 3\n");
  for (const std::string& path : {moments, hapmap2}) {
    SCOPED_TRACE(path);
    const GeneticMap m(path);
    EXPECT_DOUBLE_EQ(m.at("20", 3000), 2.0);  // 1 + 2,000 bp at 2 cM / 4,000 bp
    EXPECT_DOUBLE_EQ(m.at("20", 1000), 1.0);
    EXPECT_DOUBLE_EQ(m.at("20", 7000), 4.0);  // the last interval's rate
    try {
      (void)m.at("21", 3000);
      ADD_FAILURE() << "a second contig was served";
    } catch (const vczstats::UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path + ": the genetic map has no chromosome column"), std::string::npos)
          << what;
      EXPECT_NE(what.find("20 and 21"), std::string::npos) << what;
    }
  }
}

TEST(GeneticMap, MalformedLinesNameTheFileAndLine) {
  TempDir dir;
  const std::string header = "Chromosome Position(bp) Rate(cM/Mb) Map(cM)\n";
  struct Case {
    const char* name;
    std::string text;
    const char* line;
    const char* message;
  };
  for (const Case& c : {
           Case{"short.txt", header + "chr1 100 1 0.1\nchr1 200 0.2\n", "line 3", "4 columns"},
           Case{"long.txt", header + "chr1 100 1 0.1 x\n", "line 2", "4 columns"},
           Case{"rate.txt", header + "chr1 100 x 0.1\n", "line 2", "'x' is not a rate"},
           Case{"pos.txt", header + "chr1 100 1 0.1\nchr1 2e 1 0.2\n", "line 3",
                "not a genetic and a physical position"},
           Case{"cm.txt", header + "chr1 100 1 0.1cM\n", "line 2",
                "not a genetic and a physical position"},
           Case{"order.txt", header + "chr1 100 1 0.1\nchr1 90 1 0.2\n", "line 3",
                "does not follow"},
           Case{"decrease.txt", header + "chr1 100 1 0.3\nchr1 200 1 0.2\n", "line 3",
                "does not follow"},
           Case{"header.txt", "# a comment\nchrom pos rate cM_total\nchr1 1 1 0\n", "line 2",
                "neither HapMap's"},
           Case{"region.txt", "pos Map(cM)\n100 0\n200 0.1 x\n", "line 3",
                "expected 2 columns as the header"},
           Case{"plink.map", "1 a 0.1 100\n1 b 0.2\n", "line 2", "4 columns (chrom, id, cM, bp)"},
       }) {
    const std::string path = write(dir, c.name, c.text);
    const std::string e = error_of(path);
    EXPECT_NE(e.find(path + ": " + c.line + ": "), std::string::npos) << c.name << ": " << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << c.name << ": " << e;
  }
}

}  // namespace
