// The variant-pair band on a CUDA device (backend/pair_band.hpp).
//
//   unit u on the lane stream (its words valid there)   band stream
//   selected rows -> bit planes + totals in the halo  ─▶  pair lists (i, j) from the host, at most
//   (a device buffer of rows [front, end)); totals       kMaxPairs a launch: counts by AND +
//   copied back for the host's bookkeeping               popcount, evaluated on the device
//                                                        (GenotypeEm, GenotypeTable: counts
//                                                        back, the EM or the table's packing
//                                                        on the host's threads), passing
//                                                        pairs back
//
// With a reducer that runs on the device (gpu_reduces(): ld-stats' band over every haplotype),
// the rows kernel also counts each row's non-REF within the reducer's count masks, the host
// adds each new row's position and coordinate, and one kernel sums the unit's pairs into the
// reducer's bins (stats/ld_moments_terms.hpp, exact 128-bit sums): only the bins come back, as
// the batch's PairSum. A rows_only band (ld-stats' population bands then) hands over rows and
// boundary planes alone.
//
// Each unit is finished before device_unit returns, so take() hands over every batch so far.
// The host side (rows, partners, halo, eviction, tail) is BandRows, as for the CPU band; the
// per-pair math is stats/ld_math.hpp on both, so the batches are the CPU band's (pairs in
// another order within a batch).

#include <algorithm>
#include <cstring>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/gpu_pipeline.hpp"
#include "backend/cuda/pair_band_kernels.cuh"
#include "backend/pair_band_rows.hpp"

namespace vczstats::backend {
namespace {

using cuda::DeviceBuffer;
using cuda::Event;
using cuda::PinnedBuffer;

constexpr std::int64_t kMaxPairs = 1 << 20;  // pairs per launch

class GpuPairBand final : public PairBand {
 public:
  explicit GpuPairBand(const PairBandSpec& spec)
      : spec_(spec),
        rows_(spec),
        ctx_(cuda::DeviceContext::get(spec.device)),
        threads_(spec.threads ? spec.threads : hardware_threads()),
        prune_thr_(stats::ld::prune_threshold(spec.request.min_r2)),
        counts_back_(spec.request.measure == PairMeasure::GenotypeEm ||
                     spec.request.measure == PairMeasure::GenotypeTable),
        start_(true),
        stop_(true) {
    while (lanes_ < 32 && lanes_ < rows_.plane_words()) lanes_ *= 2;
    found_ = DeviceBuffer(ctx_.pool(), 8, stream_.get());
    found_host_ = PinnedBuffer(8);
    const std::vector<std::uint64_t>& mask = spec.mask;
    if (!mask.empty()) {
      if (static_cast<std::int64_t>(mask.size()) < rows_.plane_words())
        throw Error("variant pairs: a mask narrower than the selection");
      mask_ = DeviceBuffer(ctx_.pool(), static_cast<std::int64_t>(mask.size() * 8), stream_.get());
      VCZ_CUDA_CHECK(cudaMemcpyAsync(mask_.data(), mask.data(), mask.size() * 8,
                                     cudaMemcpyHostToDevice, stream_.get()));
    }
    if (gpu_reduces(spec)) start_reduction();
    stream_.synchronize();
  }

  ~GpuPairBand() override { cudaStreamSynchronize(stream_.get()); }

  void host_unit(std::int64_t, const PackedGenotypeView&) override {
    throw Error("variant pairs: the GPU band was handed host memory");
  }
  void host_haplotypes(std::int64_t, const PackedHaplotypeView&) override {
    throw Error("variant pairs: the GPU band was handed host memory");
  }

  void device_unit(std::int64_t u, const PackedGenotypeView& view, void* stream) override {
    if (rows_.haplotypes()) return;  // fed by device_haplotypes
    add_unit(u, static_cast<cudaStream_t>(stream), [&](cuda::PairRowsArgs a, cudaStream_t st) {
      if (!spec_.mask.empty()) a.mask = mask_.as<std::uint64_t>();
      cuda::launch_genotype_rows(a, view.words, view.words_per_row, view.samples, st);
    });
  }

  void device_haplotypes(std::int64_t u, const PackedHaplotypeView& view, void* stream) override {
    if (!rows_.haplotypes()) return;
    if (view.words_per_plane < rows_.plane_words())
      throw Error("variant pairs: haplotype planes narrower than the selection");
    add_unit(u, static_cast<cudaStream_t>(stream), [&](cuda::PairRowsArgs a, cudaStream_t st) {
      if (!spec_.mask.empty()) a.mask = mask_.as<std::uint64_t>();
      cuda::launch_haplotype_rows(a, view.words, view.words_per_plane, st);
    });
  }

  std::vector<PairBatch> take() override { return std::exchange(ready_, {}); }

  std::vector<PairBatch> finish() override {
    ctx_.make_current();
    std::vector<PairBatch> out = take();
    PairBatch last;
    add_planes(last.planes, rows_.tail());
    out.push_back(std::move(last));
    return out;
  }

  double compute_seconds() const override { return kernel_ms_ * 1e-3; }
  std::int64_t device_pairs() const override { return device_pairs_; }

 private:
  /// The reducer's description on the device: its bin edges and count masks copied, the bins'
  /// sums allocated.
  void start_reduction() {
    const cudaStream_t s = stream_.get();
    reduction_ = *spec_.reducer->device();
    if (reduction_.width != rows_.width())
      throw Error("variant pairs: a device reduction of another width than the band's");
    const std::int64_t edges = reduction_.edges.bins + 1;
    edges_dev_ = DeviceBuffer(ctx_.pool(), edges * 8, s);
    const void* from = reduction_.edges.by_r ? static_cast<const void*>(reduction_.edges.r)
                                             : static_cast<const void*>(reduction_.edges.bp);
    VCZ_CUDA_CHECK(cudaMemcpyAsync(edges_dev_.data(), from, static_cast<std::size_t>(edges * 8),
                                   cudaMemcpyHostToDevice, s));
    reduction_.edges.bp = reduction_.edges.by_r ? nullptr : edges_dev_.as<std::int64_t>();
    reduction_.edges.r = reduction_.edges.by_r ? edges_dev_.as<double>() : nullptr;
    const auto& masks = spec_.reducer->count_masks();
    if (masks.size() > 3) throw Error("variant pairs: more than three count masks");
    nmasks_ = static_cast<int>(masks.size());
    const std::int64_t w = rows_.plane_words();
    count_masks_ = DeviceBuffer(ctx_.pool(), std::max<std::int64_t>(nmasks_, 1) * w * 8, s);
    for (int k = 0; k < nmasks_; ++k) {
      const auto& m = masks[static_cast<std::size_t>(k)];
      if (static_cast<std::int64_t>(m.size()) < w)
        throw Error("variant pairs: a count mask narrower than the planes");
      VCZ_CUDA_CHECK(cudaMemcpyAsync(count_masks_.data() + k * w * 8, m.data(),
                                     static_cast<std::size_t>(w * 8), cudaMemcpyHostToDevice, s));
    }
    const std::int64_t bytes = reduction_.edges.bins * reduction_.slots() * 16;
    sums_dev_ = DeviceBuffer(ctx_.pool(), bytes, s);
    sums_host_ = PinnedBuffer(bytes);
    reduce_ = true;
  }

  /// Room in the halo buffer for rows [planes_front_, end): when full, the rows [front, begin)
  /// move to a new buffer twice as large as the band needs now.
  void reserve_halo(std::int64_t begin, std::int64_t end) {
    if (end - planes_front_ <= cap_rows_) return;
    const cudaStream_t s = stream_.get();
    const std::int64_t front = rows_.front(), keep = begin - front, rw = rows_.row_words();
    const std::int64_t cap = std::max<std::int64_t>(2 * (end - front), 64);
    DeviceBuffer planes(ctx_.pool(), cap * rw * 8, s), totals(ctx_.pool(), cap * 3 * 8, s);
    DeviceBuffer masked, places;  // (a device reduction)
    if (reduce_) {
      masked = DeviceBuffer(ctx_.pool(), cap * 3 * 8, s);
      places = DeviceBuffer(ctx_.pool(), cap * sizeof(cuda::RowPlace), s);
    }
    if (keep > 0) {
      const std::int64_t from = front - planes_front_;
      auto move = [&](DeviceBuffer& to, const DeviceBuffer& old, std::int64_t row_bytes) {
        VCZ_CUDA_CHECK(cudaMemcpyAsync(to.data(), old.data() + from * row_bytes,
                                       static_cast<std::size_t>(keep * row_bytes),
                                       cudaMemcpyDeviceToDevice, s));
      };
      move(planes, planes_, rw * 8);
      move(totals, totals_, 3 * 8);
      if (reduce_) {
        move(masked, masked_, 3 * 8);
        move(places, places_, static_cast<std::int64_t>(sizeof(cuda::RowPlace)));
      }
    }
    stream_.synchronize();  // the new buffers are ready for the lane's stream
    planes_ = std::move(planes);
    totals_ = std::move(totals);
    masked_ = std::move(masked);
    places_ = std::move(places);
    planes_front_ = front;
    cap_rows_ = cap;
  }

  /// Grow @p dev to @p bytes or more (on the band stream, idle), and @p host likewise.
  void reserve(DeviceBuffer& dev, std::int64_t bytes) {
    if (dev.size() >= bytes) return;
    dev = DeviceBuffer(ctx_.pool(), bytes, stream_.get());
    stream_.synchronize();
  }
  static void reserve(PinnedBuffer& host, std::int64_t bytes) {
    if (host.size() < bytes) host = PinnedBuffer(bytes);
  }

  /// The planes of ordinals @p os, copied from the device, into @p p.
  void add_planes(PairPlanes& p, const std::vector<std::int64_t>& os) {
    const std::int64_t rw = rows_.row_words();
    p.words_per_row = rw;
    if (os.empty()) return;
    const std::size_t at = p.words.size();
    p.words.resize(at + os.size() * static_cast<std::size_t>(rw));
    for (std::size_t k = 0; k < os.size(); ++k) {
      p.variants.push_back(rows_.at(os[k]).variant);
      VCZ_CUDA_CHECK(cudaMemcpyAsync(p.words.data() + at + k * static_cast<std::size_t>(rw),
                                     planes_.data() + (os[k] - planes_front_) * rw * 8,
                                     static_cast<std::size_t>(rw * 8), cudaMemcpyDeviceToHost,
                                     stream_.get()));
    }
    stream_.synchronize();
  }

  /// Add unit @p u's selected rows (@p build(args, lane) queues their planes and totals on
  /// @p lane), count its pairs and queue its batch.
  template <class Build>
  void add_unit(std::int64_t u, cudaStream_t lane, Build&& build) {
    ctx_.make_current();
    const std::int64_t begin = rows_.end();
    const std::vector<std::int64_t>& unit_rows = rows_.add_unit(u);
    const std::int64_t end = rows_.end(), count = end - begin;
    reserve_halo(begin, end);
    if (count > 0) {
      reserve(unit_rows_dev_, count * 4);
      reserve(unit_rows_host_, count * 4);
      reserve(totals_host_, count * 3 * 8);
      auto* staged = reinterpret_cast<std::int32_t*>(unit_rows_host_.data());
      for (std::int64_t k = 0; k < count; ++k)
        staged[k] = static_cast<std::int32_t>(unit_rows[static_cast<std::size_t>(k)]);
      VCZ_CUDA_CHECK(cudaMemcpyAsync(unit_rows_dev_.data(), staged,
                                     static_cast<std::size_t>(count * 4), cudaMemcpyHostToDevice,
                                     lane));
      auto* totals = totals_.as<unsigned long long>() + 3 * (begin - planes_front_);
      VCZ_CUDA_CHECK(cudaMemsetAsync(totals, 0, static_cast<std::size_t>(count * 3 * 8), lane));
      cuda::PairRowsArgs a;
      if (reduce_) {  // the rows' counts within the count masks, and their places
        a.count_masks = count_masks_.as<std::uint64_t>();
        a.nmasks = nmasks_;
        a.masked = masked_.as<unsigned long long>() + 3 * (begin - planes_front_);
        VCZ_CUDA_CHECK(cudaMemsetAsync(a.masked, 0, static_cast<std::size_t>(count * 3 * 8), lane));
        reserve(places_host_, count * static_cast<std::int64_t>(sizeof(cuda::RowPlace)));
        auto* places = reinterpret_cast<cuda::RowPlace*>(places_host_.data());
        for (std::int64_t k = 0; k < count; ++k) {
          const auto& place = rows_.at(begin + k).place;
          places[k] = {place.pos, spec_.reducer->coordinate(place.contig, place.pos)};
        }
        VCZ_CUDA_CHECK(cudaMemcpyAsync(places_.as<cuda::RowPlace>() + (begin - planes_front_),
                                       places,
                                       static_cast<std::size_t>(count) * sizeof(cuda::RowPlace),
                                       cudaMemcpyHostToDevice, lane));
      }
      a.unit_rows = unit_rows_dev_.as<std::int32_t>();
      a.count = count;
      a.planes = planes_.as<std::uint64_t>() + (begin - planes_front_) * rows_.row_words();
      a.words = rows_.plane_words();
      a.row_words = rows_.row_words();
      a.totals = totals;
      build(a, lane);
      VCZ_CUDA_CHECK(cudaMemcpyAsync(totals_host_.data(), totals,
                                     static_cast<std::size_t>(count * 3 * 8),
                                     cudaMemcpyDeviceToHost, lane));
      built_.record(lane);
      built_.synchronize();
      const auto* t = reinterpret_cast<const unsigned long long*>(totals_host_.data());
      for (std::int64_t k = 0; k < count; ++k) {
        BandRows::Row& row = rows_.at(begin + k);
        row.n = static_cast<std::int64_t>(t[3 * k]);
        row.het = static_cast<std::int64_t>(t[3 * k + 1]);
        row.alt = static_cast<std::int64_t>(t[3 * k + 2]);
      }
    }

    PairBatch batch;
    batch.unit = u;
    std::vector<std::int64_t> heads;
    for (std::int64_t o = begin; o < end; ++o) {
      batch.rows.push_back(rows_.batch_row(o));
      if (rows_.at(o).head) heads.push_back(o);
    }
    add_planes(batch.planes, heads);
    if (reduce_)
      batch.reduced = reduce_pairs(begin, end);
    else if (!spec_.rows_only)
      count_pairs(begin, end, batch.pairs);
    ready_.push_back(std::move(batch));
    rows_.evict();
  }

  /// Every wanted pair (i, j) of the later rows j in [begin, end), kMaxPairs a launch.
  void count_pairs(std::int64_t begin, std::int64_t end, std::vector<PairValue>& out) {
    const bool every = !spec_.request.focal_only;  // then every pair but (j, j) is wanted
    if (every && !counts_back_) {
      count_band_pairs(begin, end, out);
      return;
    }
    std::int64_t n = 0;
    for (std::int64_t j = begin; j < end; ++j) {
      const std::int64_t first = rows_.at(j).first;
      for (std::int64_t i = first; i <= j; ++i) {
        if (every ? i == j : !rows_.wanted(i, j)) continue;
        if (n == pairs_cap_) {
          if (pairs_cap_ < kMaxPairs) {
            grow_pairs();
          } else {
            run_pairs(n, out);
            n = 0;
          }
        }
        auto* p = reinterpret_cast<std::int32_t*>(pairs_host_.data()) + 2 * n;
        p[0] = static_cast<std::int32_t>(i - planes_front_);
        p[1] = static_cast<std::int32_t>(j - planes_front_);
        ++n;
      }
    }
    if (n > 0) run_pairs(n, out);
  }

  /// count_pairs() without a focal filter (and not the EM): the kernel numbers the pairs itself
  /// from each row's first partner, so no list of (at window 1000) 10^8 pairs is built on the
  /// host and copied.
  void count_band_pairs(std::int64_t begin, std::int64_t end, std::vector<PairValue>& out) {
    const std::int64_t total = number_band_pairs(begin, end);
    if (total == 0) return;
    while (pairs_cap_ < std::min(total, kMaxPairs)) grow_pairs();
    Band band{first_dev_.as<std::int32_t>(), offsets_dev_.as<std::int64_t>(), end - begin,
              begin - planes_front_, 0};
    for (band.pair0 = 0; band.pair0 < total; band.pair0 += pairs_cap_)
      run_pairs(std::min(pairs_cap_, total - band.pair0), out, &band);
  }

  /// The reducer's sum of every pair of the later rows j in [begin, end) with its earlier
  /// partners, summed per bin on the device (one launch; the bins' sums come back).
  std::shared_ptr<const stats::pairs::PairSum> reduce_pairs(std::int64_t begin, std::int64_t end) {
    const std::int64_t total = number_band_pairs(begin, end);
    const cudaStream_t s = stream_.get();
    const auto bytes = static_cast<std::size_t>(reduction_.edges.bins * reduction_.slots() * 16);
    VCZ_CUDA_CHECK(cudaMemsetAsync(sums_dev_.data(), 0, bytes, s));
    if (total > 0) {
      cuda::PairReduceArgs a;
      a.planes = planes_.as<std::uint64_t>();
      a.totals = totals_.as<unsigned long long>();
      a.masked = masked_.as<unsigned long long>();
      a.places = places_.as<cuda::RowPlace>();
      a.first = first_dev_.as<std::int32_t>();
      a.offsets = offsets_dev_.as<std::int64_t>();
      a.rows = end - begin;
      a.row0 = begin - planes_front_;
      a.pair0 = 0;
      a.count = total;
      a.words = rows_.plane_words();
      a.row_words = rows_.row_words();
      a.count_masks = count_masks_.as<std::uint64_t>();
      a.nmasks = nmasks_;
      a.lanes = lanes_;
      a.sums = sums_dev_.as<unsigned long long>();
      start_.record(s);
      cuda::launch_pair_reduce(a, reduction_, s);
      stop_.record(s);
    }
    VCZ_CUDA_CHECK(
        cudaMemcpyAsync(sums_host_.data(), sums_dev_.data(), bytes, cudaMemcpyDeviceToHost, s));
    stream_.synchronize();
    if (total > 0) add_kernel_time();
    device_pairs_ += total;
    return spec_.reducer->device_sum(reinterpret_cast<const std::uint64_t*>(sums_host_.data()));
  }

  /// Number the pairs of the later rows j in [begin, end) with their earlier partners (first and
  /// offsets on the device, PairListArgs); returns their number.
  std::int64_t number_band_pairs(std::int64_t begin, std::int64_t end) {
    const std::int64_t rows = end - begin;
    if (rows <= 0) return 0;
    reserve(first_host_, rows * 4);
    reserve(offsets_host_, (rows + 1) * 8);
    auto* first = reinterpret_cast<std::int32_t*>(first_host_.data());
    auto* offsets = reinterpret_cast<std::int64_t*>(offsets_host_.data());
    offsets[0] = 0;
    for (std::int64_t k = 0; k < rows; ++k) {
      const std::int64_t j = begin + k, f = rows_.at(j).first;
      first[k] = static_cast<std::int32_t>(f - planes_front_);
      offsets[k + 1] = offsets[k] + (j - f);
    }
    const std::int64_t total = offsets[rows];
    if (total == 0) return 0;
    reserve(first_dev_, rows * 4);
    reserve(offsets_dev_, (rows + 1) * 8);
    const cudaStream_t s = stream_.get();
    VCZ_CUDA_CHECK(cudaMemcpyAsync(first_dev_.data(), first, static_cast<std::size_t>(rows * 4),
                                   cudaMemcpyHostToDevice, s));
    VCZ_CUDA_CHECK(cudaMemcpyAsync(offsets_dev_.data(), offsets,
                                   static_cast<std::size_t>((rows + 1) * 8), cudaMemcpyHostToDevice,
                                   s));
    return total;
  }

  /// Double the pair list's room (keeping the pairs listed so far).
  void grow_pairs() {
    const std::int64_t cap = std::min(kMaxPairs, std::max<std::int64_t>(2 * pairs_cap_, 4096));
    PinnedBuffer host(cap * 8);
    if (pairs_cap_ > 0)
      std::memcpy(host.data(), pairs_host_.data(), static_cast<std::size_t>(pairs_cap_ * 8));
    pairs_host_ = std::move(host);
    const std::int64_t per_pair = counts_back_
                                      ? static_cast<std::int64_t>(sizeof(stats::ld::GenotypeCounts))
                                      : static_cast<std::int64_t>(sizeof(PairValue));
    pairs_dev_ = DeviceBuffer(ctx_.pool(), cap * 8, stream_.get());
    out_dev_ = DeviceBuffer(ctx_.pool(), cap * per_pair, stream_.get());
    out_host_ = PinnedBuffer(cap * per_pair);
    stream_.synchronize();
    pairs_cap_ = cap;
  }

  struct Band {  // pairs numbered by the kernel (count_band_pairs)
    const std::int32_t* first;
    const std::int64_t* offsets;
    std::int64_t rows, row0, pair0;
  };

  /// Count and evaluate the @p n pairs listed (or those of @p band from band->pair0); the
  /// passing ones (global indices) to @p out.
  void run_pairs(std::int64_t n, std::vector<PairValue>& out, const Band* band = nullptr) {
    const cudaStream_t s = stream_.get();
    if (!band)
      VCZ_CUDA_CHECK(cudaMemcpyAsync(pairs_dev_.data(), pairs_host_.data(),
                                     static_cast<std::size_t>(n * 8), cudaMemcpyHostToDevice, s));
    VCZ_CUDA_CHECK(cudaMemsetAsync(found_.data(), 0, 8, s));
    cuda::PairListArgs a;
    a.planes = planes_.as<std::uint64_t>();
    a.totals = totals_.as<unsigned long long>();
    a.count = n;
    if (band) {
      a.first = band->first;
      a.offsets = band->offsets;
      a.rows = band->rows;
      a.row0 = band->row0;
      a.pair0 = band->pair0;
    } else {
      a.pairs = pairs_dev_.as<std::int32_t>();
    }
    a.words = rows_.plane_words();
    a.row_words = rows_.row_words();
    a.width = rows_.width();
    a.measure = spec_.request.measure;
    a.min_r2 = spec_.request.min_r2;
    a.prune_thr = prune_thr_;
    a.lanes = lanes_;
    a.found = found_.as<unsigned long long>();
    if (counts_back_)
      a.counts = out_dev_.as<stats::ld::GenotypeCounts>();
    else
      a.values = out_dev_.as<PairValue>();
    start_.record(s);
    cuda::launch_pair_list(a, s);
    stop_.record(s);
    const auto* list = reinterpret_cast<const std::int32_t*>(pairs_host_.data());
    auto global = [&](std::int64_t index) { return rows_.at(planes_front_ + index).variant; };
    if (counts_back_) {
      VCZ_CUDA_CHECK(
          cudaMemcpyAsync(out_host_.data(), out_dev_.data(),
                          static_cast<std::size_t>(n) * sizeof(stats::ld::GenotypeCounts),
                          cudaMemcpyDeviceToHost, s));
      stream_.synchronize();
      add_kernel_time();
      evaluate_em(reinterpret_cast<const stats::ld::GenotypeCounts*>(out_host_.data()), list, n,
                  out);
      return;
    }
    VCZ_CUDA_CHECK(
        cudaMemcpyAsync(found_host_.data(), found_.data(), 8, cudaMemcpyDeviceToHost, s));
    stream_.synchronize();
    add_kernel_time();
    std::uint64_t found = 0;
    std::memcpy(&found, found_host_.data(), 8);
    if (found == 0) return;
    VCZ_CUDA_CHECK(cudaMemcpyAsync(out_host_.data(), out_dev_.data(), found * sizeof(PairValue),
                                   cudaMemcpyDeviceToHost, s));
    stream_.synchronize();
    const auto* values = reinterpret_cast<const PairValue*>(out_host_.data());
    for (std::uint64_t k = 0; k < found; ++k) {
      PairValue v = values[k];
      v.a = global(v.a);
      v.b = global(v.b);
      out.push_back(v);
    }
  }

  void add_kernel_time() {
    float ms = 0;
    VCZ_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    kernel_ms_ += ms;
  }

  /// plink's EM of each pair's counts on the run's threads (its last bits differ on the device),
  /// or each pair's packed table (GenotypeTable), blocks of pairs joined in order.
  void evaluate_em(const stats::ld::GenotypeCounts* counts, const std::int32_t* list,
                   std::int64_t n, std::vector<PairValue>& out) {
    constexpr std::int64_t kBlock = 4096;
    pairs_in_blocks(threads_, (n + kBlock - 1) / kBlock, out,
                    [&](std::int64_t b, std::vector<PairValue>& part) {
                      for (std::int64_t q = b * kBlock; q < std::min(n, (b + 1) * kBlock); ++q) {
                        PairValue v;
                        if (!stats::ld::genotype_pair(spec_.request.measure, counts[q], false,
                                                      spec_.request.min_r2, prune_thr_, v))
                          continue;
                        v.a = rows_.at(planes_front_ + list[2 * q]).variant;
                        v.b = rows_.at(planes_front_ + list[2 * q + 1]).variant;
                        part.push_back(v);
                      }
                    });
  }

  PairBandSpec spec_;
  BandRows rows_;
  cuda::DeviceContext& ctx_;
  unsigned threads_;
  double prune_thr_;
  bool counts_back_;  // GenotypeEm, GenotypeTable: every pair's counts come back to the host
  int lanes_ = 1;
  cuda::Stream stream_;  // declared before the buffers: they go first
  Event built_, start_, stop_;
  DeviceBuffer planes_, totals_;  // halo rows [planes_front_, planes_front_ + cap_rows_)
  std::int64_t planes_front_ = 0, cap_rows_ = 0;
  DeviceBuffer unit_rows_dev_;
  PinnedBuffer unit_rows_host_, totals_host_;
  DeviceBuffer pairs_dev_, out_dev_, found_;
  DeviceBuffer mask_;  // the request's mask of plane bits (empty: none)
  PinnedBuffer pairs_host_, out_host_, found_host_;
  DeviceBuffer first_dev_, offsets_dev_;  // count_band_pairs
  PinnedBuffer first_host_, offsets_host_;
  std::int64_t pairs_cap_ = 0;
  std::vector<PairBatch> ready_;
  double kernel_ms_ = 0;
  // A device reduction (start_reduction): the reducer's description with the edges' device
  // copy, its count masks, per halo row the counts within them and the place, the bins' sums.
  bool reduce_ = false;
  stats::moments::DeviceReduction reduction_;
  int nmasks_ = 0;
  DeviceBuffer edges_dev_, count_masks_, masked_, places_, sums_dev_;
  PinnedBuffer places_host_, sums_host_;
  std::int64_t device_pairs_ = 0;
};

}  // namespace

std::unique_ptr<PairBand> make_pair_band_gpu(const PairBandSpec& spec) {
  return std::make_unique<GpuPairBand>(spec);
}

}  // namespace vczstats::backend
