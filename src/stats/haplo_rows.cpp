#include "stats/haplo_rows.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "stats/element_type.hpp"
#include "stats/haplo_pack.hpp"
#include "vczstats/error.hpp"
#include "vczstats/query.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::stats::haplo {
namespace {

/// Bits [bit, bit + len) of @p src (len <= 64).
std::uint64_t get_bits(const std::uint64_t* src, std::int64_t bit, int len) {
  const std::int64_t w = bit / 64;
  const int o = static_cast<int>(bit % 64);
  std::uint64_t v = src[w] >> o;
  if (o + len > 64) v |= src[w + 1] << (64 - o);
  return len == 64 ? v : v & ((std::uint64_t{1} << len) - 1);
}

/// OR @p v (len bits) into @p dst at bit @p bit.
void put_bits(std::uint64_t* dst, std::int64_t bit, std::uint64_t v, int len) {
  const std::int64_t w = bit / 64;
  const int o = static_cast<int>(bit % 64);
  dst[w] |= v << o;
  if (o + len > 64) dst[w + 1] |= v >> (64 - o);
}

/// Where the CPU has POPCNT, the popcounts below are one instruction each (the default x86-64
/// target makes std::popcount a libgcc call; a million rows of 10^4 haplotypes took seconds).
#if defined(__x86_64__) && !defined(__clang__)
#define VCZ_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define VCZ_POPCNT_CLONES
#endif

/// OR the bits of @p set's runs in @p plane into @p dst (set order), and return their count.
VCZ_POPCNT_CLONES std::int64_t gather(const std::uint64_t* plane, const HapSet& set,
                                      std::uint64_t* dst, std::int64_t words) {
  if (set.runs.size() == 1 && set.runs[0].first % 64 == 0) {
    // One run starting on a word (every sample, or a leading block of them): whole words.
    const std::int64_t b = set.runs[0].first / 64, n = set.runs[0].second - set.runs[0].first;
    std::int64_t ones = 0;
    for (std::int64_t w = 0; w < n / 64; ++w) ones += std::popcount(dst[w] = plane[b + w]);
    if (n % 64) {
      const std::uint64_t v = plane[b + n / 64] & ((std::uint64_t{1} << (n % 64)) - 1);
      ones += std::popcount(dst[n / 64] = v);
    }
    std::fill(dst + (n + 63) / 64, dst + words, 0);
    return ones;
  }
  std::fill(dst, dst + words, 0);
  std::int64_t at = 0, ones = 0;
  for (const auto& [b, e] : set.runs)
    for (std::int64_t k = b; k < e; k += 64) {
      const int len = static_cast<int>(std::min<std::int64_t>(64, e - k));
      const std::uint64_t v = get_bits(plane, k, len);
      ones += std::popcount(v);
      put_bits(dst, at + (k - b), v, len);
      if (k + len >= e) at += e - b;
    }
  return ones;
}

VCZ_POPCNT_CLONES std::int64_t popcount_prefix(const std::uint64_t* bits, std::int64_t n) {
  std::int64_t c = 0;
  for (std::int64_t w = 0; w < n / 64; ++w) c += std::popcount(bits[w]);
  if (n % 64) c += std::popcount(bits[n / 64] & ((std::uint64_t{1} << (n % 64)) - 1));
  return c;
}

HapSet runs_of(const Query& q, const std::vector<int>& pops) {
  HapSet s;
  const std::int64_t ploidy = q.store.has_genotypes() ? q.store.ploidy() : 2;
  for (int pop : pops) {
    for (std::size_t i = 0; i < q.pops.of.size(); ++i) {
      if (q.pops.of[i] != pop) continue;
      const auto b = static_cast<std::int64_t>(i) * ploidy;
      if (!s.runs.empty() && s.runs.back().second == b)
        s.runs.back().second = b + ploidy;
      else
        s.runs.emplace_back(b, b + ploidy);
      s.n += ploidy;
    }
    if (s.n_a == 0) s.n_a = s.n;
  }
  return s;
}

}  // namespace

HapSet population_set(const Query& q, int pop) {
  return runs_of(q, {pop});
}

HapSet pair_set(const Query& q, int a, int b) {
  return runs_of(q, {a, b});
}

std::shared_ptr<const std::vector<std::string>> contig_names(const Query& q) {
  return std::make_shared<const std::vector<std::string>>(q.store.contig_ids());
}

// ---- genetic map ------------------------------------------------------------------------------

namespace {

/// Whether @p field begins with @p prefix (lower case), letters compared without case.
bool starts_nocase(const std::string& field, const char* prefix) {
  std::size_t k = 0;
  for (; prefix[k] != 0; ++k)
    if (k >= field.size() ||
        std::tolower(static_cast<unsigned char>(field[k])) != static_cast<unsigned char>(prefix[k]))
      return false;
  return true;
}

/// @p text read whole as a number (double) or an integer (std::int64_t), or false.
template <class T>
bool whole(const std::string& text, T& value) {
  try {
    std::size_t used = 0;
    if constexpr (std::is_same_v<T, double>)
      value = std::stod(text, &used);
    else
      value = std::stoll(text, &used);
    return used == text.size();
  } catch (const std::exception&) {
    return false;
  }
}

/// HapMap's header: Chromosome Position(bp) Rate(cM/Mb) Map(cM) (as the HapMap II and 1000
/// Genomes genetic_map_chrN files; the names' beginnings, without case).
bool hapmap_header(const std::vector<std::string>& f) {
  return f.size() == 4 && starts_nocase(f[0], "chr") && starts_nocase(f[1], "pos") &&
         starts_nocase(f[2], "rate") && (starts_nocase(f[3], "map") || starts_nocase(f[3], "gen"));
}

/// A one-region map's header: the position first and the map last (moments.LD's `pos Map(cM)`,
/// HapMap II's `position COMBINED_rate(cM/Mb) Genetic_Map(cM)`).
bool region_header(const std::vector<std::string>& f) {
  return f.size() >= 2 && starts_nocase(f[0], "pos") &&
         (starts_nocase(f.back(), "map") || starts_nocase(f.back(), "gen"));
}

}  // namespace

GeneticMap::GeneticMap(const std::string& path) : path_(path) {
  std::ifstream in(path);
  if (!in) throw IoError(path + ": cannot open the genetic map");
  parse(in);
}

GeneticMap::GeneticMap(std::istream& in, const std::string& path) : path_(path) {
  parse(in);
}

void GeneticMap::parse(std::istream& in) {
  const std::string& path = path_;
  std::string line;
  std::int64_t lineno = 0;
  bool first = true, hapmap = false;
  std::size_t region_columns = 0;  // a one-region map's (its header's) columns
  std::vector<std::string> f;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    f.clear();
    for (std::string x; ls >> x;) f.push_back(x);
    if (f.empty()) continue;
    const std::string at = path + ": line " + std::to_string(lineno) + ": ";
    double number = 0;
    if (first) {  // a header (its fourth field, or last, not a number) names the format
      first = false;
      if (!whole(f.size() >= 4 ? f[3] : f.back(), number)) {
        if (hapmap_header(f)) {
          hapmap = true;
        } else if (region_header(f)) {
          region_columns = f.size();
          one_region_ = true;
        } else {
          throw UsageError(at +
                           "a header, but neither HapMap's 'Chromosome Position(bp) Rate(cM/Mb) "
                           "Map(cM)' nor a one-region map's 'pos ... Map(cM)' (a plink .map, "
                           "chrom id cM bp, has none)");
        }
        continue;
      }
    }
    // plink: chrom, id, cM, bp (further columns ignored); HapMap: chrom, bp, rate, cM
    std::string chrom, cm, bp;
    if (one_region_) {
      if (f.size() != region_columns)
        throw UsageError(at + "expected " + std::to_string(region_columns) +
                         " columns as the header");
      bp = f.front();
      cm = f.back();
    } else if (hapmap) {
      if (f.size() != 4)
        throw UsageError(at +
                         "expected 4 columns (Chromosome Position(bp) Rate(cM/Mb) Map(cM)) as the "
                         "header");
      chrom = f[0];
      bp = f[1];
      cm = f[3];
      if (!whole(f[2], number)) throw UsageError(at + "'" + f[2] + "' is not a rate (cM/Mb)");
    } else {
      if (f.size() < 4)
        throw UsageError(at + "expected 4 columns (chrom, id, cM, bp) as plink .map");
      chrom = f[0];
      cm = f[2];
      bp = f[3];
    }
    double g = 0;
    std::int64_t p = 0;
    if (!whole(cm, g) || !whole(bp, p))
      throw UsageError(at + "'" + cm + "' '" + bp + "' are not a genetic and a physical position");
    auto& pts = points_[chrom];
    if (!pts.empty() && (p <= pts.back().first || g < pts.back().second))
      throw UsageError(at + chrom + ":" + bp +
                       " does not follow the previous position in both bp and cM");
    pts.emplace_back(p, g);
  }
}

const std::vector<std::pair<std::int64_t, double>>* GeneticMap::points(
    const std::string& contig) const {
  if (one_region_) {
    std::lock_guard lock(bound_mutex_);
    if (bound_contig_.empty()) bound_contig_ = contig;
    if (contig != bound_contig_)
      throw UsageError(path_ +
                       ": the genetic map has no chromosome column, so it serves one "
                       "contig, but the run reads " +
                       bound_contig_ + " and " + contig +
                       " (select one with -r, or add a Chromosome column: HapMap's "
                       "'Chromosome Position(bp) Rate(cM/Mb) Map(cM)')");
    return points_.empty() ? nullptr : &points_.begin()->second;
  }
  auto it = points_.find(contig);
  // "chr1" in the map for the store's "1", or the reverse
  if (it == points_.end())
    it = points_.find(contig.rfind("chr", 0) == 0 ? contig.substr(3) : "chr" + contig);
  return it == points_.end() ? nullptr : &it->second;
}

double GeneticMap::at(const std::string& contig, std::int64_t pos) const {
  const auto* found = points(contig);
  if (found == nullptr || found->size() < 2)
    throw UsageError(path_ + ": the genetic map has fewer than two positions on contig " + contig);
  const auto& pts = *found;
  auto hi = std::upper_bound(pts.begin(), pts.end(), pos,
                             [](std::int64_t p, const auto& x) { return p < x.first; });
  if (hi == pts.begin()) ++hi;
  if (hi == pts.end()) --hi;
  const auto lo = std::prev(hi);
  const double x0 = static_cast<double>(lo->first), x1 = static_cast<double>(hi->first);
  return lo->second + (static_cast<double>(pos) - x0) * (hi->second - lo->second) / (x1 - x0);
}

// ---- extraction -------------------------------------------------------------------------------

RowExtractor::RowExtractor(HapSet set, RowFilter filter, std::shared_ptr<const GeneticMap> map,
                           std::shared_ptr<const std::vector<std::string>> contigs)
    : set_(std::move(set)),
      filter_(filter),
      map_(std::move(map)),
      contigs_(std::move(contigs)),
      words_(haplotype_words(set_.n)),
      scratch_(static_cast<std::size_t>(words_)) {}

std::optional<RowInfo> RowExtractor::extract(const PhasedHaplotypeView& view, std::int64_t r,
                                             const vcz::VariantBlock& vb, int ancestral,
                                             std::uint64_t* bits) const {
  return extract(view, r, vb, ancestral, bits, scratch_.data());
}

std::optional<RowInfo> RowExtractor::extract(const PhasedHaplotypeView& view, std::int64_t r,
                                             const vcz::VariantBlock& vb, int ancestral,
                                             std::uint64_t* bits, std::uint64_t* scratch) const {
  const std::int64_t n = set_.n;
  if (gather(view.plane(r, 0), set_, scratch, words_) > 0) return std::nullopt;
  // The alleles present: allele 0 unless every haplotype carries another.
  int lo = -1, hi = -1, present = 0;
  std::int64_t others = 0;
  for (int p = 1; p < view.planes; ++p) {
    const std::int64_t c = gather(view.plane(r, p), set_, scratch, words_);
    if (c == 0) continue;
    others += c;
    if (++present > 2) return std::nullopt;
    if (lo < 0) lo = p;
    hi = p;
  }
  if (others < n) {
    if (++present > 2) return std::nullopt;
    lo = 0;
    if (hi < 0) hi = 0;
  }
  RowInfo info;
  info.variant = view.variant_offset + r;
  info.contig = vb.contig[static_cast<std::size_t>(r)];
  info.pos = vb.position[static_cast<std::size_t>(r)];
  info.lo = lo;
  info.hi = hi;
  if (!vb.alleles.empty()) info.ref_length = static_cast<std::int32_t>(vb.allele(r, 0).size());
  info.ancestral = ancestral;
  if (lo != hi) {
    info.carriers = gather(view.plane(r, hi), set_, bits, words_);
    info.carriers_a = popcount_prefix(bits, set_.n_a);
  } else {
    std::fill(bits, bits + words_, 0);
  }
  if (filter_.polymorphic && lo == hi) return std::nullopt;
  if (filter_.maf > 0) {
    const double f = static_cast<double>(info.carriers) / static_cast<double>(n);
    if (!(f >= filter_.maf && 1.0 - f >= filter_.maf)) return std::nullopt;
  }
  info.gpos = map_ ? map_->at((*contigs_)[static_cast<std::size_t>(info.contig)], info.pos)
                   : static_cast<double>(info.pos);
  return info;
}

// ---- the store --------------------------------------------------------------------------------

StoreRows::StoreRows(const Query& q) : q_(q) {
  if (!q.store.has_genotypes())
    throw FormatError(q.store.path() +
                      " has no call_genotype: the haplotype statistics need "
                      "phased genotypes");
  plan_ = q.store.plan(q.regions, q.overlap);
  planes_ = std::max(vcz::store_max_alleles(q.store), 1);
  const bool polarise = q.ancestral != "ref";
  variants_reader_ = std::make_unique<vcz::VariantReader>(
      q.store, polarise || SiteFilter(q).needs_ref_length(), false);
  if (polarise) polarise_ = std::make_unique<vcz::AncestralAlleles>(q.store, q.ancestral);
}

StoreRows::~StoreRows() = default;

std::int64_t StoreRows::unit_at(std::int64_t v) const {
  const auto& units = plan_.units;
  auto it = std::upper_bound(units.begin(), units.end(), v,
                             [](std::int64_t x, const vcz::WorkUnit& u) { return x < u.end; });
  return static_cast<std::int64_t>(it - units.begin());
}

const vcz::VariantBlock& StoreRows::variants(std::int64_t u) {
  if (cached_ == u) return unit_.variants;
  if (cached_variants_ != u) {
    const auto& unit = plan_.units[static_cast<std::size_t>(u)];
    vb_ = variants_reader_->read(unit.begin, unit.end);
    cached_variants_ = u;
  }
  return vb_;
}

const StoreUnit& StoreRows::read(std::int64_t u) {
  if (cached_ == u) return unit_;
  if (!genotypes_) {
    genotypes_ = std::make_unique<stream::GenotypeReader>(
        q_.store, q_.samples, stream::GenotypeMask{q_.filters.min_gq, q_.filters.min_dp});
    phased_ = std::make_unique<stream::PhasedReader>(q_.store, q_.samples, *genotypes_);
  }
  const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(u)];
  const std::int64_t ploidy = genotypes_->ploidy();
  const std::int64_t words = haplotype_words(q_.samples.size() * ploidy);
  unit_.words.assign(static_cast<std::size_t>(unit.size() * planes_ * words), 0);
  const auto blocks = static_cast<std::int64_t>(genotypes_->num_blocks());
  std::vector<std::vector<std::uint64_t>> packed(static_cast<std::size_t>(blocks));
  std::vector<std::int64_t> offset(static_cast<std::size_t>(blocks));
  ThreadPool& pool = ThreadPool::shared();  // (as append(): threads even while a pass runs)
  pool.run_claimed(pool.size(), blocks, [&](std::int64_t b) {
    stream::BlockBuffers buffers;
    std::vector<std::byte> phased;
    const GenotypeChunkView view = genotypes_->read(unit, static_cast<std::size_t>(b), buffers);
    phased_->check(unit, static_cast<std::size_t>(b), view, phased);
    const int shift = static_cast<int>(view.sample_offset * ploidy % 64);
    offset[static_cast<std::size_t>(b)] = view.sample_offset * ploidy / 64;
    if (!with_element_type(view.elem_bytes, [&](auto t) {
          pack_block_planes<decltype(t)>(view, planes_, shift, packed[static_cast<std::size_t>(b)]);
        }))
      throw Error("packed haplotypes: unsupported genotype width");
  });
  for (std::int64_t b = 0; b < blocks; ++b)
    or_rows(unit_.words, words, packed[static_cast<std::size_t>(b)], unit.size() * planes_,
            offset[static_cast<std::size_t>(b)]);
  unit_.view = PhasedHaplotypeView{unit_.words.data(),
                                   unit.size(),
                                   q_.samples.size() * ploidy,
                                   static_cast<int>(ploidy),
                                   planes_,
                                   words,
                                   unit.begin};
  unit_.variants = variants(u);
  unit_.ancestral = polarise_ ? polarise_->indices(unit_.variants) : std::vector<int>{};
  unit_.unit = &unit;
  cached_ = u;
  return unit_;
}

// ---- the run of rows --------------------------------------------------------------------------

RowSource::RowSource(const Query& q, RowExtractor extractor, std::shared_ptr<StoreRows> store)
    : q_(q),
      extractor_(std::move(extractor)),
      store_(std::move(store)),
      row_(static_cast<std::size_t>(extractor_.words())) {}

std::int64_t RowSource::find(std::int64_t v) const {
  auto b = info_.begin() + head_;
  auto it = std::lower_bound(b, info_.end(), v,
                             [](const RowInfo& r, std::int64_t x) { return r.variant < x; });
  if (it == info_.end() || it->variant != v) return -1;
  return it - b;
}

void RowSource::push(const RowInfo& info, const std::uint64_t* bits) {
  if (info_.empty() || info_.back().contig != info.contig || runs_.empty())
    runs_.push_back(static_cast<std::int64_t>(info_.size()));
  info_.push_back(info);
  pos_.push_back(info.pos);
  gpos_.push_back(info.gpos);
  bits_.insert(bits_.end(), bits, bits + extractor_.words());
}

void RowSource::append(const UnitData& u) {
  const auto* haplotypes = u.product<PhasedHaplotypeView>(kPhasedHaplotypes);
  if (!haplotypes) return;  // no pass ran (an empty plan or no sample)
  // The unit's rows are extracted in blocks on the shared pool, then kept in order.
  const std::int64_t rows = u.rows(), words = extractor_.words();
  constexpr std::int64_t kRowsPerTask = 128;
  std::vector<std::optional<RowInfo>> infos(static_cast<std::size_t>(rows));
  unit_bits_.resize(static_cast<std::size_t>(rows * words));
  // On the pass's consumer thread while the pass's readers hold the pool's workers (the GPU's
  // host decode above all): run_claimed gets the threads anyway, where parallel_for would take
  // only the workers free at that moment (often none: the loop then ran on the consumer alone).
  ThreadPool& pool = ThreadPool::shared();
  pool.run_claimed(pool.size(), (rows + kRowsPerTask - 1) / kRowsPerTask, [&](std::int64_t t) {
    std::vector<std::uint64_t> scratch(static_cast<std::size_t>(words));
    for (std::int64_t r = t * kRowsPerTask; r < std::min(rows, (t + 1) * kRowsPerTask); ++r) {
      if (!u.selected(r)) continue;
      const int anc = u.ancestral.empty() ? 0 : u.ancestral[static_cast<std::size_t>(r)];
      infos[static_cast<std::size_t>(r)] = extractor_.extract(
          *haplotypes, r, *u.variants, anc, unit_bits_.data() + r * words, scratch.data());
    }
  });
  for (std::int64_t r = 0; r < rows; ++r)
    if (const auto& info = infos[static_cast<std::size_t>(r)])
      push(*info, unit_bits_.data() + r * words);
}

bool RowSource::contig_first(std::int64_t i) const {
  if (i > 0) return info(i - 1).contig != info(i).contig;
  return start_known_;
}

bool RowSource::contig_last(std::int64_t i) const {
  if (i + 1 < size()) return info(i + 1).contig != info(i).contig;
  return end_known_;
}

void RowSource::rebuild_runs() {
  runs_.clear();
  for (std::size_t k = 0; k < info_.size(); ++k)
    if (k == 0 || info_[k].contig != info_[k - 1].contig)
      runs_.push_back(static_cast<std::int64_t>(k));
}

std::pair<std::int64_t, std::int64_t> RowSource::run_of(std::int64_t i) const {
  const std::int64_t abs = head_ + i;
  auto it = std::upper_bound(runs_.begin(), runs_.end(), abs);
  const std::int64_t begin = *std::prev(it);
  const std::int64_t end = it == runs_.end() ? static_cast<std::int64_t>(info_.size()) : *it;
  return {begin, end};
}

std::int64_t RowSource::contig_begin(std::int64_t i) const {
  return std::max(run_of(i).first, head_) - head_;
}

std::int64_t RowSource::contig_end(std::int64_t i) const {
  return run_of(i).second - head_;
}

void RowSource::compact() {
  if (head_ == 0) return;
  const auto h = static_cast<std::size_t>(head_);
  info_.erase(info_.begin(), info_.begin() + static_cast<std::ptrdiff_t>(h));
  pos_.erase(pos_.begin(), pos_.begin() + static_cast<std::ptrdiff_t>(h));
  gpos_.erase(gpos_.begin(), gpos_.begin() + static_cast<std::ptrdiff_t>(h));
  bits_.erase(bits_.begin(), bits_.begin() + static_cast<std::ptrdiff_t>(
                                                 h * static_cast<std::size_t>(extractor_.words())));
  head_ = 0;
  rebuild_runs();
}

void RowSource::trim(std::int64_t i) {
  if (i <= 0) return;
  i = std::min(i, size());
  start_known_ = i < size() ? contig_first(i) : false;
  head_ += i;
  fresh_ = std::max<std::int64_t>(0, fresh_ - i);
  if (head_ > size()) compact();
}

std::int64_t RowSource::extend_back(std::int64_t i, std::int64_t want) {
  if (size() == 0) return 0;
  const std::int64_t begin = contig_begin(i);
  if (i - begin >= want || contig_first(begin)) return 0;
  // begin == 0 here: read the units before the first row's variant, last row first.
  const std::int32_t contig = info(0).contig;
  const auto& units = store_->plan().units;
  std::int64_t have = i, v = info(0).variant;
  auto after = std::partition_point(units.begin(), units.end(),
                                    [&](const vcz::WorkUnit& u) { return u.begin < v; });
  auto u = static_cast<std::int64_t>(after - units.begin()) - 1;  // last unit starting before v
  std::vector<RowInfo> infos;                                     // nearest first
  std::vector<std::uint64_t> bits;
  bool done = false;
  for (; u >= 0 && have < want && !done; --u) {
    const vcz::WorkUnit& unit = units[static_cast<std::size_t>(u)];
    const std::int64_t stop = std::min(unit.end, v);
    const vcz::VariantBlock& vb = store_->variants(u);
    std::int64_t from = stop;  // rows [from, stop) are on the contig
    while (from > unit.begin) {
      const auto r = static_cast<std::size_t>(from - 1 - unit.begin);
      if ((unit.mask.empty() || unit.mask[r]) && vb.contig[r] != contig) {
        done = true;
        break;
      }
      --from;
    }
    if (from == stop) continue;
    const StoreUnit& su = store_->read(u);
    for (std::int64_t x = stop - 1; x >= from && have < want; --x) {
      const auto r = static_cast<std::size_t>(x - unit.begin);
      if (!unit.mask.empty() && !unit.mask[r]) continue;
      const int anc = su.ancestral.empty() ? 0 : su.ancestral[r];
      if (auto info = extractor_.extract(su.view, x - unit.begin, su.variants, anc, row_.data())) {
        infos.push_back(*info);
        bits.insert(bits.end(), row_.begin(), row_.end());
        ++have;
      }
    }
  }
  if (have < want) start_known_ = true;  // the contig (or the selection) starts before them
  const auto added = static_cast<std::int64_t>(infos.size());
  if (added == 0) return 0;
  compact();
  const std::int64_t w = extractor_.words();
  std::vector<RowInfo> ni;
  std::vector<std::int64_t> np;
  std::vector<double> ng;
  std::vector<std::uint64_t> nb;
  for (std::int64_t k = added - 1; k >= 0; --k) {
    const RowInfo& r = infos[static_cast<std::size_t>(k)];
    ni.push_back(r);
    np.push_back(r.pos);
    ng.push_back(r.gpos);
    nb.insert(nb.end(), bits.begin() + k * w, bits.begin() + (k + 1) * w);
  }
  ni.insert(ni.end(), info_.begin(), info_.end());
  np.insert(np.end(), pos_.begin(), pos_.end());
  ng.insert(ng.end(), gpos_.begin(), gpos_.end());
  nb.insert(nb.end(), bits_.begin(), bits_.end());
  info_ = std::move(ni);
  pos_ = std::move(np);
  gpos_ = std::move(ng);
  bits_ = std::move(nb);
  rebuild_runs();
  fresh_ += added;
  return added;
}

void RowSource::extend_front(std::int64_t i, std::int64_t want) {
  if (size() == 0) return;
  const std::int64_t end = contig_end(i);
  if (end - 1 - i >= want || contig_last(end - 1)) return;
  const std::int32_t contig = info(size() - 1).contig;
  std::int64_t have = size() - 1 - i;
  std::int64_t v = info(size() - 1).variant + 1;
  std::int64_t u = store_->unit_at(v);
  const auto nunits = static_cast<std::int64_t>(store_->plan().units.size());
  bool done = false;
  while (have < want && !done) {
    if (u >= nunits) {
      done = true;
      break;
    }
    const vcz::WorkUnit& unit = store_->plan().units[static_cast<std::size_t>(u)];
    const std::int64_t from = std::max(unit.begin, v);
    const vcz::VariantBlock& vb = store_->variants(u);
    bool any = false;
    for (std::int64_t x = from; x < unit.end; ++x) {
      const auto r = static_cast<std::size_t>(x - unit.begin);
      if (!unit.mask.empty() && !unit.mask[r]) continue;
      if (vb.contig[r] != contig) {
        done = true;
        break;
      }
      any = true;
    }
    if (any) {
      const StoreUnit& su = store_->read(u);
      for (std::int64_t x = from; x < unit.end; ++x) {
        const auto r = static_cast<std::size_t>(x - unit.begin);
        if (!unit.mask.empty() && !unit.mask[r]) continue;
        if (su.variants.contig[r] != contig) break;
        const int anc = su.ancestral.empty() ? 0 : su.ancestral[r];
        if (auto info =
                extractor_.extract(su.view, x - unit.begin, su.variants, anc, row_.data())) {
          push(*info, row_.data());
          ++have;
        }
      }
    }
    v = unit.end;
    ++u;
  }
  end_known_ = done;
}

void RowSource::seek(std::int64_t v) {
  info_.clear();
  pos_.clear();
  gpos_.clear();
  bits_.clear();
  runs_.clear();
  head_ = fresh_ = 0;
  start_known_ = end_known_ = false;
  const std::int64_t u = store_->unit_at(v);
  if (u >= static_cast<std::int64_t>(store_->plan().units.size())) return;
  const StoreUnit& su = store_->read(u);
  const vcz::WorkUnit& unit = *su.unit;
  for (std::int64_t x = unit.begin; x < unit.end; ++x) {
    const auto r = static_cast<std::size_t>(x - unit.begin);
    if (!unit.mask.empty() && !unit.mask[r]) continue;
    const int anc = su.ancestral.empty() ? 0 : su.ancestral[r];
    if (auto info = extractor_.extract(su.view, x - unit.begin, su.variants, anc, row_.data()))
      push(*info, row_.data());
  }
  fresh_ = size();
}

BatchView batch_over(const RowSource& rows, std::int64_t n, std::int64_t n_a) {
  BatchView b;
  b.bits = rows.bits(0);
  b.words = rows.extractor().words();
  b.pos = rows.positions();
  b.gpos = rows.genetic();
  b.rows = rows.size();
  b.n = static_cast<std::int32_t>(n);
  b.n_a = static_cast<std::int32_t>(n_a);
  return b;
}

}  // namespace vczstats::stats::haplo
