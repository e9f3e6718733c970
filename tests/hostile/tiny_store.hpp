#pragma once
// Hand-made VCF Zarr stores for the hostile-input tests: a tiny valid store written byte by byte
// (Zarr v2, uncompressed chunks, vlen-utf8 strings), whose metadata and chunks a test then
// breaks in one place. Nothing here uses the code under test.

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vcztest::hostile {

namespace fs = std::filesystem;
using nlohmann::json;

/// Raw bytes of little-endian integers of type T.
template <class T>
std::string le_bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto v = static_cast<std::uint64_t>(values[i]);
    for (std::size_t b = 0; b < sizeof(T); ++b)
      out[i * sizeof(T) + b] = static_cast<char>((v >> (8 * b)) & 0xFF);
  }
  return out;
}

/// numcodecs' VLenUTF8 framing: a count, then length-prefixed items.
inline std::string vlen(const std::vector<std::string>& items) {
  std::string out = le_bytes(std::vector<std::uint32_t>{static_cast<std::uint32_t>(items.size())});
  for (const auto& s : items)
    out += le_bytes(std::vector<std::uint32_t>{static_cast<std::uint32_t>(s.size())}) + s;
  return out;
}

inline void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline json read_json_file(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

/// A tiny VCF Zarr store: 2 samples, one contig "chr1" of 1000 bp, 3 diploid variants at 10, 20,
/// 30 (REF A, ALT T), every call 0/1.
class TinyStore {
 public:
  explicit TinyStore(fs::path root) : root_(std::move(root)) {
    fs::create_directories(root_);
    write_text(root_ / ".zgroup", R"({"zarr_format": 2})");
    write_text(root_ / ".zattrs", R"({"vcf_zarr_version": "0.4"})");
    strings("sample_id", {"s0", "s1"});
    strings("contig_id", {"chr1"});
    array("contig_length", {1}, {1}, "<i8", le_bytes(std::vector<std::int64_t>{1000}));
    array("variant_position", {3}, {3}, "<i4", le_bytes(std::vector<std::int32_t>{10, 20, 30}));
    array("variant_contig", {3}, {3}, "|i1", std::string(3, '\0'));
    std::vector<std::string> alleles;
    for (int i = 0; i < 3; ++i) alleles.insert(alleles.end(), {"A", "T"});
    array("variant_allele", {3, 2}, {3, 2}, "|O", vlen(alleles), "0.0",
          json::array({{{"id", "vlen-utf8"}}}));
    std::string gt;
    for (int i = 0; i < 6; ++i) gt += std::string("\x00\x01", 2);
    array("call_genotype", {3, 2, 2}, {3, 2, 2}, "|i1", gt, "0.0.0");
  }

  const fs::path& path() const { return root_; }
  std::string str() const { return root_.string(); }

  /// Write array @p name: .zarray (no compressor) and one chunk under @p key ("" for none).
  void array(const std::string& name, std::vector<std::int64_t> shape,
             std::vector<std::int64_t> chunks, const std::string& dtype, const std::string& chunk,
             const std::string& key = "0", json filters = nullptr) const {
    json z = {{"zarr_format", 2}, {"shape", shape},        {"chunks", chunks},
              {"dtype", dtype},   {"compressor", nullptr}, {"fill_value", nullptr},
              {"order", "C"},     {"filters", filters}};
    if (dtype != "|O") z["fill_value"] = 0;
    fs::remove_all(root_ / name);
    write_text(root_ / name / ".zarray", z.dump());
    if (!key.empty()) write_text(root_ / name / key, chunk);
  }

  /// A one-dimensional vlen-utf8 string array in one chunk.
  void strings(const std::string& name, const std::vector<std::string>& items) const {
    const auto n = static_cast<std::int64_t>(items.size());
    array(name, {n}, {std::max<std::int64_t>(n, 1)}, "|O", vlen(items), "0",
          json::array({{{"id", "vlen-utf8"}}}));
  }

  /// Change members of an array's .zarray (a JSON merge patch).
  void patch(const std::string& name, const json& changes) const {
    const auto p = root_ / name / ".zarray";
    json z = read_json_file(p);
    z.merge_patch(changes);
    write_text(p, z.dump());
  }

  /// Change the group attributes (a JSON merge patch).
  void patch_attributes(const json& changes) const {
    json a = read_json_file(root_ / ".zattrs");
    a.merge_patch(changes);
    write_text(root_ / ".zattrs", a.dump());
  }

  /// Replace the bytes of one chunk file.
  void chunk(const std::string& name, const std::string& key, const std::string& bytes) const {
    write_text(root_ / name / key, bytes);
  }

 private:
  fs::path root_;
};

}  // namespace vcztest::hostile
