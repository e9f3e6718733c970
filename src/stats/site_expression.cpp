// Site filter expressions (vczstats/site_expression.hpp): a recursive-descent parser of the
// common subset of bcftools' expression language, the checks against a store's schema, and the
// evaluation of one site. Values are lists (per-ALT counts, INFO arrays) compared with
// bcftools' any-element rule; a missing value fails every comparison but != (bcftools 1.16).

#include "vczstats/site_expression.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "vczstats/error.hpp"

namespace vczstats {

namespace {

using Node = SiteExpressionNode;
using Term = Node::Term;
using Cmp = Node::Cmp;

// TYPE bits (a site's type is the union over its ALTs; no bit: "ref").
enum : unsigned { kSnp = 1, kMnp = 2, kIndel = 4, kOther = 8, kBnd = 16, kOverlap = 32 };

struct TypeName {
  const char* name;
  unsigned bits;
};
constexpr TypeName kTypes[] = {{"ref", 0},           {"snp", kSnp},     {"mnp", kMnp},
                               {"indel", kIndel},    {"other", kOther}, {"bnd", kBnd},
                               {"overlap", kOverlap}};

char upper(char c) {
  return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
}

bool equal_nocase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (upper(a[i]) != upper(b[i])) return false;
  return true;
}

// The type of one ALT against REF, as bcftools' TYPE: after the common prefix and suffix, one
// base each is a SNP, equal lengths an MNP, one side empty an indel, anything else "other".
unsigned allele_type(std::string_view ref, std::string_view alt) {
  if (alt.empty() || alt == "." || alt == "<*>" || alt == "<NON_REF>" || alt == "<X>") return 0;
  if (alt == "*") return kOverlap;
  if (alt.front() == '[' || alt.front() == ']') return kBnd;  // joined before: ]p]t, [p[t
  if (alt.front() == '<') return kOther;
  std::size_t i = 0;
  while (i < ref.size() && i < alt.size() && upper(ref[i]) == upper(alt[i])) ++i;
  if (i == ref.size() && i == alt.size()) return 0;
  if (i == ref.size()) return alt[i] == '[' || alt[i] == ']' ? kBnd : kIndel;  // t[p[, t]p]
  if (i == alt.size()) return kIndel;
  std::size_t j = 0;
  while (ref.size() - j > i && alt.size() - j > i &&
         upper(ref[ref.size() - 1 - j]) == upper(alt[alt.size() - 1 - j]))
    ++j;
  const std::size_t r = ref.size() - i - j, a = alt.size() - i - j;
  if (r == 0 || a == 0) return kIndel;
  if (r == 1 && a == 1) return kSnp;
  return r == a ? kMnp : kOther;
}

bool numeric_term(Term t) {
  switch (t) {
    case Term::Number:
    case Term::Qual:
    case Term::Pos:
    case Term::NAlt:
    case Term::AC:
    case Term::AN:
    case Term::AF:
    case Term::MAF:
    case Term::MAC:
    case Term::FMissing:
    case Term::NMissing:
    case Term::FmtGq:
    case Term::FmtDp:
      return true;
    default:
      return false;
  }
}

bool fmt_term(Term t) {
  return t == Term::FmtGq || t == Term::FmtDp;
}

bool string_term(Term t) {
  return t == Term::String || t == Term::Chrom || t == Term::Id || t == Term::Ref || t == Term::Alt;
}

bool literal(Term t) {
  return t == Term::Number || t == Term::String;
}

bool per_allele(Term t) {
  return t == Term::Alt || t == Term::AC || t == Term::AF || t == Term::MAF || t == Term::MAC ||
         t == Term::Info;
}

Cmp mirrored(Cmp c) {
  switch (c) {
    case Cmp::Lt:
      return Cmp::Gt;
    case Cmp::Le:
      return Cmp::Ge;
    case Cmp::Gt:
      return Cmp::Lt;
    case Cmp::Ge:
      return Cmp::Le;
    default:
      return c;
  }
}

const char* cmp_text(Cmp c) {
  switch (c) {
    case Cmp::Eq:
      return "=";
    case Cmp::Ne:
      return "!=";
    case Cmp::Lt:
      return "<";
    case Cmp::Le:
      return "<=";
    case Cmp::Gt:
      return ">";
    case Cmp::Ge:
      return ">=";
    case Cmp::Match:
      return "~";
    case Cmp::NoMatch:
      return "!~";
  }
  return "?";
}

// Names of the fixed fields and counts (an other name is an INFO field).
struct Builtin {
  const char* name;
  Term term;
  bool float32;
};
constexpr Builtin kBuiltins[] = {
    {"QUAL", Term::Qual, true},
    {"POS", Term::Pos, false},
    {"CHROM", Term::Chrom, false},
    {"ID", Term::Id, false},
    {"REF", Term::Ref, false},
    {"ALT", Term::Alt, false},
    {"N_ALT", Term::NAlt, false},
    {"TYPE", Term::Type, false},
    {"FILTER", Term::Filter, false},
    {"AC", Term::AC, false},
    {"AN", Term::AN, false},
    {"AF", Term::AF, true},
    {"MAF", Term::MAF, true},
    {"MAC", Term::MAC, false},
    {"F_MISSING", Term::FMissing, true},
    {"N_MISSING", Term::NMissing, false},
};

constexpr int kMaxDepth = 200;

}  // namespace

// ---- parser ----------------------------------------------------------------------------------

class SiteExpressionParser {
 public:
  SiteExpressionParser(SiteExpression& e) : e_(e), s_(e.text_) {}

  void run() {
    skip_space();
    if (at_end()) e_.fail(0, "empty expression");
    e_.root_ = parse_or(0);
    skip_space();
    if (!at_end()) unexpected();
    e_.take_genotype_masks();
  }

 private:
  SiteExpression& e_;
  const std::string& s_;
  std::size_t p_ = 0;

  bool at_end() const { return p_ >= s_.size(); }
  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
  }
  [[noreturn]] void unexpected() {
    if (at_end()) e_.fail(p_, "unexpected end of the expression");
    const unsigned char c = static_cast<unsigned char>(s_[p_]);
    if (std::isprint(c)) e_.fail(p_, fmt::format("unexpected '{}'", s_[p_]));
    e_.fail(p_, fmt::format("unexpected byte 0x{:02x}", static_cast<unsigned>(c)));
  }
  bool eat(std::string_view token) {
    skip_space();
    if (s_.compare(p_, token.size(), token) != 0) return false;
    p_ += token.size();
    return true;
  }
  int add(Node n) {
    e_.nodes_.push_back(std::move(n));
    return static_cast<int>(e_.nodes_.size()) - 1;
  }

  // a || b (bcftools' | too) over a && b (&): left-associative, && binding tighter.
  int parse_or(int depth) { return parse_binary(depth, true); }
  int parse_binary(int depth, bool or_level) {
    auto operand = [&] { return or_level ? parse_binary(depth, false) : parse_unary(depth); };
    int left = operand();
    const std::string_view two = or_level ? "||" : "&&", one = or_level ? "|" : "&";
    while (true) {
      skip_space();
      const std::size_t at = p_;
      if (!(eat(two) || eat(one))) return left;
      Node n;
      n.op = or_level ? Node::Op::Or : Node::Op::And;
      n.a = left;
      n.b = operand();
      n.position = at;
      left = add(std::move(n));
    }
  }
  int parse_unary(int depth) {
    if (depth > kMaxDepth) e_.fail(p_, fmt::format("nested deeper than {} levels", kMaxDepth));
    skip_space();
    const std::size_t at = p_;
    if (!at_end() && s_[p_] == '!' &&
        (p_ + 1 >= s_.size() || (s_[p_ + 1] != '=' && s_[p_ + 1] != '~'))) {
      ++p_;
      Node n;
      n.op = Node::Op::Not;
      n.a = parse_unary(depth + 1);
      n.position = at;
      return add(std::move(n));
    }
    if (eat("(")) {
      const int inner = parse_or(depth + 1);
      skip_space();
      if (!eat(")")) {
        if (at_end()) e_.fail(p_, fmt::format("missing ')' for the '(' at position {}", at + 1));
        unexpected();
      }
      return inner;
    }
    return parse_comparison();
  }

  std::optional<Cmp> comparison_operator() {
    skip_space();
    if (eat("==")) return Cmp::Eq;
    if (eat("!=")) return Cmp::Ne;
    if (eat("!~")) return Cmp::NoMatch;
    if (eat("<=")) return Cmp::Le;
    if (eat(">=")) return Cmp::Ge;
    if (eat("=")) return Cmp::Eq;
    if (eat("<")) return Cmp::Lt;
    if (eat(">")) return Cmp::Gt;
    if (eat("~")) return Cmp::Match;
    return std::nullopt;
  }

  int parse_comparison() {
    Node n;
    n.left = parse_operand();
    skip_space();
    n.position = p_;
    const auto cmp = comparison_operator();
    if (!cmp) {
      n.op = Node::Op::Bare;
      check_bare(n.left);
      return add(std::move(n));
    }
    n.cmp = *cmp;
    n.right = parse_operand();
    check_comparison(n);
    return add(std::move(n));
  }

  static bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  }

  Node::Operand parse_operand() {
    Node::Operand o = parse_term();
    o.is_text = string_term(o.term);
    return o;
  }

  Node::Operand parse_term() {
    skip_space();
    Node::Operand o;
    o.position = p_;
    if (at_end()) e_.fail(p_, "unexpected end of the expression (expected a value or a field)");
    const char c = s_[p_];
    if (c == '"' || c == '\'') {
      const std::size_t end = s_.find(c, p_ + 1);
      if (end == std::string::npos)
        e_.fail(p_, fmt::format("a string opened with {} is not closed", c));
      o.term = Term::String;
      o.text = s_.substr(p_ + 1, end - p_ - 1);
      p_ = end + 1;
      return o;
    }
    const bool sign = (c == '-' || c == '+') && p_ + 1 < s_.size() &&
                      (std::isdigit(static_cast<unsigned char>(s_[p_ + 1])) || s_[p_ + 1] == '.');
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || sign) {
      std::size_t end = p_ + (sign ? 1 : 0);
      while (end < s_.size() &&
             (name_char(s_[end]) ||
              ((s_[end] == '-' || s_[end] == '+') && (s_[end - 1] == 'e' || s_[end - 1] == 'E'))))
        ++end;
      const char* first = s_.data() + p_ + (c == '+' ? 1 : 0);
      double v = 0;
      const auto r = std::from_chars(first, s_.data() + end, v);
      if (r.ec != std::errc() || r.ptr != s_.data() + end || !std::isfinite(v))
        e_.fail(p_, fmt::format("'{}' is not a number", s_.substr(p_, end - p_)));
      o.term = Term::Number;
      o.number = v;
      p_ = end;
      return o;
    }
    if (!name_start(c)) unexpected();
    std::size_t end = p_;
    while (end < s_.size() && name_char(s_[end])) ++end;
    std::string name = s_.substr(p_, end - p_);
    bool info = false;
    if (end < s_.size() && s_[end] == '/') {
      if (name == "FMT" || name == "FORMAT") {  // FMT/GQ, FMT/DP: genotype masks
        std::size_t stop = end + 1;
        while (stop < s_.size() && name_char(s_[stop])) ++stop;
        const std::string field = s_.substr(end + 1, stop - end - 1);
        if (field != "GQ" && field != "DP")
          e_.fail(end + 1, fmt::format("FMT/{}: of the FORMAT fields only FMT/GQ and FMT/DP are "
                                       "supported (they mask genotypes, as --min-gq/--min-dp)",
                                       field));
        o.term = field == "GQ" ? Term::FmtGq : Term::FmtDp;
        o.text = "FMT/" + field;
        p_ = stop;
        return o;
      }
      if (name != "INFO") e_.fail(end, "unexpected '/' (only INFO/NAME names a field so)");
      const std::size_t start = end + 1;
      end = start;
      if (end >= s_.size() || !name_start(s_[end])) {
        p_ = end;
        e_.fail(end, "expected the name of an INFO field after 'INFO/'");
      }
      while (end < s_.size() && name_char(s_[end])) ++end;
      name = s_.substr(start, end - start);
      info = true;
    }
    p_ = end;
    o.text = name;
    o.term = Term::Info;
    if (!info)
      for (const auto& b : kBuiltins)
        if (name == b.name) {
          o.term = b.term;
          o.float32 = b.float32;
        }
    if (o.term == Term::Info) {
      auto& list = e_.needs_.info;
      auto it = std::find(list.begin(), list.end(), name);
      if (it == list.end()) it = list.insert(list.end(), name);
      o.info = static_cast<int>(it - list.begin());
      o.text = "INFO/" + name;
    }
    // A subscript: NAME[i] (0-based) or NAME[*] (any element, as NAME alone).
    if (!at_end() && s_[p_] == '[') {
      const std::size_t open = p_;
      if (!per_allele(o.term))
        e_.fail(open, fmt::format("{} has one value; it takes no subscript", o.text));
      ++p_;
      if (!at_end() && s_[p_] == '*') {
        ++p_;
      } else {
        std::size_t digits = p_;
        while (digits < s_.size() && std::isdigit(static_cast<unsigned char>(s_[digits]))) ++digits;
        int index = 0;
        const auto r = std::from_chars(s_.data() + p_, s_.data() + digits, index);
        if (digits == p_ || r.ec != std::errc() || index > 65535)
          e_.fail(p_, "expected an element index (0, 1, ...) or '*' in the subscript");
        o.index = index;
        p_ = digits;
      }
      if (at_end() || s_[p_] != ']') e_.fail(p_, "expected ']' to close the subscript");
      ++p_;
    }
    note_needs(o);
    return o;
  }

  void note_needs(const Node::Operand& o) {
    auto& n = e_.needs_;
    switch (o.term) {
      case Term::Qual:
        n.qual = true;
        break;
      case Term::Pos:
        n.pos = true;
        break;
      case Term::Chrom:
        n.chrom = true;
        break;
      case Term::Id:
        n.id = true;
        break;
      case Term::Ref:
      case Term::Alt:
      case Term::NAlt:
      case Term::Type:
        n.alleles = true;
        break;
      case Term::Filter:
        n.filters = true;
        break;
      case Term::AC:
      case Term::AF:
      case Term::MAF:
      case Term::MAC:
        n.alleles = true;  // the ALTs the per-allele counts are of
        n.counts = true;
        break;
      case Term::AN:
      case Term::FMissing:
      case Term::NMissing:
        n.counts = true;
        break;
      default:
        break;
    }
  }

  void check_bare(const Node::Operand& o) {
    if (literal(o.term)) e_.fail(o.position, "a value alone is not a condition");
    if (fmt_term(o.term))
      e_.fail(o.position, fmt::format("{} alone is not a condition; compare it with a number, "
                                      "e.g. {}>=20",
                                      o.text, o.text));
    if (o.term != Term::Info)
      e_.fail(o.position,
              fmt::format("{} alone is not a condition; compare it with a value", o.text));
  }

  void check_comparison(Node& n) {
    if (literal(n.left.term) && literal(n.right.term))
      e_.fail(n.left.position, "compares two values; one side must name a field");
    if (literal(n.left.term)) {  // the field on the left: 30<QUAL is QUAL>30
      std::swap(n.left, n.right);
      n.cmp = mirrored(n.cmp);
    }
    const Term l = n.left.term, r = n.right.term;
    if (l == Term::Type || l == Term::Filter || r == Term::Type || r == Term::Filter) {
      const Node::Operand& field = (l == Term::Type || l == Term::Filter) ? n.left : n.right;
      const Node::Operand& value = &field == &n.left ? n.right : n.left;
      if (value.term != Term::String)
        e_.fail(value.position,
                fmt::format("{} is compared with a quoted string, e.g. {}", field.text,
                            field.term == Term::Type ? "TYPE=\"snp\"" : "FILTER=\"PASS\""));
      if (n.cmp != Cmp::Eq && n.cmp != Cmp::Ne && n.cmp != Cmp::Match && n.cmp != Cmp::NoMatch)
        e_.fail(n.position, fmt::format("{} takes = != ~ !~, not {}", field.text, cmp_text(n.cmp)));
      if (field.term == Term::Type) {
        bool found = false;
        for (const auto& t : kTypes)
          if (equal_nocase(value.text, t.name)) {
            n.type_mask = t.bits;
            found = true;
          }
        if (!found)
          e_.fail(value.position,
                  fmt::format("unknown TYPE \"{}\" (snp, mnp, indel, other, ref, bnd, overlap)",
                              value.text));
      } else {
        std::vector<std::string> names;
        if (value.text != ".") {
          std::size_t start = 0;
          while (true) {
            const std::size_t semi = value.text.find(';', start);
            std::string name = value.text.substr(start, semi - start);
            if (name.empty() || name == ".")
              e_.fail(value.position,
                      fmt::format("\"{}\" is not a list of filter names (A or A;B, or \".\")",
                                  value.text));
            names.push_back(std::move(name));
            if (semi == std::string::npos) break;
            start = semi + 1;
          }
        }
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        n.filter_set = static_cast<int>(e_.filter_sets_.size());
        e_.filter_sets_.push_back(std::move(names));
      }
      return;
    }
    if (n.cmp == Cmp::Match || n.cmp == Cmp::NoMatch)
      e_.fail(n.position,
              fmt::format("'{}' is supported for FILTER and TYPE only", cmp_text(n.cmp)));
    const bool ln = numeric_term(l), rn = numeric_term(r);
    const bool ls = string_term(l), rs = string_term(r);
    if ((ln && rs) || (ls && rn)) {
      const Node::Operand& field = literal(l) ? n.right : n.left;
      const Node::Operand& value = &field == &n.left ? n.right : n.left;
      e_.fail(value.position,
              numeric_term(field.term)
                  ? fmt::format("{} is a number; compare it with a number", field.text)
                  : fmt::format("{} is text; compare it with a quoted string", field.text));
    }
    if ((ls || rs) && n.cmp != Cmp::Eq && n.cmp != Cmp::Ne)
      e_.fail(n.position,
              fmt::format("text is compared with = and != only, not {}", cmp_text(n.cmp)));
  }
};

// ---- expression ------------------------------------------------------------------------------

// The FMT/GQ and FMT/DP conditions become genotype masks: each must be one of the conditions
// joined by && at the top of -i (kept genotypes: FMT/GQ>=N, >N) or by || at the top of -e
// (left out: FMT/GQ<N, <=N), so that it takes nothing from the sites' decision; its node becomes
// a constant that leaves the rest as it was (true in -i's &&, false in -e's ||).
void SiteExpression::take_genotype_masks() {
  const Node::Op join = exclude_ ? Node::Op::Or : Node::Op::And;
  const char* join_text = exclude_ ? "||" : "&&";
  std::vector<int> todo{root_};
  while (!todo.empty()) {
    const int at = todo.back();
    todo.pop_back();
    Node& n = nodes_[static_cast<std::size_t>(at)];
    if (n.op == join) {
      todo.push_back(n.a);
      todo.push_back(n.b);
      continue;
    }
    if (n.op != Node::Op::Compare || !fmt_term(n.left.term)) continue;
    const Node::Operand& field = n.left;
    if (n.right.term != Term::Number)
      fail(n.right.position, fmt::format("{} is compared with a number", field.text));
    // The least value a kept genotype has (GQ and DP are integers).
    const double x = n.right.number;
    double least = 0;
    if (!exclude_ && (n.cmp == Cmp::Ge || n.cmp == Cmp::Gt))
      least = n.cmp == Cmp::Ge ? std::ceil(x) : std::floor(x) + 1;
    else if (exclude_ && (n.cmp == Cmp::Lt || n.cmp == Cmp::Le))
      least = n.cmp == Cmp::Lt ? std::ceil(x) : std::floor(x) + 1;
    else
      fail(
          n.position,
          fmt::format("{} masks genotypes below a bound: write {}>=N in -i or {}<N in -e (as "
                      "--min-{} N)",
                      field.text, field.text, field.text, field.term == Term::FmtGq ? "gq" : "dp"));
    const int bound = static_cast<int>(std::clamp(least, 0.0, 2147483647.0));
    int& slot = field.term == Term::FmtGq ? mask_.min_gq : mask_.min_dp;
    slot = std::max(slot, bound);
    n.op = Node::Op::Const;
    n.value = !exclude_;
  }
  for (const Node& n : nodes_)
    if (n.op == Node::Op::Compare || n.op == Node::Op::Bare)
      for (const Node::Operand* o : {&n.left, &n.right})
        if (fmt_term(o->term))
          fail(o->position,
               fmt::format("{} masks genotypes, so it must be joined to the rest of {} with {} "
                           "at the top level (not under ! or {})",
                           o->text, exclude_ ? "-e" : "-i", join_text, exclude_ ? "&&" : "||"));
}

bool SiteExpression::selects_sites() const {
  // Only constants joined by the top-level operator: the FMT conditions were all there was.
  std::vector<int> todo{root_};
  while (!todo.empty()) {
    const Node& n = nodes_[static_cast<std::size_t>(todo.back())];
    todo.pop_back();
    if (n.op == Node::Op::And || n.op == Node::Op::Or) {
      todo.push_back(n.a);
      todo.push_back(n.b);
    } else if (n.op != Node::Op::Const) {
      return true;
    }
  }
  return false;
}

SiteExpression SiteExpression::parse(std::string_view text, bool exclude) {
  SiteExpression e;
  e.text_ = std::string(text);
  e.exclude_ = exclude;
  SiteExpressionParser(e).run();
  return e;
}

std::string SiteExpression::describe() const {
  return fmt::format("{} '{}'", exclude_ ? "-e" : "-i", text_);
}

void SiteExpression::fail(std::size_t position, const std::string& why) const {
  throw UsageError(fmt::format("{}: position {}: {}", describe(), position + 1, why));
}

void SiteExpression::bind(const SiteSchema& schema) {
  using Kind = SiteSchema::Kind;
  if (schema.info.size() != needs_.info.size())
    throw Error("SiteExpression::bind: the schema has " + std::to_string(schema.info.size()) +
                " INFO kinds for " + std::to_string(needs_.info.size()) + " fields");
  for (auto& n : nodes_) {
    if (n.op == Node::Op::Compare)
      for (Node::Operand* o : {&n.left, &n.right})
        if (o->term == Term::Info) {
          const Kind k = schema.info[static_cast<std::size_t>(o->info)];
          o->float32 = k == Kind::Float;
          o->is_text = k == Kind::String;
        }
    if (n.op == Node::Op::Bare) {
      if (schema.info[static_cast<std::size_t>(n.left.info)] != Kind::Flag)
        fail(n.left.position, fmt::format("{} is not a flag; compare it with a value (e.g. {}>0)",
                                          n.left.text, n.left.text));
      continue;
    }
    if (n.op != Node::Op::Compare || n.filter_set >= 0 || n.left.term == Term::Type) continue;
    auto kind_of = [&](const Node::Operand& o) -> int {  // 1 number, 2 string
      if (o.term == Term::Info)
        return schema.info[static_cast<std::size_t>(o.info)] == Kind::String ? 2 : 1;
      return numeric_term(o.term) ? 1 : 2;
    };
    const int l = kind_of(n.left), r = kind_of(n.right);
    if (l != r) {
      const Node::Operand& value = literal(n.right.term) ? n.right : n.left;
      const Node::Operand& field = &value == &n.right ? n.left : n.right;
      fail(value.position,
           kind_of(field) == 1
               ? fmt::format("{} is a number; compare it with a number", field.text)
               : fmt::format("{} is text; compare it with a quoted string", field.text));
    }
    if (l == 2 && n.cmp != Cmp::Eq && n.cmp != Cmp::Ne)
      fail(n.position, fmt::format("text is compared with = and != only, not {}", cmp_text(n.cmp)));
  }
  filter_columns_.assign(filter_sets_.size(), {});
  for (std::size_t k = 0; k < filter_sets_.size(); ++k)
    for (const auto& name : filter_sets_[k]) {
      const auto it = std::find(schema.filters.begin(), schema.filters.end(), name);
      if (it == schema.filters.end() && name != "PASS") {
        std::size_t at = 0;
        for (const auto& n : nodes_)
          if (n.filter_set == static_cast<int>(k)) at = n.right.position;
        std::string known;
        for (const auto& f : schema.filters) known += (known.empty() ? "" : ", ") + f;
        fail(at, fmt::format("the store has no filter '{}' (its filters: {})", name,
                             known.empty() ? "none" : known));
      }
      filter_columns_[k].push_back(it == schema.filters.end() ? -1 : it - schema.filters.begin());
    }
  bound_ = true;
}

// ---- evaluation ------------------------------------------------------------------------------

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The values of a numeric operand at one site, element by element (NaN: missing), and of a
// text operand.
struct Values {
  const Node::Operand& o;
  const SiteFields& s;
  std::int64_t an = 0;  // counts: called alleles
  std::size_t n_alt = 0;

  Values(const Node::Operand& op, const SiteFields& site) : o(op), s(site) {
    if (o.term == Term::AC || o.term == Term::AF || o.term == Term::MAF || o.term == Term::MAC ||
        o.term == Term::AN) {
      for (const std::int32_t c : s.allele_counts) an += c;
      n_alt = s.alleles.empty() ? (s.allele_counts.empty() ? 0 : s.allele_counts.size() - 1)
                                : s.alleles.size() - 1;
    }
  }
  // Elements of the list before a subscript.
  std::size_t raw_size() const {
    switch (o.term) {
      case Term::AC:
      case Term::AF:
      case Term::MAF:
      case Term::MAC:
        if (an == 0) return 0;  // no called allele: missing (bcftools)
        return std::max<std::size_t>(n_alt, 1);
      case Term::Alt:
        return std::max<std::size_t>(s.alleles.size(), 2) - 1;
      case Term::Info: {
        const auto& v = s.info[static_cast<std::size_t>(o.info)];
        return v.strings.empty() ? v.numbers.size() : v.strings.size();
      }
      default:
        return 1;
    }
  }
  std::size_t size() const {
    if (o.index < 0) return raw_size();
    return 1;
  }
  std::size_t element(std::size_t i) const {
    return o.index < 0 ? i : static_cast<std::size_t>(o.index);
  }

  double number(std::size_t i) const {
    const std::size_t k = element(i);
    if (o.index >= 0 && k >= raw_size()) return kNaN;
    auto count = [&](std::size_t alt) -> double {
      const std::size_t a = alt + 1;
      return a < s.allele_counts.size() && n_alt > 0 ? s.allele_counts[a] : 0;
    };
    switch (o.term) {
      case Term::Number:
        return o.number;
      case Term::Qual:
        return s.qual;
      case Term::Pos:
        return static_cast<double>(s.pos);
      case Term::NAlt:
        return static_cast<double>(std::max<std::size_t>(s.alleles.size(), 1) - 1);
      case Term::AN:
        return static_cast<double>(an);
      case Term::AC:
        return count(k);
      case Term::AF:
        return count(k) / static_cast<double>(an);
      case Term::MAF: {
        const double af = count(k) / static_cast<double>(an);
        return af > 0.5 ? 1 - af : af;
      }
      case Term::MAC:
        return std::min(count(k), static_cast<double>(an) - count(k));
      case Term::FMissing:
        return s.genotypes > 0 ? static_cast<double>(s.missing) / static_cast<double>(s.genotypes)
                               : kNaN;
      case Term::NMissing:
        return static_cast<double>(s.missing);
      case Term::Info: {
        const auto& v = s.info[static_cast<std::size_t>(o.info)].numbers;
        return k < v.size() ? v[k] : kNaN;
      }
      default:
        return kNaN;
    }
  }

  std::string_view text(std::size_t i) const {
    const std::size_t k = element(i);
    switch (o.term) {
      case Term::String:
        return o.text;
      case Term::Chrom:
        return s.chrom;
      case Term::Id:
        return s.id;
      case Term::Ref:
        return s.alleles.empty() ? std::string_view(".") : std::string_view(s.alleles[0]);
      case Term::Alt:
        return k + 1 < s.alleles.size() ? std::string_view(s.alleles[k + 1])
                                        : std::string_view(".");
      case Term::Info: {
        const auto& v = s.info[static_cast<std::size_t>(o.info)].strings;
        return k < v.size() && !v[k].empty() ? std::string_view(v[k]) : std::string_view(".");
      }
      default:
        return ".";
    }
  }
};

template <class T>
bool apply(Cmp c, T a, T b) {
  switch (c) {
    case Cmp::Eq:
      return a == b;
    case Cmp::Ne:
      return a != b;
    case Cmp::Lt:
      return a < b;
    case Cmp::Le:
      return a <= b;
    case Cmp::Gt:
      return a > b;
    case Cmp::Ge:
      return a >= b;
    default:
      return false;
  }
}

bool any_number(const Values& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isnan(v.number(i))) return true;
  return false;
}

}  // namespace

bool SiteExpression::compare(const Node& n, const SiteFields& site) const {
  if (n.left.term == Term::Type) {
    unsigned mask = 0;
    if (!site.alleles.empty())
      for (std::size_t k = 1; k < site.alleles.size(); ++k)
        mask |= allele_type(site.alleles[0], site.alleles[k]);
    const unsigned want = n.type_mask;
    const bool equal = mask == want;
    const bool contains = want == 0 ? mask == 0 : (mask & want) == want;
    switch (n.cmp) {
      case Cmp::Eq:
        return equal;
      case Cmp::Ne:
        return !equal;
      case Cmp::Match:
        return contains;
      default:
        return !contains;
    }
  }
  if (n.filter_set >= 0) {
    const auto& want = filter_columns_[static_cast<std::size_t>(n.filter_set)];
    std::size_t set = 0;
    for (const std::uint8_t f : site.filters) set += f != 0;
    bool all = true;  // every named filter is set
    for (const std::int64_t c : want)
      all = all && c >= 0 && static_cast<std::size_t>(c) < site.filters.size() &&
            site.filters[static_cast<std::size_t>(c)] != 0;
    const bool equal = all && set == want.size();
    const bool contains = want.empty() ? set == 0 : all;
    switch (n.cmp) {
      case Cmp::Eq:
        return equal;
      case Cmp::Ne:
        return !equal;
      case Cmp::Match:
        return contains;
      default:
        return !contains;
    }
  }
  const Values l(n.left, site), r(n.right, site);
  if (n.left.is_text || n.right.is_text) {
    const std::size_t nl = std::max<std::size_t>(l.size(), 1),
                      nr = std::max<std::size_t>(r.size(), 1);
    for (std::size_t i = 0; i < nl; ++i)
      for (std::size_t j = 0; j < nr; ++j)
        if (apply(n.cmp, l.text(i), r.text(j))) return true;
    return false;
  }
  if (!any_number(l) || !any_number(r)) return n.cmp == Cmp::Ne;  // missing: only != holds
  const bool single = n.left.float32 || n.right.float32;
  for (std::size_t i = 0; i < l.size(); ++i) {
    const double a = l.number(i);
    if (std::isnan(a)) continue;
    for (std::size_t j = 0; j < r.size(); ++j) {
      const double b = r.number(j);
      if (std::isnan(b)) continue;
      if (single ? apply(n.cmp, static_cast<float>(a), static_cast<float>(b)) : apply(n.cmp, a, b))
        return true;
    }
  }
  return false;
}

bool SiteExpression::eval(int node, const SiteFields& site) const {
  const Node& n = nodes_[static_cast<std::size_t>(node)];
  switch (n.op) {
    case Node::Op::And:
      return eval(n.a, site) && eval(n.b, site);
    case Node::Op::Or:
      return eval(n.a, site) || eval(n.b, site);
    case Node::Op::Not:
      return !eval(n.a, site);
    case Node::Op::Bare: {
      const auto& v = site.info[static_cast<std::size_t>(n.left.info)].numbers;
      for (const double x : v)
        if (!std::isnan(x) && x != 0) return true;
      return false;
    }
    case Node::Op::Compare:
      return compare(n, site);
    case Node::Op::Const:
      return n.value;
  }
  return false;
}

bool SiteExpression::keep(const SiteFields& site) const {
  if (!bound_) throw Error(describe() + ": evaluated before bind()");
  return eval(root_, site) != exclude_;
}

}  // namespace vczstats
