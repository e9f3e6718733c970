// EHH decay around focal sites (selscan --ehh): per population, the EHH of the derived and of
// the ancestral carriers and of all haplotypes at every usable site within the window, from the
// curve mode of the segment kernel (stats/haplo_kernel.hpp) on the CPU. A point query: the
// windows are read from the store in finish(). Definitions: tests/tools/POPGEN.md §11.5.

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/haplo_rows.hpp"
#include "stats/haplo_runner.hpp"
#include "stats/statistic_support.hpp"
#include "vczstats/haplotypes.hpp"

namespace vczstats {
namespace {

using namespace stats::haplo;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class Ehh final : public Statistic {
 public:
  Ehh(const Query& q, const EhhOptions& o) : q_(q), o_(o), contigs_(contig_names(q)) {
    if (o.focal.empty()) throw UsageError("ehh: no focal site (--focal CHR:POS)");
    if (o.window <= 0) throw UsageError("ehh: the window must be positive");
    store_ = std::make_shared<StoreRows>(q);
    if (!o.map.empty()) map_ = std::make_shared<GeneticMap>(o.map);
    for (const auto& [chrom, pos] : o.focal)
      if (!q.store.find_contig(chrom))
        throw UsageError("ehh: no contig " + chrom + " in the store");
  }

  std::string name() const override { return "ehh"; }
  PassNeeds needs() const override { return {}; }
  void merge(Statistic& later) override { (void)stats::detail::same_statistic(*this, later); }
  void save(ByteWriter& w) const override { w.put_string(name()); }
  void load(ByteReader& r) override { r.expect(name()); }

  Table finish() override {
    auto pops = stats::detail::population_labels(q_);
    Table t;
    t.add("chrom", Column::Kind::Label, contigs_);
    t.add("focal_pos", Column::Kind::Int);
    t.add("population", Column::Kind::Label, pops);
    t.add("pos", Column::Kind::Int);
    t.add("distance", Column::Kind::Int);
    t.add("variants", Column::Kind::Int);
    t.add("gdistance", Column::Kind::Float);
    for (const char* c : {"ehh_derived", "ehh_ancestral", "ehh"}) t.add(c, Column::Kind::Float);
    t.note =
        "EHH of the carriers of the derived and of the ancestral allele of the focal site, "
        "and of all haplotypes, at every site within " +
        std::to_string(o_.window) + " bp (sites with a minor allele frequency below " +
        std::to_string(o_.maf) + " left out); " + vcz::AncestralAlleles::describe(q_.ancestral);
    for (const auto& [chrom, pos] : o_.focal) {
      const std::string site = chrom + ":" + std::to_string(pos);
      const std::int32_t contig = *q_.store.find_contig(chrom);
      const std::int64_t variant = find_variant(contig, pos);
      if (variant < 0)
        throw UsageError("ehh: no selected variant at the focal site " + site + " of " +
                         q_.store.path());
      // A focal site no population can use is an error, not a table with a header alone.
      std::string why;
      const std::int64_t before = t.rows();
      for (int p = 0; p < q_.pops.count(); ++p)
        if (const auto reason = curve(t, contig, pos, variant, p); !reason.empty() && why.empty())
          why = reason;
      if (t.rows() == before) throw UsageError("ehh: the focal site " + site + " " + why);
    }
    return t;
  }

 private:
  /// The first selected variant at @p contig:@p pos, or -1.
  std::int64_t find_variant(std::int32_t contig, std::int64_t pos) {
    const auto& units = store_->plan().units;
    for (std::size_t u = 0; u < units.size(); ++u) {
      const auto& vb = store_->variants(static_cast<std::int64_t>(u));
      for (std::int64_t r = 0; r < units[u].size(); ++r) {
        if (!units[u].mask.empty() && !units[u].mask[static_cast<std::size_t>(r)]) continue;
        if (vb.contig[static_cast<std::size_t>(r)] == contig &&
            vb.position[static_cast<std::size_t>(r)] == pos)
          return units[u].begin + r;
      }
    }
    return -1;
  }

  /// The EHH rows of one population at a focal site, or why it has none.
  std::string curve(Table& t, std::int32_t contig, std::int64_t pos, std::int64_t variant,
                    int pop) {
    HapSet set = population_set(q_, pop);
    const std::int64_t n = set.n;
    RowFilter filter;
    filter.maf = o_.maf;
    RowSource rows(q_, RowExtractor(std::move(set), filter, map_, contigs_), store_);
    rows.seek(variant);
    std::int64_t f = rows.find(variant);
    const std::string in =
        q_.pops.count() > 1 ? " in population " + q_.pops.names[static_cast<std::size_t>(pop)] : "";
    if (f < 0)
      return "is not usable" + in + " (not segregating, a minor allele frequency below --maf " +
             std::to_string(o_.maf) + ", or missing or multi-allelic calls)";
    const RowInfo focal = rows.info(f);
    if (focal.lo == focal.hi) return "is not segregating" + in;
    if (focal.ancestral != focal.lo && focal.ancestral != focal.hi)
      return "has an unknown ancestral allele" + in + " (" +
             vcz::AncestralAlleles::describe(q_.ancestral) + ")";
    // Rows out to the window on both sides (or to the contig's ends).
    for (std::int64_t want = 64;; want *= 2) {
      f = rows.find(variant);
      const std::int64_t b = rows.contig_begin(f);
      if (rows.positions()[b] < stats::detail::saturating_sub(pos, o_.window) ||
          rows.contig_first(b))
        break;
      rows.extend_back(f, want);
    }
    for (std::int64_t want = 64;; want *= 2) {
      f = rows.find(variant);
      const std::int64_t e = rows.contig_end(f) - 1;
      if (rows.positions()[e] > stats::detail::saturating_add(pos, o_.window) ||
          rows.contig_last(e))
        break;
      rows.extend_front(f, want);
    }
    f = rows.find(variant);
    std::int64_t lo = f, hi = f;
    while (lo > rows.contig_begin(f) &&
           rows.positions()[lo - 1] >= stats::detail::saturating_sub(pos, o_.window))
      --lo;
    while (hi + 1 < rows.contig_end(f) &&
           rows.positions()[hi + 1] <= stats::detail::saturating_add(pos, o_.window))
      ++hi;

    Segment left, right;
    left.first = lo;
    left.dir = 1;
    left.steps = f - lo + 1;
    left.focal_from = f - lo;
    left.focal_to = left.steps;
    left.out = 0;
    right.first = hi;
    right.dir = -1;
    right.steps = hi - f + 1;
    right.focal_from = hi - f;
    right.focal_to = right.steps;
    right.out = 1;
    const Segment segments[2] = {left, right};
    BatchView b = batch_over(rows, n, n);
    b.params.mode = kModeCurve;
    b.segments = segments;
    b.nsegments = 2;
    b.max_steps = std::max(left.steps, right.steps);
    const std::int64_t len = b.max_steps + 1;
    std::vector<std::uint64_t> pairs(static_cast<std::size_t>(2 * 3 * len));
    std::vector<FocalResult> unused(2);
    b.focal = unused.data();
    b.curve = pairs.data();
    make_cpu_runner(1)->run(b);

    const int d = focal.ancestral == focal.lo ? 1 : 0;  // the derived allele's bit
    const std::int64_t carriers = focal.carriers;       // of bit 1
    const std::int64_t count[2] = {n - carriers, carriers};
    auto ehh = [&](int side, int c, std::int64_t k, std::int64_t m) {
      if (m < 2) return kNaN;
      return static_cast<double>(pairs[static_cast<std::size_t>((side * 3 + c) * len + k)]) /
             (static_cast<double>(m) * static_cast<double>(m - 1) / 2);
    };
    auto row = [&](int side, std::int64_t k) {
      const std::int64_t i = side == 0 ? f - k : f + k;
      int c = 0;
      t.push_int(c++, contig);
      t.push_int(c++, pos);
      t.push_int(c++, pop);
      t.push_int(c++, rows.positions()[i]);
      t.push_int(c++, rows.positions()[i] - pos);
      t.push_int(c++, side == 0 ? -k : k);
      t.push_float(c++, map_ ? rows.genetic()[i] - focal.gpos : kNaN);  // cM need a map
      t.push_float(c++, ehh(side, d, k, count[d]));
      t.push_float(c++, ehh(side, 1 - d, k, count[1 - d]));
      t.push_float(c++, ehh(side, 2, k, n));
    };
    for (std::int64_t k = f - lo; k >= 0; --k) row(0, k);
    for (std::int64_t k = 1; k <= hi - f; ++k) row(1, k);
    return {};
  }

  const Query& q_;
  EhhOptions o_;
  std::shared_ptr<const std::vector<std::string>> contigs_;
  std::shared_ptr<StoreRows> store_;
  std::shared_ptr<const GeneticMap> map_;
};

}  // namespace

std::unique_ptr<Statistic> make_ehh(const Query& q, const EhhOptions& options) {
  return std::make_unique<Ehh>(q, options);
}

}  // namespace vczstats
