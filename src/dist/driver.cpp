// The MPI driver (driver.hpp): shares, cursors, the engine on each rank, and the merge on rank 0.

#include "dist/driver.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>

#include "dispatch/count_filter.hpp"
#include "dist/shares.hpp"
#include "vczstats/compute.hpp"
#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::dist {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---- messages from a rank to rank 0 ---------------------------------------------------------
// Each message is one piece: a header (kind, flags) and bytes. A rank sends its statistics'
// state (one or more kState pieces, the last flagged kLast), then its rows (kRows pieces, the
// last flagged kLast); or, when it fails on the way, one piece flagged kFailed, after which it
// sends nothing more. Ranks in one process leave their statistics live instead
// (Ranks::leave_statistics) and send one empty kState piece flagged kLast | kLive.

constexpr std::uint32_t kState = 1, kRows = 2;              // kinds
constexpr std::uint32_t kLast = 1, kFailed = 2, kLive = 4;  // flags
constexpr std::size_t kPieceBytes = std::size_t{64} << 20;
constexpr std::size_t kHeaderBytes = 2 * sizeof(std::uint32_t);

std::vector<std::byte> piece(std::uint32_t kind, std::uint32_t flags,
                             std::span<const std::byte> data) {
  std::vector<std::byte> p(kHeaderBytes + data.size());
  std::memcpy(p.data(), &kind, sizeof kind);
  std::memcpy(p.data() + sizeof kind, &flags, sizeof flags);
  if (!data.empty()) std::memcpy(p.data() + kHeaderBytes, data.data(), data.size());
  return p;
}

/// Rows a rank other than 0 streams while it computes, kept until rank 0 takes them: batches
/// (one per unit) as records [u64 size][bytes], in memory up to kMemory bytes, then appended to
/// an unlinked temporary file in $TMPDIR.
class RowSpool {
 public:
  void add(std::span<const std::byte> batch) {
    const std::uint64_t n = batch.size();
    const auto* p = reinterpret_cast<const std::byte*>(&n);
    memory_.insert(memory_.end(), p, p + sizeof n);
    memory_.insert(memory_.end(), batch.begin(), batch.end());
    if (memory_.size() > kMemory) spill();
  }

  /// Call @p send(bytes, last) with pieces of whole records, each at most kPieceBytes (unless
  /// one record is larger); at least one piece (empty when there are no rows).
  template <class Send>
  void send_pieces(Send&& send) {
    std::vector<std::byte> out;
    auto record = [&](std::span<const std::byte> r) {
      if (!out.empty() && out.size() + r.size() > kPieceBytes) {
        send(std::span<const std::byte>(out), false);
        out.clear();
      }
      out.insert(out.end(), r.begin(), r.end());
    };
    if (file_) {
      if (std::fflush(file_.get()) != 0 || std::fseek(file_.get(), 0, SEEK_SET) != 0)
        fail("reading back");
      std::vector<std::byte> r;
      std::uint64_t n = 0;
      while (std::fread(&n, sizeof n, 1, file_.get()) == 1) {
        r.resize(sizeof n + n);
        std::memcpy(r.data(), &n, sizeof n);
        if (n && std::fread(r.data() + sizeof n, 1, n, file_.get()) != n) fail("reading back");
        record(r);
      }
      if (std::ferror(file_.get())) fail("reading back");
    }
    for (std::size_t at = 0; at < memory_.size();) {
      std::uint64_t n = 0;
      std::memcpy(&n, memory_.data() + at, sizeof n);
      const std::size_t end = at + sizeof n + n;
      record(std::span<const std::byte>(memory_.data() + at, end - at));
      at = end;
    }
    send(std::span<const std::byte>(out), true);
  }

 private:
  static constexpr std::size_t kMemory = std::size_t{64} << 20;

  void spill() {
    if (!file_) {
      const char* dir = std::getenv("TMPDIR");
      std::string path =
          (std::filesystem::path(dir && *dir ? dir : "/tmp") / "vczstats-rows-XXXXXX").string();
      const int fd = ::mkstemp(path.data());
      if (fd < 0) fail("creating " + path);
      ::unlink(path.c_str());  // gone when closed, whatever happens
      file_.reset(::fdopen(fd, "w+b"));
      if (!file_) {
        ::close(fd);
        fail("opening " + path);
      }
    }
    if (std::fwrite(memory_.data(), 1, memory_.size(), file_.get()) != memory_.size())
      fail("writing");
    memory_.clear();
  }
  [[noreturn]] static void fail(const std::string& what) {
    throw IoError("MPI rank: rows spilled to a temporary file in $TMPDIR: " + what + ": " +
                  std::strerror(errno));
  }

  std::vector<std::byte> memory_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
};

/// A rank other than 0: send the statistics' state, then the rows, to rank 0.
void send_parts(Ranks& ranks, std::span<Statistic* const> statistics, RowSpool& rows) {
  try {
    if (ranks.in_process()) {  // left live before the check (compute below)
      ranks.send(0, piece(kState, kLast | kLive, {}));
    } else {
      ByteWriter w;
      for (const Statistic* s : statistics) s->save(w);
      const auto& state = w.bytes();
      std::size_t at = 0;
      do {
        const std::size_t n = std::min(kPieceBytes, state.size() - at);
        ranks.send(0, piece(kState, at + n == state.size() ? kLast : 0u,
                            std::span<const std::byte>(state.data() + at, n)));
        at += n;
      } while (at < state.size());
    }
    rows.send_pieces([&](std::span<const std::byte> p, bool last) {
      ranks.send(0, piece(kRows, last ? kLast : 0u, p));
    });
  } catch (...) {
    ranks.send(0, piece(kRows, kFailed, {}));
    throw;
  }
}

/// Rank 0: take every other rank's state and rows, in rank order. After an error it still
/// receives everything the others send (so none of them waits forever), then rethrows.
void gather_parts(Ranks& ranks, std::span<Statistic* const> statistics,
                  const StatisticFactory& fresh, const Hooks& hooks) {
  std::exception_ptr error;
  bool stopped = false;
  for (int r = 1; r < ranks.size(); ++r) {
    std::vector<std::byte> state;
    for (bool done = false; !done;) {
      const std::vector<std::byte> msg = ranks.receive(r);
      if (msg.size() < kHeaderBytes) throw Error("MPI: a message without a header");
      std::uint32_t kind, flags;
      std::memcpy(&kind, msg.data(), sizeof kind);
      std::memcpy(&flags, msg.data() + sizeof kind, sizeof flags);
      const std::span<const std::byte> data(msg.data() + kHeaderBytes, msg.size() - kHeaderBytes);
      if (flags & kFailed) {
        stopped = true;
        break;
      }
      done = kind == kRows && (flags & kLast);
      if (error) continue;  // draining
      try {
        if (kind == kState && (flags & kLive)) {  // a rank of this process: merged as it is
          const auto theirs = ranks.left_statistics(r);
          if (theirs.size() != statistics.size())
            throw Error("rank " + std::to_string(r) + " left other statistics");
          for (std::size_t i = 0; i < statistics.size(); ++i) statistics[i]->merge(*theirs[i]);
          if (hooks.after_merge) hooks.after_merge();
        } else if (kind == kState) {
          state.insert(state.end(), data.begin(), data.end());
          if (!(flags & kLast)) continue;
          ByteReader in(state);
          for (std::size_t i = 0; i < statistics.size(); ++i) {
            auto part = fresh(i);
            part->load(in);
            statistics[i]->merge(*part);
          }
          if (!in.done()) throw FormatError("MPI: rank " + std::to_string(r) + " sent more state");
          state = {};
          if (hooks.after_merge) hooks.after_merge();
        } else {
          for (std::size_t at = 0; at < data.size();) {
            std::uint64_t n = 0;
            std::memcpy(&n, data.data() + at, sizeof n);
            hooks.write_rows(data.subspan(at + sizeof n, n));
            at += sizeof n + n;
          }
        }
      } catch (...) {
        error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
  if (stopped) throw Stopped();
}

// ---- reports ----------------------------------------------------------------------------------

void put_run(ByteWriter& w, const RunStats& s) {
  w.put_string(s.device);
  w.put_string(s.note);
  w.put<std::uint64_t>(s.warnings.size());
  for (const auto& x : s.warnings) w.put_string(x);
  for (double v : {s.wall_seconds, s.read_decode_seconds, s.gather_seconds, s.compute_seconds,
                   s.reduce_seconds, s.h2d_seconds, s.d2h_seconds})
    w.put(v);
  for (std::int64_t v :
       {s.h2d_bytes, s.decoded_bytes, s.calls, s.variants, s.units, s.device_pairs})
    w.put(v);
}

RunStats get_run(ByteReader& r) {
  RunStats s;
  s.device = r.get_string();
  s.note = r.get_string();
  const auto n = r.get<std::uint64_t>();
  for (std::uint64_t i = 0; i < n; ++i) s.warnings.push_back(r.get_string());
  for (double* v : {&s.wall_seconds, &s.read_decode_seconds, &s.gather_seconds, &s.compute_seconds,
                    &s.reduce_seconds, &s.h2d_seconds, &s.d2h_seconds})
    *v = r.get<double>();
  for (std::int64_t* v :
       {&s.h2d_bytes, &s.decoded_bytes, &s.calls, &s.variants, &s.units, &s.device_pairs})
    *v = r.get<std::int64_t>();
  return s;
}

void put_rank(ByteWriter& w, const RankReport& x) {
  w.put(x.rank);
  w.put_string(x.host);
  for (std::int64_t v : {x.first_unit, x.end_unit, x.weight}) w.put(v);
  w.put(x.cursor_seconds);
  w.put(x.settle_seconds);
  w.put(x.wait_seconds);
  put_run(w, x.run);
}

RankReport get_rank(ByteReader& r) {
  RankReport x;
  x.rank = r.get<int>();
  x.host = r.get_string();
  x.first_unit = r.get<std::int64_t>();
  x.end_unit = r.get<std::int64_t>();
  x.weight = r.get<std::int64_t>();
  x.cursor_seconds = r.get<double>();
  x.settle_seconds = r.get<double>();
  x.wait_seconds = r.get<double>();
  x.run = get_run(r);
  return x;
}

RunStats add_up(const std::vector<RankReport>& ranks, const Ranks& of) {
  RunStats t;
  for (const auto& x : ranks) {
    const RunStats& s = x.run;
    t.read_decode_seconds += s.read_decode_seconds;
    t.gather_seconds += s.gather_seconds;
    t.compute_seconds += s.compute_seconds;
    t.reduce_seconds += s.reduce_seconds;
    t.h2d_seconds += s.h2d_seconds;
    t.d2h_seconds += s.d2h_seconds;
    t.h2d_bytes += s.h2d_bytes;
    t.decoded_bytes += s.decoded_bytes;
    t.calls += s.calls;
    t.device_pairs += s.device_pairs;
    t.variants += s.variants;
    t.units += s.units;
    for (const auto& w : s.warnings)
      if (std::find(t.warnings.begin(), t.warnings.end(), w) == t.warnings.end())
        t.warnings.push_back(w);
    if (t.note.empty()) t.note = s.note;
  }
  const std::string first = ranks.empty() ? "" : ranks.front().run.device;
  const int nodes = of.nodes();
  t.device =
      of.in_process()
          ? fmt::format("{} shares on threads of one process; share 0: {}", ranks.size(), first)
          : fmt::format("{} MPI rank{} on {} node{}; rank 0: {}", ranks.size(),
                        ranks.size() == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s", first);
  return t;
}

}  // namespace

Report compute(Ranks& ranks, const Query& q, std::span<Statistic* const> statistics,
               const StatisticFactory& fresh, const RunOptions& run, const Hooks& hooks) {
  // The partitions need the filtered plan (their cursors and shares): no fused count filters.
  if (q.count_filters_pending())
    throw UsageError("the query's count filters (" + q.filters.describe() +
                     ") were not applied: call apply_count_filters before a distributed run");
  const auto start = Clock::now();
  const int me = ranks.rank(), k = ranks.size();
  const auto mine_at = static_cast<std::size_t>(me);
  RankReport mine;
  mine.rank = me;
  mine.host = ranks.host();

  // 1. Shares: k + 1 unit cuts, then each share's weight (or the whole plan on every rank).
  std::vector<std::int64_t> shares(2 * static_cast<std::size_t>(k) + 1, 0);
  if (me == 0 && !hooks.whole_plan) {
    const auto weights = unit_weights(q);
    const auto cuts = balanced_cuts(weights, k);
    std::copy(cuts.begin(), cuts.end(), shares.begin());
    for (int r = 0; r < k; ++r)
      for (auto u = cuts[static_cast<std::size_t>(r)]; u < cuts[static_cast<std::size_t>(r) + 1];
           ++u)
        shares[static_cast<std::size_t>(k + 1 + r)] += weights[static_cast<std::size_t>(u)];
  }
  ranks.check();
  ranks.broadcast(shares);
  mine.first_unit = shares[mine_at];
  mine.end_unit = shares[mine_at + 1];
  mine.weight = shares[static_cast<std::size_t>(k) + 1 + mine_at];
  if (hooks.whole_plan) {
    mine.end_unit = static_cast<std::int64_t>(q.plan.units.size());
    mine.weight = 0;
  }

  // 2. The site cursor of this share: the summaries of the shares before it, folded.
  const auto cursor_start = Clock::now();
  PassNeeds needs = hooks.needs;
  for (const Statistic* s : statistics) needs = needs | s->needs();
  const bool with_alleles = needs.alleles || SiteFilter(q).needs_ref_length();
  stats::SiteCursor cursor;
  if (!hooks.whole_plan) {
    const SiteSpan span = summarise_sites(q, mine.first_unit, mine.end_unit, with_alleles);
    ranks.check();
    const auto spans = ranks.allgather(std::as_bytes(std::span(&span, 1)));
    for (int r = 0; r < me; ++r) {
      SiteSpan s;
      std::memcpy(&s, spans[static_cast<std::size_t>(r)].data(), sizeof s);
      cursor = advance(cursor, s);
    }
  }
  for (Statistic* s : statistics) s->begin(cursor);
  mine.cursor_seconds = since(cursor_start);

  // 3. The engine over this share; rows streamed (rank 0) or kept (the others).
  Query part = q;
  if (!hooks.whole_plan)
    part.plan = partition_plan(q.plan, {mine.first_unit, 0}, {mine.end_unit, 0});
  RowSpool spool;
  ComputeHooks h;
  h.needs = hooks.needs;
  h.after_unit = [&](const UnitData& u) {
    ranks.poll();
    if (!hooks.unit_rows) return;
    ByteWriter w;
    hooks.unit_rows(u, w);
    if (w.bytes().empty()) return;
    if (me == 0)
      hooks.write_rows(w.bytes());
    else
      spool.add(w.bytes());
  };
  RunOptions rank_run = run;
  rank_run.keep_matrix_sums = true;  // the parts are saved and merged below
  mine.run = vczstats::compute(part, statistics, rank_run, h);
  // What each partition can finish alone, on every rank at once (Statistic::settle).
  const auto settle_start = Clock::now();
  for (Statistic* s : statistics) s->settle();
  mine.settle_seconds = since(settle_start);
  if (me != 0) ranks.leave_statistics(statistics);  // in one process: rank 0 merges them live
  const auto computed = Clock::now();
  ranks.check();
  mine.wait_seconds = since(computed);

  // 4. Rank 0 merges in rank order.
  Report report;
  if (me == 0) {
    const auto merge_start = Clock::now();
    gather_parts(ranks, statistics, fresh, hooks);
    report.merge_seconds = since(merge_start);
  } else {
    send_parts(ranks, statistics, spool);
  }

  // 5. Reports.
  ranks.check();
  report.wall_seconds = since(start);
  ByteWriter w;
  put_rank(w, mine);
  const auto all = ranks.gather(w.bytes());
  if (me == 0) {
    for (const auto& bytes : all) {
      ByteReader r(bytes);
      report.ranks.push_back(get_rank(r));
    }
    report.total = add_up(report.ranks, ranks);
    report.total.wall_seconds = report.wall_seconds;
  } else {
    report.ranks.push_back(mine);
  }
  return report;
}

void apply_count_filters(Ranks& ranks, Query& q, const RunOptions& run) {
  if (!q.count_filters_pending()) return;
  dispatch::require_genotypes_for_count_filters(q);
  const auto& units = q.plan.units;
  std::vector<std::int64_t> weights(units.size());
  for (std::size_t i = 0; i < units.size(); ++i) weights[i] = units[i].selected();
  const auto cuts = balanced_cuts(weights, ranks.size());  // the same on every rank
  const auto share = [&](int r) {
    return std::pair{cuts[static_cast<std::size_t>(r)], cuts[static_cast<std::size_t>(r) + 1]};
  };
  std::vector<std::byte> bits;  // this share's rows, a bit each, unit after unit
  {
    const auto [begin, end] = share(ranks.rank());
    std::vector<std::int64_t> mine;
    for (std::int64_t u = begin; u < end; ++u) mine.push_back(u);
    const auto keep = dispatch::count_filter_units(q, mine, run);
    std::int64_t bit = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const auto& rows = keep[i];  // empty for a unit the pass skipped (no selected row)
      const std::int64_t n = units[static_cast<std::size_t>(mine[i])].size();
      bits.resize(static_cast<std::size_t>((bit + n + 7) / 8));
      for (std::int64_t r = 0; r < n; ++r, ++bit)
        if (static_cast<std::size_t>(r) < rows.size() && rows[static_cast<std::size_t>(r)])
          bits[static_cast<std::size_t>(bit / 8)] |= std::byte{1} << (bit % 8);
    }
  }
  ranks.check();
  const auto all = ranks.allgather(bits);
  std::vector<std::vector<std::uint8_t>> keep(units.size());
  for (int r = 0; r < ranks.size(); ++r) {
    const auto& b = all[static_cast<std::size_t>(r)];
    std::int64_t bit = 0;
    const auto [begin, end] = share(r);
    for (std::int64_t u = begin; u < end; ++u) {
      auto& k = keep[static_cast<std::size_t>(u)];
      k.resize(static_cast<std::size_t>(units[static_cast<std::size_t>(u)].size()));
      for (auto& x : k) {
        x = static_cast<std::size_t>(bit / 8) < b.size() &&
            std::to_integer<int>(b[static_cast<std::size_t>(bit / 8)] >> (bit % 8)) & 1;
        ++bit;
      }
    }
  }
  dispatch::keep_counted_rows(q, keep);
}

RunOptions rank_run_options(RunOptions run, const Ranks& ranks, bool threads_given,
                            bool device_index_given) {
  if (!threads_given)
    run.threads = std::max(1u, hardware_threads() / static_cast<unsigned>(ranks.local_size()));
  if (run.device.kind != DeviceKind::Cpu) {
    // Each rank binds its device before CUDA starts, so it initialises that GPU alone (counted
    // without CUDA: CUDA_VISIBLE_DEVICES or the device files).
    // Several GPUs named (`gpu:0,1`, `gpu:all`): this rank's is one of them.
    run.device = DeviceSpec{
        run.device.kind,
        bind_process_to_gpu(process_gpu(run.device, device_index_given, ranks.local_rank()))};
  }
  if (ranks.rank() != 0) run.progress = {};
  return run;
}

}  // namespace vczstats::dist
