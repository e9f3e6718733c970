#include "help.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

namespace vczstats::cli {

namespace {

// The paths scripts/make-default-data.sh and scripts/run-default.sh write: 1000 Genomes EUR
// chr20:1-4 Mb, 503 samples (their HG... and NA... sample series as two populations).
#define VCZ_STORE ".data/1kg_chr20.vcz"
#define VCZ_POPS " -P .data/1kg_chr20.pops.tsv"
// Its 297 samples with phased calls (HG00... and HG01/HG02...), for the haplotype statistics.
#define VCZ_PHASED " -P .data/1kg_chr20.phased.pops.tsv"

struct CommandHelp {
  const char* name;
  const char* group;
  const char* summary;   // one line of the top-level help
  const char* examples;  // lines of the command's Examples section, each a runnable command
};

constexpr const char* kStores = "Stores";
constexpr const char* kSites = "Sites and samples";
constexpr const char* kDiversity = "Diversity and divergence";
constexpr const char* kHaplotypes = "Haplotypes and selection scans";
constexpr const char* kMatrices = "LD, relatedness and PCA";

// Every command, with the examples its --help ends with. A test runs every example line on a
// stand-in for the default data set, so keep them runnable there (contig 20, 1-4 Mb).
const CommandHelp kCommands[] = {
    {"info", kStores, "Describe a store: samples, variants, arrays, chunks, codecs",
     "vczstats info " VCZ_STORE "\n"
     "vczstats info " VCZ_STORE " --format json -o info.json"},
    {"convert", kStores, "Convert a VCF/BCF (or ms/scrm output) into a VCF Zarr store",
     "vczstats convert .data/1kg_chr20.vcf.gz 1kg_chr20.vcz.zip -v\n"
     "vczstats convert .data/1kg_chr20.vcf.gz 1kg_chr20.v3.vcz --zarr-format 3 -f"},
    {"simulate", kStores, "Simulate a cohort into a VCF Zarr store",
     "vczstats simulate cohort.vcz --samples 1000 --variants 10000 -f\n"
     "vczstats simulate pops.vcz.zip --samples 300 --length 1000000 --pops 3 --fst 0.05 "
     "--pops-file pops.tsv -f"},
    {"recompress", kStores, "Rechunk and re-encode a store (codec, chunks, Zarr v2/v3)",
     "vczstats recompress " VCZ_STORE " 1kg_chr20.lz4.vcz --codec blosc-lz4 --verify -f\n"
     "vczstats recompress " VCZ_STORE " 1kg_chr20.v3.vcz.zip --zarr-format 3 -f"},
    {"afdist", kSites, "Genotype probabilities by allele frequency (bcftools afdist)",
     "vczstats afdist " VCZ_STORE " -v\n"
     "vczstats afdist " VCZ_STORE " -r 20:1000000-2000000 --bins 20 -o afdist.tsv"},
    {"freq", kSites, "Allele counts and frequencies per site (plink2 --freq)",
     "vczstats freq " VCZ_STORE VCZ_POPS " -o freq.tsv\n"
     "vczstats freq " VCZ_STORE " -r 20:1000000-1100000 --format json\n"
     "vczstats freq " VCZ_STORE " -i 'TYPE=\"snp\" && MAF>0.05 && F_MISSING<0.05' -o common.tsv"},
    {"geno-counts", kSites, "Genotype counts per site (plink2 --geno-counts)",
     "vczstats geno-counts " VCZ_STORE VCZ_POPS "\n"
     "vczstats geno-counts " VCZ_STORE " -s HG00096,HG00097 -r 20:1000000-1100000"},
    {"hardy", kSites, "Hardy-Weinberg exact test per site (plink2 --hardy)",
     "vczstats hardy " VCZ_STORE VCZ_POPS " -o hardy.tsv"},
    {"missing", kSites, "Missing genotypes per site (plink2 --missing .vmiss)",
     "vczstats missing " VCZ_STORE VCZ_POPS},
    {"sample-stats", kSites, "Missingness and heterozygosity per sample (plink2 --het)",
     "vczstats sample-stats " VCZ_STORE VCZ_POPS " -o samples.tsv"},
    {"diversity", kDiversity, "pi, Watterson's theta, Tajima's D and more, per window",
     "vczstats diversity " VCZ_STORE VCZ_POPS " --window-size 100000\n"
     "vczstats diversity " VCZ_STORE " --window-variants 1000"},
    {"divergence", kDiversity, "dxy, da, Hudson and Weir & Cockerham Fst, Gst per window",
     "vczstats divergence " VCZ_STORE VCZ_POPS " --window-size 500000\n"
     "vczstats divergence " VCZ_STORE VCZ_POPS " --pairs FIN,GBR -o fst.tsv"},
    {"stats", kDiversity, "Several window statistics in one pass (long format)",
     "vczstats stats " VCZ_STORE VCZ_POPS
     " --window-size 500000 --stats pi,tajima_d,dxy,fst_hudson"},
    {"sfs", kDiversity, "Site frequency spectrum per population (or joint)",
     "vczstats sfs " VCZ_STORE VCZ_POPS " --folded\n"
     "vczstats sfs " VCZ_STORE VCZ_POPS " --project-preview\n"
     "vczstats sfs " VCZ_STORE VCZ_POPS " --project 20 --joint FIN,GBR --format fs -o fin_gbr.fs"},
    {"fstats", kDiversity, "Patterson's f2, f3 and D with block-jackknife errors",
     "vczstats fstats " VCZ_STORE VCZ_POPS " --f2 FIN,GBR --blocks 500"},
    {"haplotypes", kHaplotypes, "Haplotype diversity and Garud's H per window",
     "vczstats haplotypes " VCZ_STORE VCZ_PHASED " --window-variants 400"},
    {"ehh", kHaplotypes, "EHH decay around focal sites (selscan --ehh)",
     "vczstats ehh " VCZ_STORE VCZ_PHASED " --focal 20:1200125 --ehh-window 200000"},
    {"ihs", kHaplotypes, "Standardised iHS per site (selscan --ihs)",
     "vczstats ihs " VCZ_STORE VCZ_PHASED
     " -o ihs.tsv --windows-output ihs-windows.tsv --window-size 100000"},
    {"nsl", kHaplotypes, "Standardised nSL per site (selscan --nsl)",
     "vczstats nsl " VCZ_STORE VCZ_PHASED " -o nsl.tsv"},
    {"xpehh", kHaplotypes, "Standardised XP-EHH per site and population pair",
     "vczstats xpehh " VCZ_STORE VCZ_PHASED " --pairs FIN,GBR -o xpehh.tsv"},
    {"xpnsl", kHaplotypes, "Standardised XP-nSL per site and population pair",
     "vczstats xpnsl " VCZ_STORE VCZ_PHASED " --pairs FIN,GBR -o xpnsl.tsv"},
    {"ld", kMatrices, "r2 (and D') of nearby variants (plink --r2), LD decay, LD scores",
     "vczstats ld " VCZ_STORE " --r2 --ld-window 10 --ld-window-kb 100 --ld-window-r2 0.2 "
     "-o pairs.ld\n"
     "vczstats ld " VCZ_STORE VCZ_POPS " --decay 0:100kb:1kb --window-size 5Mb -o decay.tsv\n"
     "vczstats ld " VCZ_STORE " --ld-scores --ld-wind-kb 1000 -o chr20.l2.tsv"},
    {"ld-stats", kMatrices, "moments.LD's D^2, Dz, pi2 and H in bp-distance bins",
     "vczstats ld-stats " VCZ_STORE VCZ_PHASED " --pop FIN --bp-bins 0,1kb,10kb,100kb -o ld.tsv\n"
     "vczstats ld-stats " VCZ_STORE VCZ_POPS " --pop GBR,FIN --genotypes --bp-bins 0,1kb,10kb "
     "-o ld-genotypes.tsv"},
    {"prune", kMatrices, "LD pruning (plink --indep-pairwise)",
     "vczstats prune " VCZ_STORE " --indep-pairwise 50 5 0.2 --out cohort"},
    {"grm", kMatrices, "Genomic relationship matrix (plink2 --make-rel)",
     "vczstats grm " VCZ_STORE " --maf 0.01 -o cohort.rel"},
    {"king", kMatrices, "KING-robust kinship (plink2 --make-king)",
     "vczstats king " VCZ_STORE " --table --table-filter 0.0884 -o related.kin0"},
    {"distance", kMatrices, "Distances between samples (plink --distance)",
     "vczstats distance " VCZ_STORE " --metric 1-ibs --shape square -o cohort.mdist"},
    {"pca", kMatrices, "Principal components of the samples (plink2 --pca)",
     "vczstats pca " VCZ_STORE " -k 10 --eigenvalues pcs.eigenval --loadings pcs.wts -o "
     "pcs.eigenvec"},
};

// Words users type for a statistic that is a column of another command. They get a "did you
// mean", not an alias: each of these commands computes more than the word names (divergence's
// table has dxy, da and Gst besides Fst), and one name per statistic keeps scripts, the Python
// package and the docs agreeing.
struct Hint {
  const char* word;
  const char* command;
  const char* why;
};
const Hint kHints[] = {
    {"fst", "divergence", "Hudson and Weir & Cockerham Fst are columns of divergence"},
    {"pi", "diversity", "pi is a column of diversity"},
    {"theta", "diversity", "Watterson's theta is a column of diversity"},
    {"tajima", "diversity", "Tajima's D is a column of diversity"},
    {"tajimas-d", "diversity", "Tajima's D is a column of diversity"},
    {"tajima-d", "diversity", "Tajima's D is a column of diversity"},
    {"tajimas_d", "diversity", "Tajima's D is a column of diversity"},
    {"tajima_d", "diversity", "Tajima's D is a column of diversity"},
    {"dxy", "divergence", "dxy is a column of divergence"},
    {"maf", "freq", "allele frequencies come from freq; --maf is a filter option"},
    {"hwe", "hardy", "hardy tests Hardy-Weinberg equilibrium"},
    {"het", "sample-stats", "sample-stats reports heterozygosity per sample"},
    {"r2", "ld", "ld reports r2 between variants"},
};

const CommandHelp* find_help(const std::string& name) {
  for (const auto& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

std::string examples_footer(const char* examples) {
  std::string out = "Examples:";
  std::istringstream lines(examples);
  for (std::string line; std::getline(lines, line);) out += "\n  " + line;
  return out;
}

class HelpFormatter : public CLI::Formatter {
 public:
  // "--progress,--no-progress{false}": CLI11 shows the value a negated flag stores; users
  // need only the names.
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    if (is_positional) return name;
    std::string out;
    int depth = 0;
    for (char c : name) {
      if (c == '{')
        ++depth;
      else if (c == '}')
        depth = std::max(0, depth - 1);
      else if (depth == 0)
        out += c;
    }
    return out;
  }

  // The top-level usage is the one line of README ("vczstats <command> STORE [options]");
  // CLI11's "[OPTIONS] SUBCOMMAND" adds a second, less helpful one.
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (app->get_parent() == nullptr) return "Usage: vczstats <command> STORE [options]\n";
    // "build/vczstats ihs" as the user typed it: "vczstats ihs", as in the examples.
    const auto space = name.find(' ');
    if (space != std::string::npos) name = "vczstats" + name.substr(space);
    return CLI::Formatter::make_usage(app, std::move(name));
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    const CommandHelp* h = find_help(sub->get_name());
    std::string summary = h ? h->summary : sub->get_description();
    summary = summary.substr(0, summary.find(". "));
    return fmt::format("  {:<14}{}\n", sub->get_name(), summary);
  }
};

// Damerau-Levenshtein distance (optimal string alignment): an adjacent transposition costs 1.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Every name an option is given by on the command line: -x, --name, --no-name.
std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : cmd.get_options()) {
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& f : opt->get_fnames())
      if (f.rfind("--", 0) == 0 || f.rfind("-", 0) == 0) names.push_back(f);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() {
  return std::make_shared<HelpFormatter>();
}

void set_up_help(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({})) {
    // A command missing from kCommands keeps CLI11's layout (a test fails on it).
    const CommandHelp* h = find_help(sub->get_name());
    if (!h) continue;
    sub->group(h->group);
    sub->footer(examples_footer(h->examples));
  }
  app.footer(
      "Run `vczstats <command> --help` for a command's options and examples. The examples "
      "use the default data set scripts/run-default.sh writes in .data/.\n\n" +
      examples_footer("vczstats info " VCZ_STORE "\n"
                      "vczstats afdist " VCZ_STORE " -v\n"
                      "vczstats diversity " VCZ_STORE VCZ_POPS " --window-size 100000"));
}

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  auto bare = [](const std::string& s) {
    const auto first = s.find_first_not_of('-');
    return first == std::string::npos ? std::string() : lower(s.substr(first));
  };
  const std::string w = bare(word);
  if (w.empty()) return "";
  // A misspelling: at most 1 edit for short words, 2 from 5 letters, 3 from 12.
  const std::size_t limit = w.size() < 5 ? 1 : w.size() < 12 ? 2 : 3;
  std::string best;
  std::size_t best_d = limit + 1;
  bool tie = false;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(w, bare(c));
    if (d < best_d) {
      best_d = d;
      best = c;
      tie = false;
    } else if (d == best_d && bare(c) != bare(best)) {
      tie = true;
    }
  }
  if (!best.empty() && !tie) return best;
  // An abbreviation of exactly one name (3 letters or more).
  if (w.size() >= 3) {
    std::string only;
    int count = 0;
    for (const auto& c : candidates)
      if (bare(c).rfind(w, 0) == 0 && (word.rfind("--", 0) != 0 || c.rfind("--", 0) == 0)) {
        only = c;
        ++count;
      }
    if (count == 1) return only;
  }
  return "";
}

std::string unknown_command_message(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(word)) return "";
    names.push_back(sub->get_name());
  }
  if (word == "help")
    return "help is not a command: `vczstats --help` lists the commands, `vczstats <command> "
           "--help` shows one";
  for (const auto& h : kHints)
    if (lower(word) == h.word)
      return fmt::format("{} is not a command ({}); did you mean `vczstats {}`?", word, h.why,
                         h.command);
  const std::string close = closest_name(word, names);
  if (!close.empty())
    return fmt::format(
        "{} is not a command; did you mean {}? (`vczstats --help` lists the "
        "commands)",
        word, close);
  return fmt::format("{} is not a command (`vczstats --help` lists the commands)", word);
}

std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e) {
  // The command being parsed (the last one selected), if any.
  const CLI::App* cmd = &app;
  for (const CLI::App* sub : app.get_subcommands()) cmd = sub;
  const bool top = cmd == &app;
  const std::string where = top ? "" : cmd->get_name() + ": ";
  const std::string help =
      top ? "see `vczstats --help`" : "see `vczstats " + cmd->get_name() + " --help`";
  std::vector<std::string> args;  // the arguments CLI11 did not expect
  if (top && std::string(e.what()) == "A subcommand is required") {
    args = app.remaining(false);  // e.g. vczstats --frobnicate
    if (args.empty()) return "no command given; `vczstats --help` lists the commands";
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    // "The following argument(s) was/were not expected: A B"
    std::string text = e.what();
    const auto colon = text.find(": ");
    std::istringstream words(colon == std::string::npos ? "" : text.substr(colon + 2));
    for (std::string w; words >> w;) args.push_back(w);
    std::reverse(args.begin(), args.end());  // CLI11 lists them last first
  }
  if (!args.empty()) {
    const auto names = option_names(*cmd);
    std::vector<std::string> parts;
    bool value_next = false;  // the word after an unknown option is taken as its value
    for (const auto& a : args) {
      if (a.size() > 1 && a[0] == '-') {
        const std::string name = a.substr(0, a.find('='));
        const std::string close = closest_name(name, names);
        parts.push_back(close.empty()
                            ? "unknown option " + name
                            : fmt::format("unknown option {}; did you mean {}?", name, close));
        value_next = a.find('=') == std::string::npos;
      } else if (value_next) {
        value_next = false;
      } else {
        parts.push_back("unexpected argument " + a);
      }
    }
    if (!parts.empty()) {
      std::string joined;
      for (const auto& p : parts) joined += (joined.empty() ? "" : "; ") + p;
      return fmt::format("{}{} ({})", where, joined, help);
    }
  }
  return fmt::format("{}{} ({})", where, one_line(e.what()), help);
}

}  // namespace vczstats::cli
