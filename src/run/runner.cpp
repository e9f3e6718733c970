// One statistic computed here or across MPI ranks (vczstats/runner.hpp).

#include "vczstats/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <span>

#include "vczstats/compute.hpp"
#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/sample_matrix.hpp"

#include "dist/driver.hpp"
#include "dist/thread_ranks.hpp"
#include "vczstats/testing.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats {

Runner::Runner(Query& q, StatisticMaker make, RunOptions run, RunnerRanks ranks)
    : q_(q), make_(std::move(make)), run_(std::move(run)), ranks_(ranks), statistic_(make_()) {
  // Several GPUs of this process (or the tests' thread shares): one share of the run each.
  if (!ranks_.ranks) {
    if (run_.device.several()) {
      shares_ = shared_gpus(run_.device);
      for (const int gpu : shares_)
        if (std::string why; !gpu_available(&why, gpu))
          throw UsageError("--device " + run_.device.to_string() + ": GPU " + std::to_string(gpu) +
                           ": " + why);
    } else if (hooks::thread_shares() > 1)
      shares_.assign(static_cast<std::size_t>(hooks::thread_shares()), run_.device.index);
    if (shares_.size() == 1) shares_.clear();
  }
  if (!q_.count_filters_pending()) return;
  // The count filters run inside compute()'s pass when the library can fuse them with this
  // statistic; otherwise a counting pass filters the plan now, and the statistic is made again
  // from the filtered query. Spread runs (MPI ranks, shares of several GPUs) need the filtered
  // plan for their partitions.
  RunOptions counting;
  counting.threads = run_.threads;
  counting.device.kind = DeviceKind::Cpu;
  if (dist::Ranks* mpi = ranks_.ranks) {
    // One counting pass split over the ranks, each on its share of the node's cores.
    counting = dist::rank_run_options(counting, *mpi, run_.threads != 0, false);
    dist::apply_count_filters(*mpi, q_, counting);
    statistic_ = make_();
    return;
  }
  if (!shares_.empty()) {
    apply_count_filters(q_, counting);
    statistic_ = make_();
    return;
  }
  Statistic* list[] = {statistic_.get()};
  if (prepare_count_filters(q_, list, counting, {})) statistic_ = make_();
}

namespace {

// Rows travel from the other ranks to rank 0 as cells: [u32 cells][string]... per row.
void encode(ByteWriter& out, const Cells& cells) {
  out.put(static_cast<std::uint32_t>(cells.size()));
  for (const auto& c : cells) out.put_string(c);
}

/// The progress of a run shared among threads (Runner::run with several GPUs): each share's
/// fraction done, averaged, as units of the whole plan, handed to @p fn from any share's thread,
/// one call at a time.
class ShareProgress {
 public:
  ShareProgress(ProgressFn fn, int shares, std::int64_t units)
      : fn_(std::move(fn)), parts_(static_cast<std::size_t>(shares)), units_(units) {}
  ProgressFn of(int share) {
    if (!fn_) return {};
    return [this, share](std::int64_t done, std::int64_t total, std::int64_t variants) {
      std::lock_guard lock(mutex_);
      parts_[static_cast<std::size_t>(share)] = {done, total, variants};
      double fraction = 0;
      std::int64_t all_variants = 0;
      bool finished = true;
      for (const auto& p : parts_) {
        fraction += p.total > 0 ? static_cast<double>(p.done) / static_cast<double>(p.total) : 0;
        finished = finished && p.total > 0 && p.done == p.total;
        all_variants = all_variants < 0 || p.variants < 0 ? -1 : all_variants + p.variants;
      }
      fraction /= static_cast<double>(parts_.size());
      const std::int64_t units = std::max<std::int64_t>(units_, 1);
      const auto done_units =
          finished ? units
                   : std::min(units - 1,
                              static_cast<std::int64_t>(fraction * static_cast<double>(units)));
      finished_ = finished;
      fn_(done_units, units, all_variants);
    };
  }
  /// After the run: the end, when a share that had no unit never reported (the bar ends there).
  void done() {
    if (!fn_ || finished_) return;
    std::int64_t variants = 0;
    for (const auto& p : parts_)
      variants = variants < 0 || p.variants < 0 ? -1 : variants + p.variants;
    const std::int64_t units = std::max<std::int64_t>(units_, 1);
    fn_(units, units, variants);
  }

 private:
  struct Part {
    std::int64_t done = 0, total = 0, variants = 0;
  };
  ProgressFn fn_;
  std::mutex mutex_;
  std::vector<Part> parts_;
  std::int64_t units_;
  bool finished_ = false;
};

/// Under MPI, a statistic of the matrix family (one that asks for sums over pairs of samples)
/// computes a stripe of its rows on each rank, over the whole plan, rather than all of its rows
/// over a share of the variants: the ranks' stripes have about equal cells (split_matrix_rows),
/// and every cell's sums are the same doubles whatever the stripe (the CPU pass:
/// sample_matrix.hpp), so the sums rank 0 assembles are one process's, and so is the
/// output, byte for byte. This stands in for the run's statistic on every rank: it asks for its
/// rank's stripe; on rank 0 it also feeds the statistic (e.g. PCA's kept genotypes), takes the
/// other ranks' stripes (merge, in rank order) and hands the assembled sums to the statistic.
class MatrixStripe final : public Statistic {
 public:
  /// @p inner: the run's statistic (null: a part that rank 0 loads); @p primary: this rank
  /// writes (feeds @p inner); @p rows: this rank's stripe of @p request's rows.
  MatrixStripe(std::shared_ptr<Statistic> inner, bool primary, const SampleMatrixRequest& request,
               std::pair<std::int64_t, std::int64_t> rows, std::int64_t samples)
      : inner_(std::move(inner)),
        primary_(primary && inner_),
        whole_(request),
        part_(request),
        samples_(samples) {
    if (whole_.row_end < 0) whole_.row_end = samples;
    part_.row_begin = rows.first;
    part_.row_end = rows.second;
  }
  /// @brief A stripe that rank 0 loads another rank's part into (the driver's fresh statistics).
  static std::shared_ptr<MatrixStripe> received(const SampleMatrixRequest& request,
                                                std::int64_t samples) {
    return std::make_shared<MatrixStripe>(nullptr, false, request,
                                          std::pair<std::int64_t, std::int64_t>{}, samples);
  }
  std::string name() const override { return "matrix-stripe"; }
  PassNeeds needs() const override { return primary_ ? inner_->needs() : PassNeeds{}; }
  void attach(const Backend& b) override {
    if (inner_) inner_->attach(b);
  }
  void begin(const stats::SiteCursor& c) override {
    if (primary_) inner_->begin(c);
  }
  void accumulate(const UnitData& u) override {
    if (primary_) inner_->accumulate(u);
  }
  Table take_rows() override { return primary_ ? inner_->take_rows() : Table{}; }
  const SampleMatrixRequest* sample_matrix() const override { return &part_; }
  /// @brief Rank 0 of rounds of stripes (run_matrix_stripes): each stripe's sums go to @p emit
  /// (its own, then the others' in rank order), not into the request's.
  void emit_to(std::function<void(SampleMatrixSums&&)> emit) { emit_ = std::move(emit); }

  void accumulate_sample_matrix(SampleMatrixSums&& sums) override {
    if (emit_)
      emit_(std::move(sums));
    else if (primary_)
      place(std::move(sums));
    else
      part_sums_ = std::move(sums);
  }
  void merge(Statistic& later) override {  // rank 0: the next rank's stripe
    auto& sums = dynamic_cast<MatrixStripe&>(later).part_sums_;
    if (emit_)
      emit_(std::move(sums));
    else
      place(std::move(sums));
  }
  void save(ByteWriter& w) const override {
    w.put_string(name());
    part_sums_.save(w);
  }
  void load(ByteReader& r) override {
    r.expect(name());
    part_sums_.load(r);
  }
  Table finish() override { return {}; }

  /// @brief Rank 0, after the merge: the assembled sums to the statistic.
  void hand_over() { inner_->accumulate_sample_matrix(std::move(all_)); }

 private:
  /// Rank 0: a stripe's sums into the request's (its own first: every rank summed every
  /// variant, so its counts of variants and weights are the run's).
  void place(SampleMatrixSums&& p) {
    if (!have_all_) {
      have_all_ = true;
      if (p.row_begin == whole_.row_begin && p.row_end == whole_.row_end) {  // one rank
        all_ = std::move(p);
        return;
      }
      all_ = SampleMatrixSums::zeros(whole_, samples_);
      all_.variants = p.variants;
      all_.weight_total = p.weight_total;
    }
    if (p.row_begin < all_.row_begin || p.row_end > all_.row_end)
      throw Error("MPI: a matrix stripe of other rows");
    const auto at = static_cast<std::size_t>((p.row_begin - all_.row_begin) * all_.cols());
    for (std::int64_t i = 0; i < p.rows(); ++i) {
      const auto from = static_cast<std::size_t>(i * p.cols()),
                 to = at + static_cast<std::size_t>(i * all_.cols());
      for (int c = 0; c < kPairCounts; ++c) {
        const auto& b = p.counts[static_cast<std::size_t>(c)];
        if (!b.empty())
          std::copy_n(b.begin() + from, p.cols(),
                      all_.counts[static_cast<std::size_t>(c)].begin() + to);
      }
      if (!p.product.empty())
        std::copy_n(p.product.begin() + from, p.cols(), all_.product.begin() + to);
    }
    // The product's diagonal: the same doubles for a column in every stripe that has it.
    std::copy(p.diagonal.begin(), p.diagonal.end(), all_.diagonal.begin());
  }

  std::shared_ptr<Statistic> inner_;
  bool primary_;
  SampleMatrixRequest whole_, part_;
  std::int64_t samples_;
  SampleMatrixSums part_sums_;  // this rank's stripe (ranks but 0), or a received one
  SampleMatrixSums all_;        // rank 0: the request's sums, stripe by stripe
  bool have_all_ = false;
  std::function<void(SampleMatrixSums&&)> emit_;
};

std::vector<std::string> rank_lines(
    const dist::Report& r, const std::vector<std::pair<std::int64_t, std::int64_t>>& rows) {
  std::vector<std::string> lines;
  if (!rows.empty()) {
    for (const auto& x : r.ranks) {
      const auto [r0, r1] = rows[static_cast<std::size_t>(x.rank)];
      lines.push_back(fmt::format(
          "rank {} ({}; {}): matrix rows {}..{} ({} cells) over all {} variants; compute {:.3f} "
          "s, then waited {:.3f} s",
          x.rank, x.host, x.run.device, r0, r1, (r1 - r0) * (r0 + r1 + 1) / 2, x.run.variants,
          x.run.wall_seconds, x.wait_seconds));
    }
    lines.push_back(fmt::format(
        "merge {:.3f} s: rank 0 received the other ranks' stripes of the matrix, in rank order",
        r.merge_seconds));
    return lines;
  }
  for (const auto& x : r.ranks)
    lines.push_back(fmt::format(
        "rank {} ({}; {}): units {}-{} ({} variants, weight {}); cursor {:.3f} s, compute "
        "{:.3f} s ({:.3g} calls/s), {}then waited {:.3f} s",
        x.rank, x.host, x.run.device, x.first_unit, x.end_unit, x.run.variants, x.weight,
        x.cursor_seconds, x.run.wall_seconds,
        static_cast<double>(x.run.calls) / std::max(x.run.wall_seconds, 1e-9),
        x.settle_seconds >= 0.0005 ? fmt::format("its edges {:.3f} s, ", x.settle_seconds)
                                   : std::string(),
        x.wait_seconds));
  lines.push_back(fmt::format(
      "merge {:.3f} s: rank 0 received the other ranks' states and rows, merged them in rank "
      "order and wrote them",
      r.merge_seconds));
  return lines;
}

/// What a run of stripes (each rank's whole plan) did: rank 0's report, with every rank's
/// stripe in -v.
RunnerResult stripes_result(const dist::Report& r,
                            const std::vector<std::pair<std::int64_t, std::int64_t>>& stripes) {
  RunnerResult result;
  result.stats = r.total;
  // Every rank read every variant: the run's are one rank's (the calls read, all ranks').
  result.stats.variants = r.ranks.front().run.variants;
  result.stats.units = r.ranks.front().run.units;
  result.rank_lines = rank_lines(r, stripes);
  return result;
}

/// A round of run_matrix_stripes: stripe @p round[rank] on each rank, over the whole plan;
/// rank 0 hands each stripe's statistic to @p write, its own first.
void run_round(dist::Ranks& ranks, const Query& q, const StripeMaker& make,
               const std::vector<std::pair<std::int64_t, std::int64_t>>& round,
               const RunOptions& run, const std::function<void(Statistic&)>& write,
               const std::function<void(const RunnerResult&)>& report) {
  const auto [r0, r1] = round[static_cast<std::size_t>(ranks.rank())];
  const std::shared_ptr<Statistic> own = make(r0, r1);
  const SampleMatrixRequest* request = own->sample_matrix();
  if (!request) throw Error("run_matrix_stripes: a statistic without a sample matrix");
  const std::int64_t n = q.samples.size();
  auto stripe = std::make_shared<MatrixStripe>(nullptr, false, *request,
                                               std::pair<std::int64_t, std::int64_t>{r0, r1}, n);
  if (ranks.rank() == 0)
    stripe->emit_to([&](SampleMatrixSums&& sums) {
      const std::shared_ptr<Statistic> s = make(sums.row_begin, sums.row_end);
      s->accumulate_sample_matrix(std::move(sums));
      write(*s);
    });
  Statistic* list[] = {stripe.get()};
  dist::Hooks h;
  h.whole_plan = true;
  const dist::Report r = dist::compute(
      ranks, q, list, [&](std::size_t) { return MatrixStripe::received(*request, n); }, run, h);
  if (ranks.rank() == 0) report(stripes_result(r, round));
}

}  // namespace

void run_matrix_stripes(Query& q, const StripeMaker& make,
                        const std::vector<std::pair<std::int64_t, std::int64_t>>& stripes,
                        const RunOptions& run, RunnerRanks ranks,
                        const std::function<void(Statistic&)>& write,
                        const std::function<void(const RunnerResult&)>& report) {
  std::size_t next = 0;
  if (dist::Ranks* mpi = ranks.ranks; mpi && mpi->size() > 1) {
    const auto k = static_cast<std::size_t>(mpi->size());
    if (stripes.size() >= k) {
      // The count filters, got ready once by a Runner (collectively).
      if (q.count_filters_pending())
        Runner(
            q, [&] { return make(stripes[0].first, stripes[0].second); }, run, ranks);
      const RunOptions rank_run =
          dist::rank_run_options(run, *mpi, run.threads != 0, ranks.device_index_given);
      for (; next + k <= stripes.size(); next += k)
        run_round(*mpi, q, make,
                  std::vector<std::pair<std::int64_t, std::int64_t>>(
                      stripes.begin() + static_cast<std::ptrdiff_t>(next),
                      stripes.begin() + static_cast<std::ptrdiff_t>(next + k)),
                  rank_run, write, report);
    }
  }
  for (; next < stripes.size(); ++next) {
    const auto [r0, r1] = stripes[next];
    Runner runner(
        q, [&, r0 = r0, r1 = r1] { return make(r0, r1); }, run, ranks);
    const RunnerResult result = runner.run();
    if (!result.writes) continue;
    write(runner.statistic());
    report(result);
  }
}

RunnerResult Runner::run(const RowStream& rows) {
  if (dist::Ranks* ranks = ranks_.ranks) {
    const RunOptions run =
        dist::rank_run_options(run_, *ranks, run_.threads != 0, ranks_.device_index_given);
    return run_spread(*ranks, statistic_, run, rows);
  }
  if (!shares_.empty()) {
    // One share per GPU, a thread each (rank 0 this thread, which writes), the node's cores
    // shared among them; their statistics made here, on the calling thread.
    const int k = static_cast<int>(shares_.size());
    std::vector<std::shared_ptr<Statistic>> own{statistic_};
    for (int r = 1; r < k; ++r) own.push_back(make_());
    const unsigned threads = run_.threads ? run_.threads : hardware_threads();
    ShareProgress progress(run_.progress, k, static_cast<std::int64_t>(q_.plan.units.size()));
    RunnerResult result;
    dist::run_thread_ranks(k, [&](dist::Ranks& ranks) {
      const int r = ranks.rank();
      RunOptions run = run_;
      run.threads = std::max(
          1u, threads / static_cast<unsigned>(k) +
                  (static_cast<unsigned>(r) < threads % static_cast<unsigned>(k) ? 1u : 0u));
      if (run_.device.several()) {
        run.device = DeviceSpec{DeviceKind::Gpu, shares_[static_cast<std::size_t>(r)]};
      }
      run.progress = progress.of(r);
      RunnerResult mine = run_spread(ranks, own[static_cast<std::size_t>(r)], run, rows);
      if (r == 0) result = std::move(mine);
    });
    progress.done();
    return result;
  }
  RunnerResult result;
  Statistic* list[] = {statistic_.get()};
  ComputeHooks hooks;
  hooks.needs = rows.needs;
  if (rows.unit_rows)
    hooks.after_unit = [&](const UnitData& u) { rows.unit_rows(u, *statistic_, rows.write); };
  result.stats = compute(q_, list, run_, hooks);
  return result;
}

RunnerResult Runner::run_spread(dist::Ranks& ranks, const std::shared_ptr<Statistic>& statistic,
                                const RunOptions& run, const RowStream& rows) {
  RunnerResult result;
  Statistic* list[] = {statistic.get()};
  dist::Hooks h;
  h.needs = rows.needs;
  if (rows.unit_rows)
    h.unit_rows = [&](const UnitData& u, ByteWriter& out) {
      rows.unit_rows(u, *statistic, [&](const Cells& cells) { encode(out, cells); });
    };
  h.write_rows = [&](std::span<const std::byte> bytes) {
    ByteReader in(bytes);
    Cells cells;
    while (!in.done()) {
      cells.resize(in.get<std::uint32_t>());
      for (auto& c : cells) c = in.get_string();
      rows.write(cells);
    }
  };
  if (rows.after_merge) h.after_merge = [&] { rows.after_merge(*statistic); };
  dist::StatisticFactory fresh = [this](std::size_t) { return make_(); };
  // The matrix family: a stripe of the rows on each rank (MatrixStripe).
  std::shared_ptr<MatrixStripe> stripe;
  std::vector<std::pair<std::int64_t, std::int64_t>> stripes;
  if (const SampleMatrixRequest* request = statistic->sample_matrix()) {
    const std::int64_t n = q_.samples.size();
    stripes = split_matrix_rows(request->row_begin, request->row_end < 0 ? n : request->row_end,
                                ranks.size());
    stripe = std::make_shared<MatrixStripe>(statistic, ranks.rank() == 0, *request,
                                            stripes[static_cast<std::size_t>(ranks.rank())], n);
    list[0] = stripe.get();
    fresh = [request = *request, n](std::size_t) { return MatrixStripe::received(request, n); };
    h.whole_plan = true;
  }
  const dist::Report r = dist::compute(ranks, q_, list, fresh, run, h);
  if (ranks.rank() != 0) {
    result.writes = false;
    return result;
  }
  if (stripe) {
    stripe->hand_over();
    return stripes_result(r, stripes);
  }
  result.stats = r.total;
  result.rank_lines = rank_lines(r, stripes);
  return result;
}

}  // namespace vczstats
