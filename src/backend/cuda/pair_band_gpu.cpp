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

 private:
  /// Room in the halo buffer for rows [planes_front_, end): when full, the rows [front, begin)
  /// move to a new buffer twice as large as the band needs now.
  void reserve_halo(std::int64_t begin, std::int64_t end) {
    if (end - planes_front_ <= cap_rows_) return;
    const cudaStream_t s = stream_.get();
    const std::int64_t front = rows_.front(), keep = begin - front, rw = rows_.row_words();
    const std::int64_t cap = std::max<std::int64_t>(2 * (end - front), 64);
    DeviceBuffer planes(ctx_.pool(), cap * rw * 8, s), totals(ctx_.pool(), cap * 3 * 8, s);
    if (keep > 0) {
      const std::int64_t from = front - planes_front_;
      VCZ_CUDA_CHECK(cudaMemcpyAsync(planes.data(), planes_.data() + from * rw * 8,
                                     static_cast<std::size_t>(keep * rw * 8),
                                     cudaMemcpyDeviceToDevice, s));
      VCZ_CUDA_CHECK(cudaMemcpyAsync(totals.data(), totals_.data() + from * 3 * 8,
                                     static_cast<std::size_t>(keep * 3 * 8),
                                     cudaMemcpyDeviceToDevice, s));
    }
    stream_.synchronize();  // the new buffers are ready for the lane's stream
    planes_ = std::move(planes);
    totals_ = std::move(totals);
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
    const std::int64_t rows = end - begin;
    if (rows <= 0) return;
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
    if (total == 0) return;
    reserve(first_dev_, rows * 4);
    reserve(offsets_dev_, (rows + 1) * 8);
    const cudaStream_t s = stream_.get();
    VCZ_CUDA_CHECK(cudaMemcpyAsync(first_dev_.data(), first, static_cast<std::size_t>(rows * 4),
                                   cudaMemcpyHostToDevice, s));
    VCZ_CUDA_CHECK(cudaMemcpyAsync(offsets_dev_.data(), offsets,
                                   static_cast<std::size_t>((rows + 1) * 8), cudaMemcpyHostToDevice,
                                   s));
    while (pairs_cap_ < std::min(total, kMaxPairs)) grow_pairs();
    Band band{first_dev_.as<std::int32_t>(), offsets_dev_.as<std::int64_t>(), rows,
              begin - planes_front_, 0};
    for (band.pair0 = 0; band.pair0 < total; band.pair0 += pairs_cap_)
      run_pairs(std::min(pairs_cap_, total - band.pair0), out, &band);
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
};

}  // namespace

std::unique_ptr<PairBand> make_pair_band_gpu(const PairBandSpec& spec) {
  return std::make_unique<GpuPairBand>(spec);
}

}  // namespace vczstats::backend
