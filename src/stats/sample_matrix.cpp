// Sums over pairs of samples (vczstats/sample_matrix.hpp): shape, merging by addition, bytes.

#include "vczstats/sample_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "vczstats/error.hpp"

namespace vczstats {

std::vector<std::pair<std::int64_t, std::int64_t>> split_matrix_rows(std::int64_t begin,
                                                                     std::int64_t end, int parts) {
  parts = std::max(parts, 1);
  // Cells of rows [0, r): r (r + 1) / 2; a cut r at a share of the cells solves it for r.
  auto cells = [](double r) { return r * (r + 1) / 2; };
  const double first = cells(static_cast<double>(begin)),
               total = cells(static_cast<double>(end)) - first;
  std::vector<std::pair<std::int64_t, std::int64_t>> s;
  std::int64_t r0 = begin;
  for (int k = 1; k <= parts; ++k) {
    std::int64_t r1 = end;
    if (k < parts) {
      const double t = first + total * k / parts;
      const double r = (std::sqrt(1 + 8 * t) - 1) / 2;
      r1 = std::llround(r);
      // On the grid when that moves 2% of a stripe's cells at most (else a rank would wait
      // longer than the products of a tile cut in two, computed by both ranks, take).
      const std::int64_t g = std::llround(r / kSampleMatrixTile) * kSampleMatrixTile;
      if (std::abs(cells(static_cast<double>(g)) - t) <= 0.02 * total / parts) r1 = g;
      r1 = std::clamp(r1, r0, end);
    }
    s.push_back({r0, r1});
    r0 = r1;
  }
  return s;
}

SampleMatrixSums SampleMatrixSums::zeros(const SampleMatrixRequest& request, std::int64_t samples) {
  SampleMatrixSums s;
  s.row_end = request.row_end < 0 ? samples : request.row_end;
  s.row_begin = request.row_begin;
  if (s.row_begin < 0 || s.row_begin > s.row_end || s.row_end > samples)
    throw UsageError("sample matrix: rows " + std::to_string(s.row_begin) + ".." +
                     std::to_string(s.row_end) + " outside the " + std::to_string(samples) +
                     " samples");
  const auto cells = static_cast<std::size_t>(s.rows() * s.cols());
  for (int k = 0; k < kPairCounts; ++k)
    if (request.counts & pair_bit(static_cast<PairCount>(k)))
      s.counts[static_cast<std::size_t>(k)].assign(cells, 0);
  if (request.product != PairProduct::None) {
    s.product.assign(cells, 0.0);
    s.diagonal.assign(static_cast<std::size_t>(s.cols()), 0.0);
  }
  return s;
}

void SampleMatrixSums::merge(const SampleMatrixSums& o) {
  auto same = [&] {
    if (o.row_begin != row_begin || o.row_end != row_end || o.product.size() != product.size() ||
        o.diagonal.size() != diagonal.size())
      return false;
    for (int k = 0; k < kPairCounts; ++k)
      if (o.counts[static_cast<std::size_t>(k)].size() !=
          counts[static_cast<std::size_t>(k)].size())
        return false;
    return true;
  };
  if (!values.empty() || !o.values.empty())
    throw Error(
        "sample matrix: internal error: cannot merge final per-pair values (they need "
        "RunOptions::keep_matrix_sums)");
  if (!same()) throw Error("sample matrix: cannot merge sums of another request");
  if (variants + o.variants > std::numeric_limits<std::int32_t>::max())
    throw UsageError("sample matrix: more than 2^31 - 1 variants (the pair counts are 32-bit)");
  variants += o.variants;
  weight_total += o.weight_total;
  for (int k = 0; k < kPairCounts; ++k) {
    auto& a = counts[static_cast<std::size_t>(k)];
    const auto& b = o.counts[static_cast<std::size_t>(k)];
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  }
  for (std::size_t i = 0; i < product.size(); ++i) product[i] += o.product[i];
  for (std::size_t i = 0; i < diagonal.size(); ++i) diagonal[i] += o.diagonal[i];
}

void SampleMatrixSums::save(ByteWriter& w) const {
  if (!values.empty())
    throw Error(
        "sample matrix: internal error: cannot save final per-pair values (they need "
        "RunOptions::keep_matrix_sums)");
  w.put_string("sample-matrix");
  w.put(row_begin);
  w.put(row_end);
  w.put(variants);
  w.put(weight_total);
  for (const auto& c : counts) w.put_vector(c);
  w.put_vector(product);
  w.put_vector(diagonal);
}

void SampleMatrixSums::load(ByteReader& r) {
  r.expect("sample-matrix");
  SampleMatrixSums s;
  s.row_begin = r.get<std::int64_t>();
  s.row_end = r.get<std::int64_t>();
  s.variants = r.get<std::int64_t>();
  s.weight_total = r.get<double>();
  for (auto& c : s.counts) c = r.get_vector<std::int32_t>();
  s.product = r.get_vector<double>();
  s.diagonal = r.get_vector<double>();
  const auto cells = static_cast<std::size_t>(s.rows() * s.cols());
  // (A stripe without rows has a product of no cells, and its diagonal.)
  if (s.row_begin < 0 || s.row_end < s.row_begin ||
      (!s.product.empty() && s.product.size() != cells) ||
      (!s.diagonal.empty() && s.diagonal.size() != static_cast<std::size_t>(s.cols())) ||
      (cells > 0 && s.diagonal.empty() != s.product.empty()))
    throw FormatError("statistic state: malformed sample-matrix sums");
  for (const auto& c : s.counts)
    if (!c.empty() && c.size() != cells)
      throw FormatError("statistic state: malformed sample-matrix sums");
  *this = std::move(s);
}

}  // namespace vczstats
