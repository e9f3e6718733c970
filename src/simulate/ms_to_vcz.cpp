// ms / scrm output to VCF Zarr. One pass indexes the text (replicates, positions, where each
// haplotype line starts); then (variant chunk, sample chunk) tasks gather their columns from
// the haplotype lines on a thread pool. The input is memory-mapped (standard input is read
// into memory), so resident memory is the pages being read plus one chunk per thread.

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "simulate/genotype_store.hpp"
#include "vczstats/error.hpp"
#include "vczstats/simulate.hpp"
#include "vczstats/thread_pool.hpp"
#include "zarr/stores.hpp"

namespace vczstats::simulate {
namespace {

using namespace detail;

/// One replicate (`//` block) of the input.
struct Replicate {
  std::int64_t first_line = 0;  ///< line number (1-based) of its first haplotype
  std::vector<double> positions;
  std::vector<std::size_t> lines;  ///< offset of each haplotype line in the text
};

/// The input's bytes: a memory map of a file, or standard input read into memory.
class MsText {
 public:
  explicit MsText(const std::string& input) : name_(input == "-" ? "<stdin>" : input) {
    if (input == "-") {
      char buf[1 << 16];
      for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw IoError(fmt::format("<stdin>: read failed: {}", std::strerror(errno)));
        if (n == 0) break;
        owned_.append(buf, static_cast<std::size_t>(n));
      }
      text_ = owned_;
    } else {
      map_ = std::make_unique<zarr::detail::MappedFile>(input);
      const auto b = map_->bytes();
      text_ = std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
    }
  }
  std::string_view text() const { return text_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_, owned_;
  std::unique_ptr<zarr::detail::MappedFile> map_;
  std::string_view text_;
};

/// Lines of the text, with their numbers and offsets.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    offset_ = pos_;
    const std::size_t end = text_.find('\n', pos_);
    const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
    line = text_.substr(pos_, stop - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    ++number_;
    return true;
  }
  std::int64_t number() const { return number_; }
  std::size_t offset() const { return offset_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0, offset_ = 0;
  std::int64_t number_ = 0;
};

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> w;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) w.push_back(s.substr(i, j - i));
    i = j;
  }
  return w;
}

template <class T>
bool parse_number(std::string_view s, T& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

/// The parsed input: replicates and the default length from the command line's -r.
struct MsInput {
  std::vector<Replicate> replicates;
  std::int64_t haplotypes = -1;
  std::int64_t nsites = 0;     ///< -r RHO NSITES of the command line, when given
  bool declared_only = false;  ///< no haplotype line: the count is the command line's NSAM
};

/// Sample chunks (files of sample_id, none of genotypes) a store may get from a command line's
/// NSAM alone, when no replicate holds a haplotype line: the data then bounds nothing, and a
/// header of a few bytes could otherwise ask for millions of files (issue 16).
constexpr std::int64_t kMaxDeclaredSampleChunks = 4096;

MsInput index_ms(const MsText& in, bool first_only) {
  MsInput out;
  LineReader r(in.text());
  std::string_view line;
  std::int64_t command_haplotypes = -1;
  auto fail = [&](const std::string& what) {
    return FormatError(fmt::format("{}: line {}: {}", in.name(), r.number(), what));
  };
  // The command line: `ms NSAM NREPS ...` or `scrm ...`; -r gives the locus length.
  if (r.next(line)) {
    const auto w = split_words(line);
    for (std::size_t i = 0; i + 2 < w.size(); ++i)
      if (w[i] == "-r") parse_number(w[i + 2], out.nsites);
    // NSAM, for inputs whose every replicate is empty.
    if (w.size() > 1 && !parse_number(w[1], command_haplotypes)) command_haplotypes = -1;
  }
  bool pending = false;  // a line could follow a `//` (replicate started)
  while (r.next(line)) {
    if (line == "//" || line.starts_with("// ")) {
      if (first_only && !out.replicates.empty()) break;
      out.replicates.emplace_back();
      pending = true;
      continue;
    }
    if (!pending || !line.starts_with("segsites:")) continue;  // trees, times, seeds...
    pending = false;
    Replicate& rep = out.replicates.back();
    std::int64_t segsites = 0;
    const auto w = split_words(line.substr(9));
    if (w.size() != 1 || !parse_number(w[0], segsites) || segsites < 0)
      throw fail(fmt::format("malformed segsites line '{}'", line));
    if (segsites == 0) {
      // ms writes nothing more; some tools write an empty positions line.
      continue;
    }
    if (!r.next(line) || !line.starts_with("positions:"))
      throw fail("expected 'positions:' after 'segsites:'");
    const auto p = split_words(line.substr(10));
    if (static_cast<std::int64_t>(p.size()) != segsites)
      throw fail(fmt::format("{} positions for segsites: {}", p.size(), segsites));
    rep.positions.resize(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (!parse_number(p[i], rep.positions[i]) || !(rep.positions[i] >= 0) ||
          !(rep.positions[i] <= 1))
        throw fail(fmt::format("position '{}' is not a number in [0, 1]", p[i]));
      if (i > 0 && rep.positions[i] < rep.positions[i - 1])
        throw fail(fmt::format("positions decrease: {} after {}", p[i], p[i - 1]));
    }
    // Haplotype lines: up to a blank line, a `//` or the end.
    rep.first_line = r.number() + 1;
    std::size_t offset = 0;
    while (r.next(line)) {
      offset = r.offset();
      if (line.empty() || line.starts_with("//")) break;
      if (static_cast<std::int64_t>(line.size()) != segsites)
        throw fail(
            fmt::format("a haplotype of {} characters for segsites: {}", line.size(), segsites));
      if (line.find_first_not_of("01") != std::string_view::npos)
        throw fail("a haplotype line holds something other than 0 and 1");
      rep.lines.push_back(offset);
    }
    const auto n = static_cast<std::int64_t>(rep.lines.size());
    if (out.haplotypes >= 0 && n != out.haplotypes)
      throw FormatError(fmt::format("{}: the replicate at line {} has {} haplotypes, others {}",
                                    in.name(), rep.first_line, n, out.haplotypes));
    out.haplotypes = n;
    if (line.starts_with("//")) {  // the next replicate starts on the line just read
      if (first_only) break;
      out.replicates.emplace_back();
      pending = true;
    }
  }
  if (out.replicates.empty())
    throw FormatError(fmt::format("{}: no replicate (`//` line) found: not ms output", in.name()));
  if (out.haplotypes < 0) {
    out.haplotypes = command_haplotypes;
    out.declared_only = true;
  }
  if (first_only) out.replicates.resize(1);
  return out;
}

/// Integer positions 1..length, strictly increasing, nearest to floor(x * length) + 1.
std::vector<std::int32_t> scale_positions(const std::vector<double>& x, std::int64_t length,
                                          std::size_t replicate) {
  const auto n = static_cast<std::int64_t>(x.size());
  if (n > length)
    throw UsageError(fmt::format("replicate {} has {} sites, more than --length {} bp can hold",
                                 replicate + 1, n, length));
  std::vector<std::int64_t> p(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    p[i] = std::clamp<std::int64_t>(
        static_cast<std::int64_t>(std::floor(x[i] * static_cast<double>(length))) + 1, 1, length);
    if (i > 0) p[i] = std::max(p[i], p[i - 1] + 1);  // collisions move up...
  }
  for (std::size_t i = x.size(); i-- > 0;)  // ...and down again where they ran past the end
    p[i] = std::min(p[i], i + 1 < x.size() ? p[i + 1] - 1 : length);
  return {p.begin(), p.end()};
}

}  // namespace

WriteReport ms_to_vcz(const std::string& input, const std::filesystem::path& store_dir,
                      const MsOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  if (o.ploidy < 1 || o.ploidy > 64)
    throw UsageError(fmt::format("--ploidy {} (expected 1 to 64)", o.ploidy));
  const MsText text(input);
  const MsInput ms = index_ms(text, o.first_only);
  const std::int64_t haps = std::max<std::int64_t>(ms.haplotypes, 0);
  if (haps % o.ploidy != 0)
    throw UsageError(fmt::format("{}: {} haplotypes do not make samples of ploidy {}", text.name(),
                                 haps, o.ploidy));
  const std::int64_t declared_samples = haps / o.ploidy;
  if (ms.declared_only && o.samples_chunk_size > 0 &&
      (declared_samples + o.samples_chunk_size - 1) / o.samples_chunk_size >
          kMaxDeclaredSampleChunks)
    throw FormatError(fmt::format(
        "{}: line 1 declares {} haplotypes but no replicate has a haplotype line; {} samples in "
        "chunks of {} would be more than {} sample_id chunks holding no genotype (use a larger "
        "--samples-chunk-size)",
        text.name(), haps, declared_samples, o.samples_chunk_size, kMaxDeclaredSampleChunks));
  const std::int64_t length = o.length > 0 ? o.length : ms.nsites > 0 ? ms.nsites : 1'000'000;
  if (length > 2'147'483'646)
    throw UsageError(fmt::format("--length {} exceeds variant_position's int32", length));

  // Variants of all replicates, in order: replicate r's sites start at first[r].
  std::vector<std::int64_t> first = {0};
  std::vector<std::vector<std::int32_t>> positions;
  for (std::size_t r = 0; r < ms.replicates.size(); ++r) {
    positions.push_back(scale_positions(ms.replicates[r].positions, length, r));
    first.push_back(first.back() + static_cast<std::int64_t>(positions.back().size()));
  }
  GenotypeStoreSpec spec;
  spec.samples = haps / o.ploidy;
  spec.variants = first.back();
  spec.ploidy = o.ploidy;
  spec.variants_chunk = o.variants_chunk_size;
  spec.samples_chunk = o.samples_chunk_size;
  spec.zarr_format = o.zarr_format;
  for (std::size_t r = 0; r < ms.replicates.size(); ++r) {
    spec.contigs.push_back(fmt::format("{}", r + 1));
    spec.contig_lengths.push_back(length);
  }
  spec.source = "vczstats convert --from ms 0.1.0";
  GenotypeStoreWriter writer(store_dir, spec);
  std::vector<std::string> ids;
  for (std::int64_t s = 0; s < spec.samples; ++s) ids.push_back(fmt::format("tsk_{}", s));
  writer.write_samples(ids);

  const std::int64_t chunks = writer.variant_chunks(), sample_chunks = writer.sample_chunks();
  const std::int64_t vc = writer.spec().variants_chunk, sc = writer.spec().samples_chunk;
  const std::int64_t P = o.ploidy;
  const std::string_view data = text.text();
  auto locate = [&](std::int64_t v) {  // (replicate, site) of variant v
    const auto r = static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), v) -
                                            first.begin() - 1);
    return std::pair<std::size_t, std::int64_t>{r, v - first[r]};
  };
  auto task = [&](std::int64_t c, std::int64_t s) {
    const std::int64_t v0 = c * vc, rows = std::min(vc, spec.variants - v0);
    if (s == sample_chunks) {  // the chunk's per-variant rows
      std::vector<std::int32_t> contig(static_cast<std::size_t>(rows)),
          pos(static_cast<std::size_t>(rows));
      for (std::int64_t i = 0; i < rows; ++i) {
        const auto [r, j] = locate(v0 + i);
        contig[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(r);
        pos[static_cast<std::size_t>(i)] = positions[r][static_cast<std::size_t>(j)];
      }
      const std::vector<char> ref(static_cast<std::size_t>(rows), 'A'),
          alt(static_cast<std::size_t>(rows), 'T');
      writer.write_variants(c, {contig, pos, ref, alt});
      return;
    }
    thread_local std::vector<std::int8_t> gt;
    thread_local std::vector<std::uint8_t> scratch;
    gt.assign(static_cast<std::size_t>(writer.genotype_chunk_elements()), -1);
    const std::int64_t s0 = s * sc, cols = std::min(sc, spec.samples - s0);
    // Row by row within each replicate the chunk covers: haplotype h's sites [j0, j0 + n) are
    // consecutive bytes of its line.
    for (std::int64_t i = 0; i < rows;) {
      const auto [r, j0] = locate(v0 + i);
      const Replicate& rep = ms.replicates[r];
      const std::int64_t n =
          std::min(rows - i, static_cast<std::int64_t>(rep.positions.size()) - j0);
      for (std::int64_t h = 0; h < cols * P; ++h) {
        const char* line = data.data() + rep.lines[static_cast<std::size_t>(s0 * P + h)] + j0;
        std::int8_t* out = gt.data() + i * sc * P + h;
        for (std::int64_t k = 0; k < n; ++k)
          out[k * sc * P] = static_cast<std::int8_t>(line[k] - '0');
      }
      i += n;
    }
    writer.write_genotypes(c, s, gt, scratch);
  };
  const unsigned threads = o.threads ? o.threads : hardware_threads();
  ThreadPool pool(std::max(1u, threads - 1));
  const std::int64_t batch = std::max<std::int64_t>(1, 4 * threads / (sample_chunks + 1));
  for (std::int64_t c0 = 0; c0 < chunks; c0 += batch) {
    const std::int64_t n = std::min(batch, chunks - c0);
    pool.parallel_for(n * (sample_chunks + 1), [&](std::int64_t t) {
      if (o.cancelled && o.cancelled->load())
        throw IoError(text.name() + ": conversion interrupted");
      task(c0 + t / (sample_chunks + 1), t % (sample_chunks + 1));
    });
    if (o.progress) o.progress(std::min(spec.variants, (c0 + n) * vc), spec.variants);
  }
  writer.finish();
  WriteReport rep;
  rep.variants = spec.variants;
  rep.samples = spec.samples;
  rep.ploidy = o.ploidy;
  rep.contigs = static_cast<std::int64_t>(spec.contigs.size());
  rep.length = length;
  rep.calls = spec.variants * spec.samples * o.ploidy;
  rep.stored_bytes = writer.stored_bytes();
  rep.genotype_stored_bytes = writer.genotype_stored_bytes();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace vczstats::simulate
