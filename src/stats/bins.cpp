// Lengths in bp and bins of distance (vczstats/bins.hpp).

#include "vczstats/bins.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>
#include <string>

#include "vczstats/error.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats {

std::int64_t parse_bp_length(const std::string& text, const std::string& option) {
  auto bad = [&](const std::string& why) {
    return UsageError((option.empty() ? "" : option + ": ") + "'" + text + "' " + why +
                      " (give bp as a whole number, e.g. 100000, or kb/Mb: 100kb, 1.5Mb)");
  };
  std::size_t digits = 0;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  std::string unit = text.substr(digits);
  for (auto& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::int64_t scale = 0;
  if (unit.empty() || unit == "bp")
    scale = 1;
  else if (unit == "k" || unit == "kb")
    scale = 1000;
  else if (unit == "m" || unit == "mb")
    scale = 1000000;
  const std::string number = text.substr(0, digits);
  if (number.empty() || scale == 0 || std::count(number.begin(), number.end(), '.') > 1 ||
      number == ".")
    throw bad("is not a length");
  // Whole and fractional digits, exactly (1.5Mb is 1500000, 0.0001kb is not a whole base).
  const auto dot = number.find('.');
  const std::string whole = number.substr(0, dot);
  std::string fraction = dot == std::string::npos ? "" : number.substr(dot + 1);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  const std::size_t scale_digits = scale == 1 ? 0 : scale == 1000 ? 3 : 6;
  if (fraction.size() > scale_digits) throw bad("is not a whole number of bases");
  std::int64_t v = 0;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  for (const char d : whole + fraction + std::string(scale_digits - fraction.size(), '0')) {
    if (v > (kMax - (d - '0')) / 10) throw bad("is too long");
    v = v * 10 + (d - '0');
  }
  if (v <= 0) throw bad("must be at least 1 bp");
  return v;
}

namespace {
/// A bin edge: 0, or a length in bp (kb/Mb suffixes allowed).
std::int64_t bin_edge(const std::string& text, const std::string& option) {
  return text == "0" ? 0 : parse_bp_length(text, option);
}
}  // namespace

std::vector<double> parse_number_list(const std::string& text, const std::string& option) {
  std::vector<double> out;
  for (const auto& x : vcz::split_list(text)) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(x, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != x.size()) throw UsageError(option + ": '" + x + "' is not a number");
    out.push_back(v);
  }
  return out;
}

std::vector<std::int64_t> parse_bin_edges(const std::string& text, const std::string& option) {
  std::vector<std::int64_t> e;
  if (text.find(':') != std::string::npos) {
    const auto parts = vcz::split_list(text, ':');
    if (parts.size() != 3)
      throw UsageError(option + ": expected START:STOP:STEP, got '" + text + "'");
    const std::int64_t start = bin_edge(parts[0], option), stop = bin_edge(parts[1], option);
    const std::int64_t step = parse_bp_length(parts[2], option + " STEP");  // positive
    if (stop <= start) throw UsageError(option + ": STOP must be above START in '" + text + "'");
    if ((stop - start) / step > 10000000)
      throw UsageError(option + ": more than 10^7 bins in '" + text + "'");
    for (std::int64_t x = start; x < stop; x += step) e.push_back(x);
    e.push_back(stop);
  } else {
    for (const auto& x : vcz::split_list(text)) e.push_back(bin_edge(x, option));
  }
  if (e.size() < 2)
    throw UsageError(option + ": at least two bin edges are needed in '" + text + "'");
  for (std::size_t k = 1; k < e.size(); ++k)
    if (e[k] <= e[k - 1]) throw UsageError(option + ": bin edges must increase in '" + text + "'");
  return e;
}

void check_bin_edges(const std::vector<std::int64_t>& e, const std::string& option) {
  if (e.size() < 2) throw UsageError(option + ": at least two bin edges are needed");
  if (e.front() < 0) throw UsageError(option + ": bin edges must not be negative");
  for (std::size_t k = 1; k < e.size(); ++k)
    if (e[k] <= e[k - 1]) throw UsageError(option + ": bin edges must increase");
}

std::int64_t bin_of(const std::vector<std::int64_t>& e, std::int64_t d) {
  if (d < e.front() || d >= e.back()) return -1;
  return std::upper_bound(e.begin(), e.end(), d) - e.begin() - 1;
}

}  // namespace vczstats
