// Ancestral alleles: REF, variant_AA, or an ancestral FASTA (one contig held in memory at a
// time; the file is indexed by one scan of its headers).

#include "vczstats/ancestral.hpp"

#include <algorithm>
#include <cctype>

#include "vczstats/error.hpp"

namespace vczstats::vcz {
namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

int match(const VariantBlock& b, std::int64_t r, const std::string& ancestral) {
  if (ancestral.empty() || ancestral == "N" || ancestral == "-" || ancestral == ".") return -1;
  const int n = b.num_alleles(r);
  for (int k = 0; k < n; ++k)
    if (upper(b.allele(r, k)) == ancestral) return k;
  return -1;
}

}  // namespace

struct AncestralAlleles::Fasta {
  std::filesystem::path path;
  std::ifstream in;
  std::map<std::string, std::streamoff> offsets;  // contig → offset of its first sequence line
  std::string loaded_name;
  std::string sequence;

  explicit Fasta(const std::filesystem::path& p) : path(p), in(p, std::ios::binary) {
    if (!in) throw IoError(p.string() + ": cannot open the ancestral FASTA");
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] == '>') {
        std::string name = line.substr(1);
        name = name.substr(0, name.find_first_of(" \t\r"));
        offsets[name] = in.tellg();
      }
    }
    if (offsets.empty()) throw FormatError(p.string() + ": no '>' header: not a FASTA file");
    in.clear();
  }

  /// Base at 1-based @p pos of @p contig, uppercased, or "" when absent.
  std::string base(const std::string& contig, std::int64_t pos) {
    if (contig != loaded_name) {
      loaded_name = contig;
      sequence.clear();
      auto it = offsets.find(contig);
      if (it != offsets.end()) {
        in.clear();
        in.seekg(it->second);
        std::string line;
        while (std::getline(in, line) && (line.empty() || line[0] != '>')) {
          if (!line.empty() && line.back() == '\r') line.pop_back();
          sequence += line;
        }
      }
    }
    if (pos < 1 || pos > static_cast<std::int64_t>(sequence.size())) return "";
    return std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(
                              sequence[static_cast<std::size_t>(pos - 1)]))));
  }
};

AncestralAlleles::AncestralAlleles(const VczStore& store, const std::string& spec)
    : store_(store), spec_(spec) {
  if (spec.empty() || spec == "ref") {
    kind_ = Kind::Ref;
  } else if (spec == "aa") {
    kind_ = Kind::Aa;
    aa_ = store.variant_array("variant_AA", 1, ElementKind::String);
    if (!aa_)
      throw UsageError("--ancestral aa: " + store.path() +
                       " has no variant_AA array (INFO/AA); give an ancestral FASTA instead");
  } else {
    kind_ = Kind::Fasta;
    fasta_ = std::make_unique<Fasta>(spec);
  }
}

AncestralAlleles::~AncestralAlleles() = default;

std::string AncestralAlleles::describe(const std::string& spec) {
  if (spec.empty() || spec == "ref") return "ancestral allele: REF (no --ancestral given)";
  if (spec == "aa")
    return "ancestral allele: variant_AA (INFO/AA); sites without one are left out of "
           "unfolded statistics";
  return "ancestral allele: the base of " + spec +
         " at POS; sites without a matching single-base allele are left out of unfolded "
         "statistics";
}

std::vector<int> AncestralAlleles::indices(const VariantBlock& b) {
  std::vector<int> out(static_cast<std::size_t>(b.size()), 0);
  if (kind_ == Kind::Ref) return out;
  if (kind_ == Kind::Aa) {
    const std::vector<std::int64_t> s{b.begin}, e{b.end};
    const auto values = aa_->read_region_strings(s, e);
    for (std::int64_t r = 0; r < b.size(); ++r) {
      std::string v = values[static_cast<std::size_t>(r)];
      v = upper(v.substr(0, v.find('|')));
      out[static_cast<std::size_t>(r)] = match(b, r, v);
    }
    return out;
  }
  for (std::int64_t r = 0; r < b.size(); ++r) {
    const auto& contig =
        store_.contig_ids()[static_cast<std::size_t>(b.contig[static_cast<std::size_t>(r)])];
    out[static_cast<std::size_t>(r)] =
        match(b, r, fasta_->base(contig, b.position[static_cast<std::size_t>(r)]));
  }
  return out;
}

}  // namespace vczstats::vcz
