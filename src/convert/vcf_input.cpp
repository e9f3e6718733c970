// A VCF/BCF input read through htslib: opening, the header facts the converter needs, reading
// one record at a time with the reason when it is malformed.

#include "convert/vcf_input.hpp"

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts_log.h>
#include <htslib/kstring.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vczstats/error.hpp"

namespace vczstats::convert::detail {
namespace {

std::string unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

std::string hrec_value(const bcf_hrec_t* hrec, const char* key) {
  if (!hrec) return "";
  const int k = bcf_hrec_find_key(const_cast<bcf_hrec_t*>(hrec), key);
  return k < 0 ? std::string() : unquote(hrec->vals[k]);
}

std::string errcode_text(int code) {
  std::vector<std::string> parts;
  if (code & BCF_ERR_CTG_UNDEF) parts.push_back("contig not defined in the header");
  if (code & BCF_ERR_TAG_UNDEF) parts.push_back("tag not defined in the header");
  if (code & BCF_ERR_NCOLS) parts.push_back("wrong number of columns");
  if (code & BCF_ERR_LIMITS) parts.push_back("a value exceeds htslib's limits");
  if (code & BCF_ERR_CHAR) parts.push_back("invalid character");
  if (code & BCF_ERR_CTG_INVALID) parts.push_back("invalid contig name");
  if (code & BCF_ERR_TAG_INVALID) parts.push_back("invalid tag name");
  if (parts.empty()) return fmt::format("htslib error code {}", code);
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

VcfInput::VcfInput(const std::string& path, int threads) : path_(path) {
  // htslib's own messages would add lines to ours; every failure is reported by the caller.
  hts_set_log_level(HTS_LOG_OFF);
  file_ = hts_open(path.c_str(), "r");
  if (!file_) throw IoError(fmt::format("{}: cannot open", path));
  const htsFormat* f = hts_get_format(file_);
  if (f->category != variant_data || (f->format != vcf && f->format != bcf)) {
    // The description is owned by the caller and must be read before the file is closed.
    char* description = hts_format_description(f);
    const std::string seen = description ? description : "?";
    std::free(description);
    hts_close(file_);
    file_ = nullptr;
    throw FormatError(fmt::format("{}: not a VCF or BCF file (htslib sees {})", path, seen));
  }
  text_ = f->format == vcf;
  if (threads > 0 && f->compression == bgzf) hts_set_threads(file_, threads);
  header_ = bcf_hdr_read(file_);
  if (!header_) {
    hts_close(file_);
    file_ = nullptr;
    throw FormatError(fmt::format("{}: cannot read the VCF header", path));
  }
  kstring_t s = KS_INITIALIZE;
  if (bcf_hdr_format(header_, 0, &s) == 0 && s.s) header_text_.assign(s.s, s.l);
  ks_free(&s);
  struct stat st {};
  if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) size_ = st.st_size;
}

VcfInput::~VcfInput() {
  if (header_) bcf_hdr_destroy(header_);
  if (file_) hts_close(file_);
}

std::vector<std::string> VcfInput::samples() const {
  std::vector<std::string> out;
  for (int i = 0; i < bcf_hdr_nsamples(header_); ++i) out.emplace_back(header_->samples[i]);
  return out;
}

std::vector<std::string> VcfInput::contigs() const {
  std::vector<std::string> out;
  for (int i = 0; i < header_->n[BCF_DT_CTG]; ++i) out.emplace_back(bcf_hdr_id2name(header_, i));
  return out;
}

std::vector<std::optional<std::int64_t>> VcfInput::contig_lengths() const {
  std::vector<std::optional<std::int64_t>> out;
  for (const auto& name : contigs()) {
    const bcf_hrec_t* hrec = bcf_hdr_get_hrec(header_, BCF_HL_CTG, "ID", name.c_str(), nullptr);
    const std::string len = hrec_value(hrec, "length");
    std::optional<std::int64_t> v;
    if (!len.empty()) {
      try {
        v = std::stoll(len);
      } catch (const std::exception&) {
        v.reset();
      }
    }
    out.push_back(v);
  }
  return out;
}

std::vector<FieldDeclaration> VcfInput::fields() const {
  std::vector<FieldDeclaration> out;
  for (int i = 0; i < header_->nhrec; ++i) {
    const bcf_hrec_t* hrec = header_->hrec[i];
    if (hrec->type != BCF_HL_INFO && hrec->type != BCF_HL_FMT) continue;
    FieldDeclaration d;
    d.format = hrec->type == BCF_HL_FMT;
    d.id = hrec_value(hrec, "ID");
    d.header_id = bcf_hdr_id2int(header_, BCF_DT_ID, d.id.c_str());
    if (d.header_id < 0) continue;
    const int hl = d.format ? BCF_HL_FMT : BCF_HL_INFO;
    d.type = static_cast<int>(bcf_hdr_id2type(header_, hl, d.header_id));
    d.number = static_cast<int>(bcf_hdr_id2length(header_, hl, d.header_id));
    d.fixed = static_cast<int>(bcf_hdr_id2number(header_, hl, d.header_id));
    // htslib keeps 0xfffff, its count of a field without a fixed Number, when a Number value
    // does not parse as one (`Number=.,...,Number=."` in a damaged line); it then calls the
    // field fixed, and every record would get 2^20-1 values per sample (found by
    // fuzz_convert_vcf: a 15 kB file took seconds, writing gigabytes of fill). Such a field has
    // no usable fixed Number: convert it as Number=.
    if (d.number == BCF_VL_FIXED && d.fixed == 0xfffff) d.number = BCF_VL_VAR;
    d.description = hrec_value(hrec, "Description");
    d.type_name = hrec_value(hrec, "Type");
    out.push_back(std::move(d));
  }
  return out;
}

std::string VcfInput::filter_description(int header_id) const {
  return hrec_value(bcf_hdr_id2hrec(header_, BCF_DT_ID, BCF_HL_FLT, header_id), "Description");
}

ReadStatus VcfInput::read(bcf1_t* rec, std::string& reason) {
  const int ret = bcf_read(file_, header_, rec);
  // -1 is the end of the input, or for VCF text also some parse errors: then a line was read.
  if (ret == -1 && !(text_ && file_->line.l > 0)) return ReadStatus::End;
  // A BGZF/gzip block that does not inflate: every further read fails the same way, so it is
  // not a bad record (--skip-bad skipped it forever).
  if (text_ && ret < 0 && file_->format.compression != no_compression && file_->fp.bgzf &&
      (file_->fp.bgzf->errcode & (BGZF_ERR_ZLIB | BGZF_ERR_HEADER | BGZF_ERR_IO | BGZF_ERR_CRC)))
    throw FormatError(
        fmt::format("{}: after {} records: corrupt or truncated input", path_, records_));
  ++records_;
  if (ret < 0) {
    if (!text_)
      throw FormatError(fmt::format("{}: record {}: corrupt or truncated BCF (htslib error {})",
                                    path_, records_, ret));
    reason = column_count_problem();
    if (reason.empty()) reason = "htslib could not parse the record";
    return ReadStatus::Bad;
  }
  // htslib reads a VCF line that ends early (after REF, ALT or INFO) as a site without calls;
  // bcftools refuses to write it: "the number of columns ... does not match the number of
  // samples". So do we.
  const auto record_samples = static_cast<std::int64_t>(rec->n_sample);  // (a bit-field)
  if (text_ && bcf_hdr_nsamples(header_) > 0 && record_samples != bcf_hdr_nsamples(header_)) {
    reason = column_count_problem();
    if (reason.empty())
      reason = fmt::format("the record has {} sample columns but the header names {} samples",
                           record_samples, bcf_hdr_nsamples(header_));
    return ReadStatus::Bad;
  }
  // Undeclared contigs and tags are added to the header by htslib: the record is usable.
  const int fatal = rec->errcode & ~(BCF_ERR_CTG_UNDEF | BCF_ERR_TAG_UNDEF);
  if (fatal != 0) {
    reason = errcode_text(fatal);
    return ReadStatus::Bad;
  }
  if (rec->errcode & BCF_ERR_CTG_UNDEF) undeclared_contig_ = true;
  if (bcf_unpack(rec, BCF_UN_ALL) != 0) {
    reason = "htslib could not unpack the record";
    return ReadStatus::Bad;
  }
  return ReadStatus::Ok;
}

std::string VcfInput::column_count_problem() const {
  if (!text_ || file_->line.s == nullptr) return "";
  // htslib's parser overwrites the tabs of the fields it read with NULs.
  const std::string_view line(file_->line.s, file_->line.l);
  const auto columns =
      static_cast<std::int64_t>(
          std::count_if(line.begin(), line.end(), [](char c) { return c == '\t' || c == '\0'; })) +
      1;
  const std::int64_t samples = bcf_hdr_nsamples(header_);
  const std::int64_t expected = samples > 0 ? 9 + samples : 8;
  if (columns >= expected || (samples == 0 && columns >= 4)) return "";
  return fmt::format(
      "the record has {} columns but the header's {} sample{} need {} (CHROM to INFO{})", columns,
      samples, samples == 1 ? "" : "s", expected, samples > 0 ? ", FORMAT and one per sample" : "");
}

std::string VcfInput::where(const bcf1_t* rec) const {
  std::string site;
  // POS is shown 1-based; a position htslib could not parse may be INT64_MAX (no + 1 then).
  if (rec && rec->rid >= 0 && rec->rid < header_->n[BCF_DT_CTG] &&
      rec->pos < std::numeric_limits<hts_pos_t>::max())
    site = fmt::format(" ({}:{})", bcf_hdr_id2name(header_, rec->rid), rec->pos + 1);
  if (text_) return fmt::format("{}: line {}{}", path_, file_->lineno, site);
  return fmt::format("{}: record {}{}", path_, records_, site);
}

double VcfInput::fraction_read() const {
  if (size_ <= 0) return -1;
  off_t pos = -1;
  if (file_->is_bgzf && file_->fp.bgzf)
    pos = htell(file_->fp.bgzf->fp);
  else if (file_->fp.hfile)
    pos = htell(file_->fp.hfile);
  if (pos < 0) return -1;
  return std::min(1.0, static_cast<double>(pos) / static_cast<double>(size_));
}

}  // namespace vczstats::convert::detail
