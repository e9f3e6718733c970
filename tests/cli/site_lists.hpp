#pragma once
// The sites a filter keeps, as sets of CHROM:POS: vczstats' (the rows of `freq`) and bcftools'
// (`view -H`), for the filter reference tests.

#include <set>
#include <sstream>
#include <string>

#include "test_util.hpp"

namespace vcztest {

/// The non-empty lines of @p text.
inline std::set<std::string> line_set(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.insert(l);
  return out;
}

/// CHROM:POS of the sites `vczstats freq STORE ARGS` reports on the CPU (positions are unique
/// per contig in the test stores).
inline std::set<std::string> freq_sites(const std::string& store, const std::string& args) {
  return line_set(run_ok(binary() + " freq " + shell_quote(store) + " " + args +
                         " --device cpu -t 2 | awk -F'\\t' 'NR>1{print $1\":\"$2}'"));
}

/// CHROM:POS of the records `bcftools view -H ARGS VCF` writes.
inline std::set<std::string> bcftools_sites(const std::string& vcf, const std::string& args) {
  return line_set(run_ok("bcftools view -H " + args + " " + shell_quote(vcf) +
                         " 2>/dev/null | awk -F'\\t' '{print $1\":\"$2}'"));
}

}  // namespace vcztest
