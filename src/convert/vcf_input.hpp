#pragma once
/// @file vcf_input.hpp
/// @brief Private: a VCF/BCF file read through htslib (RAII), with what the converter needs
/// from its header and messages that name the file and record.

#include <htslib/hts.h>
#include <htslib/vcf.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vczstats::convert::detail {

/// @brief Owns one bcf1_t.
struct RecordDeleter {
  void operator()(bcf1_t* r) const { bcf_destroy(r); }
};
using RecordPtr = std::unique_ptr<bcf1_t, RecordDeleter>;

/// @brief An INFO or FORMAT field declared in the header.
struct FieldDeclaration {
  std::string id;
  int header_id = -1;  ///< htslib's BCF_DT_ID index
  bool format = false;
  int type = BCF_HT_STR;      ///< BCF_HT_FLAG, BCF_HT_INT, BCF_HT_REAL, BCF_HT_STR
  int number = BCF_VL_FIXED;  ///< BCF_VL_FIXED, BCF_VL_VAR, BCF_VL_A, BCF_VL_R, BCF_VL_G
  int fixed = 1;              ///< the count of BCF_VL_FIXED fields
  std::string description;
  std::string type_name;  ///< as declared: Integer, Float, Flag, String, Character
};

/// @brief The outcome of reading one record.
enum class ReadStatus { Ok, End, Bad };

class VcfInput {
 public:
  /// @brief Open @p path ("-" for standard input) with @p threads BGZF decompression threads.
  /// @throws IoError / FormatError.
  VcfInput(const std::string& path, int threads);
  ~VcfInput();
  VcfInput(const VcfInput&) = delete;
  VcfInput& operator=(const VcfInput&) = delete;

  const std::string& path() const { return path_; }
  bcf_hdr_t* header() const { return header_; }
  bool is_text() const { return text_; }
  /// @brief The header as text, as it was read.
  const std::string& header_text() const { return header_text_; }

  std::vector<std::string> samples() const;
  /// @brief Contig names in htslib's order (header order, then undeclared contigs as met).
  std::vector<std::string> contigs() const;
  /// @brief Declared length of each contig (nullopt when the header gives none).
  std::vector<std::optional<std::int64_t>> contig_lengths() const;
  /// @brief Every INFO and FORMAT field of the header, in header order.
  std::vector<FieldDeclaration> fields() const;
  /// @brief Description of a FILTER (empty when none).
  std::string filter_description(int header_id) const;

  /// @brief Read the next record into @p rec and unpack it. On Bad, @p reason says why.
  /// @throws FormatError for errors after which reading cannot go on (BCF, I/O).
  ReadStatus read(bcf1_t* rec, std::string& reason);
  /// @brief "FILE: line N (chr:pos)" or "FILE: record N (chr:pos)" for the last record read.
  std::string where(const bcf1_t* rec) const;
  /// @brief Whether a record named a contig the header does not declare (and resets it).
  bool take_undeclared_contig() {
    const bool u = undeclared_contig_;
    undeclared_contig_ = false;
    return u;
  }
  /// @brief Fraction of the input read so far, or a negative number when unknown.
  double fraction_read() const;

 private:
  /// When the VCF line just read has fewer columns than the header's samples need, why;
  /// else "".
  std::string column_count_problem() const;

  std::string path_;
  htsFile* file_ = nullptr;
  bcf_hdr_t* header_ = nullptr;
  std::string header_text_;
  bool text_ = false;
  std::int64_t records_ = 0;
  std::int64_t size_ = -1;
  bool undeclared_contig_ = false;
};

}  // namespace vczstats::convert::detail
