#pragma once
/// @file site_expression.hpp
/// @brief Site filter expressions (-i/--include, -e/--exclude): the common subset of bcftools'
/// expression language over a site's fixed fields, INFO fields and counts of the selected
/// samples' genotypes (docs/filters.md lists the terms and where they differ from bcftools).
///
/// An expression is parsed once (parse()), bound to a store's schema (bind(): the kinds of the
/// INFO fields it names and the store's filter names), then evaluated site by site on the
/// SiteFields a caller fills (keep()). It is immutable once bound and evaluates without
/// allocating, so one object may be shared by threads.

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vczstats {

/// @brief The values of one INFO field at one site: numbers (NaN for a missing element; flags
/// 0 or 1) or strings ("." missing, "" padding).
struct InfoValues {
  std::span<const double> numbers;
  std::span<const std::string> strings;
};

/// @brief The fields of one site an expression reads (what SiteExpression::needs() lists).
struct SiteFields {
  std::string_view chrom;
  std::int64_t pos = 0;
  std::string_view id = ".";
  std::span<const std::string> alleles;  ///< REF, then the ALTs (REF alone: no ALT)
  double qual = std::numeric_limits<double>::quiet_NaN();  ///< NaN: missing
  std::span<const std::uint8_t> filters;  ///< a flag per bound filter name (none set: ".")
  std::span<const InfoValues> info;       ///< in the order of SiteExpression::Needs::info
  /// Counts over the selected samples: copies of each allele among the called alleles (index
  /// = allele), genotypes (missing ones included) and missing genotypes (any allele missing).
  std::span<const std::int32_t> allele_counts;
  std::int64_t genotypes = 0;
  std::int64_t missing = 0;
};

/// @brief What a store offers an expression (SiteExpression::bind).
struct SiteSchema {
  enum class Kind { Integer, Float, Flag, String };
  std::vector<Kind> info;            ///< the kind of each Needs::info field
  std::vector<std::string> filters;  ///< the store's filter names (filter_id), in column order
};

/// @brief One node of a parsed expression (internal to SiteExpression; plain data).
struct SiteExpressionNode {
  enum class Op { And, Or, Not, Compare, Bare, Const };
  /// What an operand is: a literal, a fixed field, a count or an INFO field.
  enum class Term {
    Number,
    String,
    Qual,
    Pos,
    Chrom,
    Id,
    Ref,
    Alt,
    NAlt,
    Type,
    Filter,
    AC,
    AN,
    AF,
    MAF,
    MAC,
    FMissing,
    NMissing,
    Info,
    FmtGq,  ///< FMT/GQ: a genotype mask (SiteExpression::genotype_mask), never evaluated
    FmtDp   ///< FMT/DP: likewise
  };
  enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge, Match, NoMatch };
  struct Operand {
    Term term = Term::Number;
    int info = -1;             ///< Term::Info: index into Needs::info
    int index = -1;            ///< NAME[i] (-1: every element, as NAME and NAME[*])
    double number = 0;         ///< Term::Number
    std::string text;          ///< Term::String; the name as written otherwise
    std::size_t position = 0;  ///< where it starts in the text (0-based)
    bool float32 = false;      ///< a single-precision value: compared as bcftools does
    bool is_text = false;      ///< a text value (set for INFO fields by bind())
  };
  Op op = Op::Compare;
  int a = -1, b = -1;   ///< children (And, Or: both; Not: a)
  Operand left, right;  ///< Compare (right unused by Bare)
  Cmp cmp = Cmp::Eq;
  std::size_t position = 0;  ///< of the operator
  unsigned type_mask = 0;    ///< TYPE compared with a literal: the types it names
  int filter_set = -1;       ///< FILTER compared with a literal: index of its name set
  bool value = false;        ///< Const: its value (what an FMT/GQ or FMT/DP condition became)
};

/// @brief A parsed -i/-e expression.
class SiteExpression {
 public:
  /// @brief What evaluating the expression reads.
  struct Needs {
    bool chrom = false, pos = false, id = false, alleles = false, qual = false, filters = false;
    bool counts = false;            ///< AC, AN, AF, MAF, MAC, F_MISSING, N_MISSING
    std::vector<std::string> info;  ///< INFO fields by name (variant_<NAME>), each once
  };

  /// @brief The genotype masks an expression's FMT terms ask for: a genotype whose GQ (DP) is
  /// present and below min_gq (min_dp) counts as missing, as --min-gq/--min-dp (0: no mask).
  struct GenotypeMask {
    int min_gq = 0;
    int min_dp = 0;
  };

  /// @brief Parse @p text, the value of -e (@p exclude) or -i. @throws UsageError
  /// "-i 'TEXT': position N: reason" (N counts characters from 1).
  static SiteExpression parse(std::string_view text, bool exclude = false);

  const std::string& text() const { return text_; }
  bool exclude() const { return exclude_; }
  /// @brief "-i 'TEXT'" or "-e 'TEXT'", as messages name it.
  std::string describe() const;
  const Needs& needs() const { return needs_; }
  /// @brief The masks of the FMT/GQ and FMT/DP conditions. Each must be joined to the rest by
  /// && in -i (as FMT/GQ>=N) or by || in -e (as FMT/GQ<N), bcftools' `+setGT -n . -i
  /// 'FMT/GQ<N'`: it masks genotypes and decides nothing about sites.
  const GenotypeMask& genotype_mask() const { return mask_; }
  /// @brief Whether anything but FMT conditions remains, i.e. the expression chooses sites.
  bool selects_sites() const;

  /// @brief Check the expression against a store: the kinds of its INFO fields (comparisons of
  /// numbers with numbers and strings with strings; bare names are flags) and the FILTER names it
  /// names. @throws UsageError naming the expression, the position and the reason.
  void bind(const SiteSchema& schema);

  /// @brief Whether a site passes: the expression is true (-i) or not true (-e). Call bind()
  /// first.
  bool keep(const SiteFields& site) const;

 private:
  using Node = SiteExpressionNode;
  std::string text_;
  bool exclude_ = false;
  bool bound_ = false;
  Needs needs_;
  GenotypeMask mask_;
  std::vector<Node> nodes_;
  int root_ = -1;
  /// FILTER literals: each a set of names ("." or "PASS;q10"), and after bind() the columns of
  /// the store's filters they name (a name the store lacks: -1, never set)
  std::vector<std::vector<std::string>> filter_sets_;
  std::vector<std::vector<std::int64_t>> filter_columns_;
  [[noreturn]] void fail(std::size_t position, const std::string& why) const;
  bool eval(int node, const SiteFields& site) const;
  bool compare(const Node& n, const SiteFields& site) const;
  void take_genotype_masks();
  friend class SiteExpressionParser;
};

}  // namespace vczstats
