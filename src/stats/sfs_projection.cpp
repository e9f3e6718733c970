// Site frequency spectra projected to a fixed number of alleles per population (sfs --project,
// --project-preview), and spectra as dense arrays in dadi's and moments' .fs layout.
//
// The accumulator keeps, per spectrum, how many sites showed each (called alleles, derived
// alleles) in every population: integers, merged by addition across units and MPI ranks, on
// the host from the heavy pass's allele counts whatever the device. finish() turns each
// distinct key into hypergeometric weights once, in sorted key order, so the floating-point
// sums do not depend on how the sites were split.

#include "stats/sfs_projection.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <functional>
#include <map>
#include <unordered_map>

#include "stats/hypergeometric.hpp"
#include "stats/statistic_support.hpp"
#include "vczstats/error.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::stats {
namespace {

constexpr std::size_t kMaxJoint = 4;
constexpr std::int64_t kPreviewSizes = 500;  // --project-preview's largest n by default

/// Called and derived alleles in each population of a spectrum: n0, d0, n1, d1, ...
struct Key {
  std::array<std::int32_t, 2 * kMaxJoint> v{};
  bool operator==(const Key& o) const { return v == o.v; }
  bool operator<(const Key& o) const { return v < o.v; }
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    for (std::int32_t x : k.v) h = (h ^ static_cast<std::uint32_t>(x)) * 0x100000001b3ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};
struct Entry {
  Key key;
  std::uint64_t sites = 0;
};
using SiteMap = std::unordered_map<Key, std::uint64_t, KeyHash>;

std::vector<Entry> sorted_entries(const SiteMap& m) {
  std::vector<Entry> e;
  e.reserve(m.size());
  for (const auto& [k, c] : m) e.push_back({k, c});
  std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  return e;
}

/// What a spectrum (or one window's) counts: per spectrum, the sites of each key; the sites
/// left out.
struct Tally {
  std::vector<SiteMap> maps;               // one per population, or one for the joint spectrum
  std::vector<std::uint64_t> short_sites;  // sites with fewer called alleles than the size
  std::int64_t multiallelic = 0, unpolarised = 0;

  void merge(const Tally& o) {
    for (std::size_t i = 0; i < maps.size(); ++i)
      for (const auto& [k, c] : o.maps[i]) maps[i][k] += c;
    for (std::size_t i = 0; i < short_sites.size(); ++i) short_sites[i] += o.short_sites[i];
    multiallelic += o.multiallelic;
    unpolarised += o.unpolarised;
  }
  void save(ByteWriter& w) const {
    for (const auto& m : maps) w.put_vector(sorted_entries(m));
    w.put_vector(short_sites);
    w.put(multiallelic);
    w.put(unpolarised);
  }
  void load(ByteReader& r) {
    for (auto& m : maps) {
      m.clear();
      for (const Entry& e : r.get_vector<Entry>()) m[e.key] += e.sites;
    }
    auto s = r.get_vector<std::uint64_t>();
    if (s.size() != short_sites.size())
      throw FormatError("statistic state: a projected spectrum of other populations");
    short_sites = std::move(s);
    multiallelic = r.get<std::int64_t>();
    unpolarised = r.get<std::int64_t>();
  }
};

/// The options of a projected spectrum resolved against the query (populations, sizes), the
/// rule that counts a site, and the table a tally gives.
class Projection {
 public:
  Projection(const Query& q, const SfsOptions& o)
      : q_(q), o_(o), ploidy_(q.store.has_genotypes() ? q.store.ploidy() : 2) {
    if (o.preview && !o.joint.empty())
      throw UsageError("--project-preview: spectra of single populations; leave out --joint");
    const auto sizes = parse_projection(q, o.project, o.preview);
    if (!o.joint.empty()) {
      const auto names = vcz::split_list(o.joint);
      if (names.empty() || names.size() > kMaxJoint)
        throw UsageError("--joint: 1 to 4 comma-separated populations with --project, got '" +
                         o.joint + "'");
      for (const auto& name : names) pops_.push_back(q.population(name, "--joint"));
      for (std::size_t i = 0; i < pops_.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (pops_[i] == pops_[j])
            throw UsageError("--joint: population '" + names[i] + "' given twice");
      joint_ = true;
    } else if (!sizes.empty() && !sizes.begin()->first.empty()) {
      for (const auto& [name, n] : sizes) pops_.push_back(q.population(name, "--project"));
      std::sort(pops_.begin(), pops_.end());
    } else {
      for (int p = 0; p < q.pops.count(); ++p) pops_.push_back(p);
    }
    for (int p : pops_) {
      const std::string& name = q.pops.names[static_cast<std::size_t>(p)];
      const std::int64_t full = q.pops.sizes[static_cast<std::size_t>(p)] * ploidy_;
      // Preview without --project: sizes up to the sample's, at most kPreviewSizes (the
      // preview costs distinct (n, d) pairs x sizes).
      std::int64_t n = std::min(full, kPreviewSizes);
      if (auto it = sizes.find(""); it != sizes.end()) {
        n = it->second;
      } else if (auto named = sizes.find(name); named != sizes.end()) {
        n = named->second;
      } else if (!sizes.empty()) {
        throw UsageError("--project: no size for population '" + name + "' (give " + name + "=N)");
      }
      if (n > full)
        throw UsageError("--project: population '" + name + "' has " + std::to_string(full) +
                         " alleles (" + std::to_string(full / ploidy_) + " samples of ploidy " +
                         std::to_string(ploidy_) + "); cannot project to " + std::to_string(n));
      sizes_.push_back(n);
    }
    if (joint_) {
      double entries = 1;
      for (auto n : sizes_) entries *= static_cast<double>(n + 1);
      // The dense array and the table's columns (populations, sizes, indices, count).
      const double bytes_per_entry = 8.0 * (2 + 3 * static_cast<double>(pops_.size()));
      const double mib = entries * bytes_per_entry / (1024.0 * 1024.0);
      if (mib > static_cast<double>(o.memory_mb))
        throw UsageError("sfs --joint --project: the spectrum has " +
                         std::to_string(static_cast<std::int64_t>(entries)) + " entries (" +
                         std::to_string(static_cast<std::int64_t>(mib + 0.5)) +
                         " MiB with its table), above --memory " + std::to_string(o.memory_mb) +
                         " MiB; project to fewer alleles or raise --memory");
    }
  }

  Tally empty() const {
    Tally t;
    t.maps.resize(joint_ ? 1 : pops_.size());
    t.short_sites.assign(t.maps.size(), 0);
    return t;
  }

  /// Count row @p r of @p u into @p t.
  void add_site(Tally& t, const UnitData& u, std::int64_t r) const {
    if (u.variants->num_alleles(r) != 2) {
      ++t.multiallelic;
      return;
    }
    const int anc = u.ancestral[static_cast<std::size_t>(r)];
    if (anc != 0 && anc != 1) {
      ++t.unpolarised;
      return;
    }
    // Called alleles: the alleles of the calls, a partly missing call's called ones included.
    auto alleles = [&](std::size_t i, std::int32_t& n, std::int32_t& d) {
      const std::int32_t* c = u.site(r, pops_[i]);
      n = c[0] + c[1];
      d = c[1 - anc];
      return n >= (o_.preview ? 0 : sizes_[i]);  // preview: every site, for every size
    };
    if (joint_) {
      Key k;
      bool kept = true;
      for (std::size_t i = 0; i < pops_.size(); ++i)
        kept = alleles(i, k.v[2 * i], k.v[2 * i + 1]) && kept;
      if (kept)
        ++t.maps[0][k];
      else
        ++t.short_sites[0];
    } else {
      for (std::size_t i = 0; i < pops_.size(); ++i) {
        Key k;
        if (alleles(i, k.v[0], k.v[1]))
          ++t.maps[i][k];
        else
          ++t.short_sites[i];
      }
    }
  }

  /// The spectra (or preview) of @p t, with the note.
  Table table(const Tally& t) const {
    Table out = o_.preview ? preview_table(t) : joint_ ? joint_table(t) : spectra_table(t);
    out.note = note(t);
    return out;
  }

 private:
  /// "N" (key "") or "A=N,B=M"; empty when not given.
  static std::map<std::string, std::int64_t> parse_projection(const Query& q,
                                                              const std::string& spec,
                                                              bool preview) {
    std::map<std::string, std::int64_t> out;
    if (spec.empty()) {
      if (!preview) throw UsageError("--project: give N or POP=N,...");
      return out;
    }
    auto number = [&](const std::string& text) {
      std::int64_t v = 0;
      const auto* end = text.data() + text.size();
      const auto [p, ec] = std::from_chars(text.data(), end, v);
      if (ec != std::errc() || p != end || v < 1)
        throw UsageError("--project: expected a positive number of alleles, got '" + text +
                         "' in '" + spec + "'");
      return v;
    };
    for (const auto& item : vcz::split_list(spec)) {
      const auto eq = item.find('=');
      if (eq == std::string::npos) {
        if (out.count("")) throw UsageError("--project: two sizes for every population");
        out[""] = number(item);
      } else {
        const std::string name = item.substr(0, eq);
        q.population(name, "--project");
        if (out.count(name)) throw UsageError("--project: population '" + name + "' twice");
        out[name] = number(item.substr(eq + 1));
      }
    }
    if (out.count("") && out.size() > 1)
      throw UsageError("--project: give N for every population or POP=N for each, not both");
    return out;
  }

  std::string note(const Tally& tally) const {
    std::string s = "sfs: biallelic sites with a known ancestral allele, ";
    s += o_.preview ? "previewed" : "projected";
    s += " by hypergeometric sampling of called alleles";
    s += "; left out: " + std::to_string(tally.multiallelic) + " multi-allelic, " +
         std::to_string(tally.unpolarised) + " of unknown ancestral allele";
    if (o_.preview) return s;
    auto kept = [](const SiteMap& m) {
      std::uint64_t k = 0;
      for (const auto& [key, c] : m) k += c;
      return k;
    };
    for (std::size_t i = 0; i < tally.maps.size(); ++i) {
      s += "; ";
      if (joint_) {
        for (std::size_t j = 0; j < pops_.size(); ++j)
          s += (j ? "," : "") + q_.pops.names[static_cast<std::size_t>(pops_[j])] + "=" +
               std::to_string(sizes_[j]);
      } else {
        s += q_.pops.names[static_cast<std::size_t>(pops_[i])] + "=" + std::to_string(sizes_[i]);
      }
      s += ": " + std::to_string(kept(tally.maps[i])) + " sites projected, " +
           std::to_string(tally.short_sites[i]) + " left out with fewer called alleles";
    }
    return s;
  }

  Table spectra_table(const Tally& tally) const {
    Table t;
    t.add("population", Column::Kind::Label, detail::population_labels(q_));
    t.add("n", Column::Kind::Int);
    t.add(o_.folded ? "folded" : "derived", Column::Kind::Int);
    t.add("count", Column::Kind::Float);
    if (o_.scaled) t.add("scaled", Column::Kind::Float);
    std::vector<double> w;
    for (std::size_t i = 0; i < pops_.size(); ++i) {
      const std::int64_t n = sizes_[i];
      std::vector<double> s(static_cast<std::size_t>(n + 1), 0.0);
      for (const Entry& e : sorted_entries(tally.maps[i])) {
        const std::int64_t lo = hypergeometric(e.key.v[0], e.key.v[1], n, w);
        const auto c = static_cast<double>(e.sites);
        for (std::size_t j = 0; j < w.size(); ++j) s[static_cast<std::size_t>(lo) + j] += c * w[j];
      }
      if (o_.folded) {
        std::vector<double> f(static_cast<std::size_t>(n / 2 + 1), 0.0);
        for (std::int64_t j = 0; j <= n; ++j)
          f[static_cast<std::size_t>(std::min(j, n - j))] += s[static_cast<std::size_t>(j)];
        s = std::move(f);
      }
      for (std::size_t j = 0; j < s.size(); ++j) {
        t.push_int(0, pops_[i]);
        t.push_int(1, n);
        t.push_int(2, static_cast<std::int64_t>(j));
        t.push_float(3, s[j]);
        if (o_.scaled) {
          const auto dj = static_cast<double>(j), dn = static_cast<double>(n);
          t.push_float(4, s[j] * (o_.folded ? dj * (dn - dj) / dn : dj));
        }
      }
    }
    return t;
  }

  Table joint_table(const Tally& tally) const {
    const std::size_t k = pops_.size();
    // Dense array, row-major; dimensions past k have size 1.
    std::array<std::int64_t, kMaxJoint> dim{1, 1, 1, 1}, stride{0, 0, 0, 0};
    for (std::size_t i = 0; i < k; ++i) dim[i] = sizes_[i] + 1;
    std::int64_t total = 1;
    for (std::size_t i = kMaxJoint; i-- > 0;) {
      stride[i] = total;
      total *= dim[i];
    }
    std::vector<double> a(static_cast<std::size_t>(total), 0.0);
    // Keys sorted: those sharing the counts of the first k - 1 populations are consecutive.
    // Their last population's weights are summed first (acc), then spread over the others'
    // once: keys x (N_k + 1) + prefixes x (N_1 + 1)...(N_k + 1) products, not keys x all.
    std::array<std::vector<double>, kMaxJoint> w;
    std::array<std::int64_t, kMaxJoint> lo{};
    const std::size_t last = k - 1;
    const auto entries = sorted_entries(tally.maps[0]);
    std::vector<double> acc, wl;
    std::vector<std::pair<std::int64_t, double>> outer, next;
    for (std::size_t first = 0, end = 0; first < entries.size(); first = end) {
      const Key& key = entries[first].key;
      auto same_prefix = [&](const Key& o) {
        return std::equal(key.v.begin(), key.v.begin() + static_cast<std::ptrdiff_t>(2 * last),
                          o.v.begin());
      };
      acc.assign(static_cast<std::size_t>(dim[last]), 0.0);
      for (end = first; end < entries.size() && same_prefix(entries[end].key); ++end) {
        const Entry& e = entries[end];
        const std::int64_t l =
            hypergeometric(e.key.v[2 * last], e.key.v[2 * last + 1], sizes_[last], wl);
        const auto c = static_cast<double>(e.sites);
        for (std::size_t j = 0; j < wl.size(); ++j)
          acc[static_cast<std::size_t>(l) + j] += c * wl[j];
      }
      for (std::size_t i = 0; i < kMaxJoint; ++i) {
        if (i < last) {
          lo[i] = hypergeometric(key.v[2 * i], key.v[2 * i + 1], sizes_[i], w[i]);
        } else if (i == last) {
          lo[i] = 0;
          w[i] = acc;
        } else {
          lo[i] = 0;
          w[i].assign(1, 1.0);
        }
      }
      // The outer product of the first `last` populations' weights as (offset, product)
      // pairs, then one contiguous axpy of the last population's weights for each (stride 1:
      // the dimensions past k have size 1). Products in the same order as a nested loop.
      outer.assign(1, {0, 1.0});
      for (std::size_t i = 0; i < last; ++i) {
        next.clear();
        for (const auto& [b, x] : outer)
          for (std::size_t j = 0; j < w[i].size(); ++j)
            next.push_back({b + (lo[i] + static_cast<std::int64_t>(j)) * stride[i],
                            i == 0 ? w[i][j] : x * w[i][j]});
        outer.swap(next);
      }
      const std::vector<double>& wk = w[last];
      for (const auto& [b, x] : outer) {
        double* dst = a.data() + b;
        for (std::size_t j = 0; j < wk.size(); ++j) dst[j] += x * wk[j];
      }
    }
    // Folded: the minor allele count in each population (as the unprojected joint spectrum).
    std::array<std::int64_t, kMaxJoint> shown{1, 1, 1, 1}, sstride{0, 0, 0, 0};
    for (std::size_t i = 0; i < k; ++i) shown[i] = o_.folded ? sizes_[i] / 2 + 1 : dim[i];
    std::int64_t stotal = 1;
    for (std::size_t i = kMaxJoint; i-- > 0;) {
      sstride[i] = stotal;
      stotal *= shown[i];
    }
    std::vector<double> s;
    if (o_.folded) {
      s.assign(static_cast<std::size_t>(stotal), 0.0);
      for (std::int64_t flat = 0; flat < total; ++flat) {
        std::int64_t to = 0;
        for (std::size_t i = 0; i < k; ++i) {
          const std::int64_t j = flat / stride[i] % dim[i];
          to += std::min(j, sizes_[i] - j) * sstride[i];
        }
        s[static_cast<std::size_t>(to)] += a[static_cast<std::size_t>(flat)];
      }
    } else {
      s = std::move(a);
    }
    Table t;
    const auto labels = detail::population_labels(q_);
    const std::string kind = o_.folded ? "folded" : "derived";
    auto numbered = [](std::string prefix, std::size_t i) {
      prefix += static_cast<char>('1' + i);  // at most 4 populations
      return prefix;
    };
    for (std::size_t i = 0; i < k; ++i) t.add(numbered("pop", i), Column::Kind::Label, labels);
    for (std::size_t i = 0; i < k; ++i) t.add(numbered("n", i), Column::Kind::Int);
    for (std::size_t i = 0; i < k; ++i) t.add(numbered(kind, i), Column::Kind::Int);
    const int count = t.add("count", Column::Kind::Float);
    for (std::int64_t flat = 0; flat < stotal; ++flat) {
      for (std::size_t i = 0; i < k; ++i) {
        const int c = static_cast<int>(i);
        t.push_int(c, pops_[i]);
        t.push_int(static_cast<int>(k) + c, sizes_[i]);
        t.push_int(2 * static_cast<int>(k) + c, flat / sstride[i] % shown[i]);
      }
      t.push_float(count, s[static_cast<std::size_t>(flat)]);
    }
    return t;
  }

  // For each population and each n = 2 .. N (N: --project's size, else the population's
  // alleles): the sites with at least n called alleles, and the expected number of them
  // segregating after projection to n, 1 - P(0 derived) - P(n derived).
  Table preview_table(const Tally& tally) const {
    Table t;
    t.add("population", Column::Kind::Label, detail::population_labels(q_));
    t.add("n", Column::Kind::Int);
    t.add("sites", Column::Kind::Int);
    t.add("segregating_sites", Column::Kind::Float);
    for (std::size_t i = 0; i < pops_.size(); ++i) {
      const std::int64_t top = sizes_[i];
      std::vector<std::uint64_t> sites(static_cast<std::size_t>(top + 1), 0);
      std::vector<double> seg(static_cast<std::size_t>(top + 1), 0.0);
      for (const Entry& e : sorted_entries(tally.maps[i])) {
        const std::int64_t n = e.key.v[0], d = e.key.v[1];
        const auto c = static_cast<double>(e.sites);
        double p0 = 1, pn = 1;  // P(no derived allele), P(all derived) among m drawn
        for (std::int64_t m = 1; m <= std::min(n, top); ++m) {
          const auto left = static_cast<double>(n - (m - 1));
          p0 *= static_cast<double>(n - d - (m - 1)) / left;
          pn *= static_cast<double>(d - (m - 1)) / left;
          sites[static_cast<std::size_t>(m)] += e.sites;
          seg[static_cast<std::size_t>(m)] += c * (1 - p0 - pn);
        }
      }
      for (std::int64_t m = 2; m <= top; ++m) {
        t.push_int(0, pops_[i]);
        t.push_int(1, m);
        t.push_int(2, static_cast<std::int64_t>(sites[static_cast<std::size_t>(m)]));
        t.push_float(3, seg[static_cast<std::size_t>(m)]);
      }
    }
    return t;
  }

  const Query& q_;
  SfsOptions o_;
  std::int64_t ploidy_;
  bool joint_ = false;
  std::vector<int> pops_;
  std::vector<std::int64_t> sizes_;
};

/// A projected spectrum (or preview) of the whole selection.
class ProjectedSfs final : public Statistic {
 public:
  ProjectedSfs(const Query& q, const SfsOptions& o) : p_(q, o), all_(p_.empty()) {}
  std::string name() const override { return "sfs"; }
  PassNeeds needs() const override { return sfs_pass_needs(); }
  void accumulate(const UnitData& u) override {
    for (std::int64_t r = 0; r < u.rows(); ++r)
      if (u.selected(r)) p_.add_site(all_, u, r);
  }
  void merge(Statistic& later) override { all_.merge(detail::same_statistic(*this, later).all_); }
  void save(ByteWriter& w) const override {
    w.put_string("sfs-projected");
    all_.save(w);
  }
  void load(ByteReader& r) override {
    r.expect("sfs-projected");
    all_.load(r);
  }
  Table finish() override { return p_.table(all_); }

 private:
  Projection p_;
  Tally all_;
};

/// One projected spectrum per window (--window-size, --windows-file, ...): rows chrom, start,
/// end, then the spectrum's columns. Windows and their partitions: windows.hpp; merging
/// partitions as the windowed statistics of windowed.cpp do.
class WindowedProjectedSfs final : public Statistic {
 public:
  using Acc = WindowAccumulator<Tally>;
  WindowedProjectedSfs(const Query& q, const SfsOptions& o)
      : p_(q, o),
        filter_(q),
        contigs_(detail::contig_labels(q)),
        acc_(q.windows, [this] { return p_.empty(); }) {
    if (o.preview) throw UsageError("--project-preview: of the whole selection, not per window");
    acc_.on_backlog([this] { rows_of(acc_.take_closed()); });
    rows_of({});  // the columns
  }
  std::string name() const override { return "sfs"; }
  PassNeeds needs() const override {
    PassNeeds n = sfs_pass_needs();
    n.positions = true;
    n.data_spans = filter_.uses_data_spans();
    return n;
  }
  void begin(const SiteCursor& cursor) override { acc_.begin(cursor); }
  void accumulate(const UnitData& u) override {
    detail::for_each_windowed_site(filter_, u,
                                   [&](const WindowGroup& g, std::int64_t pos, std::int64_t r) {
                                     acc_.add(g, pos, [&](Tally& t) { p_.add_site(t, u, r); });
                                   });
  }
  Table take_rows() override {
    return detail::take_window_rows(rows_, acc_.take_closed(),
                                    [this](const auto& w) { rows_of(w); });
  }
  void merge(Statistic& later) override {
    auto& o = detail::same_statistic(*this, later);
    detail::merge_windows(acc_, rows_, o.acc_, o.rows_, [this](const auto& w) { rows_of(w); });
  }
  void save(ByteWriter& w) const override {
    w.put_string("sfs-windows");
    rows_.save(w);
    acc_.save(w, [](ByteWriter& out, const Tally& t) { t.save(out); });
  }
  void load(ByteReader& r) override {
    r.expect("sfs-windows");
    rows_.load(r);
    acc_.load(r, [](ByteReader& in, Tally& t) { t.load(in); });
  }
  Table finish() override {
    return stats::detail::take_window_rows(rows_, acc_.finish(),
                                           [this](const auto& w) { rows_of(w); });
  }

 private:
  // Append each window's spectrum rows, after chrom, start, end (the first call sets up the
  // columns from an empty tally's table).
  void rows_of(const std::vector<Acc::Window>& windows) {
    if (rows_.columns.empty()) {
      const Table t = p_.table(p_.empty());
      rows_.add("chrom", Column::Kind::Label, contigs_);
      rows_.add("start", Column::Kind::Int);
      rows_.add("end", Column::Kind::Int);
      for (const Column& c : t.columns) rows_.add(c.name, c.kind, c.labels);
      rows_.note = "windows: start and end are 1-based and inclusive; " +
                   t.note.substr(0, t.note.find("; left out"));
    }
    for (const auto& w : windows) {
      const Table t = p_.table(w.sums);
      for (std::int64_t r = 0; r < t.rows(); ++r) {
        rows_.push_int(0, w.contig);
        rows_.push_int(1, w.start);
        rows_.push_int(2, w.end);
        for (std::size_t c = 0; c < t.columns.size(); ++c) {
          const Column& col = t.columns[c];
          const int to = static_cast<int>(c) + 3;
          if (col.kind == Column::Kind::Float)
            rows_.push_float(to, col.floats[static_cast<std::size_t>(r)]);
          else
            rows_.push_int(to, col.ints[static_cast<std::size_t>(r)]);
        }
      }
    }
  }

  Projection p_;
  SiteFilter filter_;
  std::shared_ptr<const std::vector<std::string>> contigs_;
  Acc acc_;
  Table rows_;
};

// dadi's reverse_array: index j -> shape - 1 - j in every dimension, on the flat index.
std::int64_t reversed(std::int64_t flat, const std::vector<std::int64_t>& shape) {
  std::int64_t out = 0, stride = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    const std::int64_t j = flat / stride % shape[i];
    out += (shape[i] - 1 - j) * stride;
    stride *= shape[i];
  }
  return out;
}

}  // namespace

std::unique_ptr<Statistic> make_projected_sfs(const Query& q, const SfsOptions& options) {
  const auto& w = q.window_options;
  if (w.size > 0 || w.variants > 0 || !w.file.empty())
    return std::make_unique<WindowedProjectedSfs>(q, options);
  return std::make_unique<ProjectedSfs>(q, options);
}

}  // namespace vczstats::stats

namespace vczstats {

SpectrumArray spectrum_array(const Table& t, bool fold) {
  SpectrumArray s;
  std::vector<const Column*> derived;
  std::vector<std::int64_t> sizes;
  if (t.find("pop1") >= 0) {
    for (int i = 1; t.find("pop" + std::to_string(i)) >= 0; ++i) {
      const std::string k = std::to_string(i);
      if (t.find("derived" + k) < 0)
        throw UsageError("--format fs needs the unfolded spectrum (derived" + k + ")");
      derived.push_back(&t.column("derived" + k));
      if (t.rows() > 0) {
        s.populations.push_back(t.column("pop" + k).label(0));
        sizes.push_back(t.column("n" + k).ints[0]);
      }
    }
  } else {
    const Column& pop = t.column("population");
    if (t.find("derived") < 0) throw UsageError("--format fs needs the unfolded spectrum");
    for (std::int64_t r = 1; r < t.rows(); ++r)
      if (pop.ints[static_cast<std::size_t>(r)] != pop.ints[0] ||
          t.column("n").ints[static_cast<std::size_t>(r)] != t.column("n").ints[0])
        throw UsageError(
            "--format fs holds one spectrum: choose its populations with --joint A[,B,...] "
            "(with --project), or select one population");
    derived.push_back(&t.column("derived"));
    if (t.rows() > 0) {
      s.populations.push_back(pop.label(0));
      sizes.push_back(t.column("n").ints[0]);
    }
  }
  if (t.rows() == 0) throw UsageError("--format fs: no site entered the spectrum");
  std::int64_t total = 1;
  for (auto n : sizes) {
    s.shape.push_back(n + 1);
    total *= n + 1;
  }
  std::vector<double> data(static_cast<std::size_t>(total), 0.0);
  const Column& count = t.column("count");
  for (std::int64_t r = 0; r < t.rows(); ++r) {
    std::int64_t flat = 0;
    for (std::size_t i = 0; i < derived.size(); ++i)
      flat = flat * s.shape[i] + derived[i]->ints[static_cast<std::size_t>(r)];
    const auto ur = static_cast<std::size_t>(r);
    data[static_cast<std::size_t>(flat)] +=
        count.kind == Column::Kind::Float ? count.floats[ur] : static_cast<double>(count.ints[ur]);
  }
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(total), 0);
  mask.front() = mask.back() = 1;  // seen in no sample, and in all
  s.folded = fold;
  if (fold) {  // dadi's Spectrum.fold, step by step
    std::int64_t samples = 0;
    for (auto n : sizes) samples += n;
    auto entry_total = [&](std::int64_t flat) {
      std::int64_t sum = 0, stride = 1;
      for (std::size_t i = s.shape.size(); i-- > 0;) {
        sum += flat / stride % s.shape[i];
        stride *= s.shape[i];
      }
      return sum;
    };
    const std::int64_t half = samples / 2;
    std::vector<double> folded(data);
    for (std::int64_t f = 0; f < total; ++f)
      if (entry_total(f) > half)
        folded[static_cast<std::size_t>(stats::reversed(f, s.shape))] +=
            data[static_cast<std::size_t>(f)];
    for (std::int64_t f = 0; f < total; ++f)
      if (entry_total(f) > half) folded[static_cast<std::size_t>(f)] = 0;
    for (std::int64_t f = 0; f < total; ++f)
      if (2 * entry_total(f) == samples)
        folded[static_cast<std::size_t>(f)] +=
            -0.5 * data[static_cast<std::size_t>(f)] +
            0.5 * data[static_cast<std::size_t>(stats::reversed(f, s.shape))];
    std::vector<std::uint8_t> m(mask.size());
    for (std::int64_t f = 0; f < total; ++f)
      m[static_cast<std::size_t>(f)] =
          mask[static_cast<std::size_t>(f)] ||
          mask[static_cast<std::size_t>(stats::reversed(f, s.shape))] || entry_total(f) > half;
    data = std::move(folded);
    mask = std::move(m);
  }
  s.values = std::move(data);
  s.mask = std::move(mask);
  return s;
}

std::string fs_text(const SpectrumArray& s) {
  std::string out;
  for (auto d : s.shape) out += std::to_string(d) + " ";
  out += s.folded ? "folded" : "unfolded";
  for (const auto& p : s.populations) {
    if (p.find('"') != std::string::npos)
      throw UsageError("--format fs: population name '" + p + "' holds a double quote");
    out += " \"" + p + "\"";
  }
  out += "\n";
  char buf[64];
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    const auto r = std::to_chars(buf, buf + sizeof buf, s.values[i]);
    if (i) out += ' ';
    out.append(buf, r.ptr);
  }
  out += "\n";
  for (std::size_t i = 0; i < s.mask.size(); ++i) {
    if (i) out += ' ';
    out += s.mask[i] ? '1' : '0';
  }
  out += "\n";
  return out;
}

}  // namespace vczstats
