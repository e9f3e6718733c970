// `ld`: pairs of nearby variants and their LD (vczstats/ld.hpp) from the variant-pair band.
//
// The band hands over each unit's rows and the pairs whose later variant is in the unit. Rows
// are kept in a window; each row owns the output rows it leads (the pairs (a, b) with a = the
// row, or with focal variants the pairs of the focal row), which are sorted by b and released
// once no later variant can pair with the row. Partitions: a partition that does not start the
// run keeps all its rows (their order depends on the pairs its predecessor adds) and the planes
// of its first rows (its head); every partition keeps the planes of its last rows (its tail).
// merge() evaluates the pairs between the earlier tail and the later head, which no band saw,
// and appends the later partition's rows.

#include <algorithm>
#include <unordered_set>

#include "stats/pair_statistic.hpp"
#include "vczstats/ld.hpp"

namespace vczstats {
namespace {

/// One output row led by a row: the other variant and the values.
struct LdOut {
  std::int64_t b = 0;
  std::int64_t pos_b = 0;
  std::int32_t contig_b = 0;
  std::int32_t pad = 0;
  std::int64_t n = 0;
  double r2 = 0, d = 0, dprime = 0;
};
struct LdRow {
  PairRow meta;
  std::vector<LdOut> out;
};

class LdStatistic final : public stats::pairs::ReleasingPairStatistic<LdStatistic, LdRow> {
 public:
  LdStatistic(const Query& q, const LdOptions& o) : ReleasingPairStatistic(q, "ld"), options_(o) {
    if (o.measure == PairMeasure::PruneEdge) throw UsageError("ld: PruneEdge is prune's test");
    if (o.window_variants < 1) throw UsageError("--ld-window must be at least 1");
    if (o.window_bp < 0) throw UsageError("--ld-window-kb must not be negative");
    if (!(o.min_r2 >= 0 && o.min_r2 <= 1)) throw UsageError("--ld-window-r2 must be in [0, 1]");
    request_.measure = o.measure;
    request_.max_variants = o.window_variants - 1;
    request_.max_bp = o.window_bp;
    request_.min_r2 = o.min_r2;
    if (!o.focal.empty()) {
      request_.focal = find_variants(q, o.focal);
      request_.focal_only = true;
    }
    width_ = request_.haplotypes() ? q.samples.size() * q.store.ploidy() : q.samples.size();
  }

  std::string name() const override { return "ld"; }

  void accumulate_pairs(PairBatch&& batch) override {
    if (!take_batch(batch, [](const PairRow& r) { return Row{r, {}}; })) return;
    for (const PairValue& v : batch.pairs) add_pair(v);
  }

  void save(ByteWriter& w) const override {
    save_released(w, [](ByteWriter& to, const Row& r) {
      to.put(r.meta);
      to.put_vector(r.out);
    });
  }

  void load(ByteReader& r) override {
    load_released(r, [](ByteReader& from) {
      Row row;
      row.meta = from.get<PairRow>();
      row.out = from.get_vector<Out>();
      return row;
    });
  }

 private:
  friend ReleasingPairStatistic;
  using Out = LdOut;
  using Row = LdRow;

  /// Global indices of the store's variants whose ID is in @p ids. @throws UsageError when none.
  static std::vector<std::int64_t> find_variants(const Query& q,
                                                 const std::vector<std::string>& ids) {
    const std::unordered_set<std::string> wanted(ids.begin(), ids.end());
    const vcz::VariantReader reader(q.store, false, true, /*key_missing_ids=*/true);
    std::vector<std::int64_t> out;
    const std::int64_t n = q.store.num_variants();
    constexpr std::int64_t kBlock = 1 << 16;
    for (std::int64_t b = 0; b < n; b += kBlock) {
      const vcz::VariantBlock vb = reader.read(b, std::min(n, b + kBlock));
      for (std::size_t i = 0; i < vb.id.size(); ++i)
        if (wanted.contains(vb.id[i])) out.push_back(b + static_cast<std::int64_t>(i));
    }
    if (out.empty())
      throw UsageError("--ld-snp: none of the " + std::to_string(wanted.size()) +
                       " variant IDs is in " + q.store.path());
    return out;
  }

  static Out out_of(const PairValue& v, const PairRow& other) {
    Out o;
    o.b = other.variant;
    o.pos_b = other.pos;
    o.contig_b = other.contig;
    o.n = v.n;
    o.r2 = v.r2;
    o.d = v.d;
    o.dprime = v.dprime;
    return o;
  }

  void add_pair(const PairValue& v) {
    Row& a = at(ordinal(v.a));
    if (request_.focal.empty()) {
      a.out.push_back(out_of(v, at(ordinal(v.b)).meta));
      return;
    }
    Row& b = at(ordinal(v.b));
    if (stats::pairs::is_focal(request_, v.a)) a.out.push_back(out_of(v, b.meta));
    if (v.a != v.b && stats::pairs::is_focal(request_, v.b)) b.out.push_back(out_of(v, a.meta));
  }

  Table empty_table() const {
    Table t;
    t.add("variant_a", Column::Kind::Int);
    t.add("chrom_a", Column::Kind::Label, contigs_);
    t.add("pos_a", Column::Kind::Int);
    t.add("variant_b", Column::Kind::Int);
    t.add("chrom_b", Column::Kind::Label, contigs_);
    t.add("pos_b", Column::Kind::Int);
    t.add("n", Column::Kind::Int);
    t.add("r2", Column::Kind::Float);
    if (options_.measure == PairMeasure::Haplotype) t.add("d", Column::Kind::Float);
    if (options_.measure != PairMeasure::GenotypeR2) t.add("dprime", Column::Kind::Float);
    t.note = note();
    return t;
  }

  std::string note() const {
    switch (options_.measure) {
      case PairMeasure::GenotypeEm:
        return "r2 and dprime of haplotype frequencies estimated from genotypes (plink 1.9 --r2 "
               "dprime); n = samples called at both";
      case PairMeasure::Haplotype:
        return "phased haplotypes (vcftools --hap-r2); n = haplotypes called at both";
      default:
        return "r2 of non-REF allele counts (plink 1.9 --r2); n = samples called at both";
    }
  }

  /// The output rows led by @p r, sorted by their other variant, into @p t.
  void emit(Row& r, Table& t) const {
    const bool hap = options_.measure == PairMeasure::Haplotype;
    const bool em = options_.measure == PairMeasure::GenotypeEm;
    std::sort(r.out.begin(), r.out.end(), [](const Out& x, const Out& y) { return x.b < y.b; });
    for (const Out& o : r.out) {
      int c = 0;
      t.push_int(c++, r.meta.variant);
      t.push_int(c++, r.meta.contig);
      t.push_int(c++, r.meta.pos);
      t.push_int(c++, o.b);
      t.push_int(c++, o.contig_b);
      t.push_int(c++, o.pos_b);
      t.push_int(c++, o.n);
      t.push_float(c++, o.r2);
      if (hap) t.push_float(c++, o.d);
      if (hap || em) t.push_float(c++, o.dprime);
    }
    std::vector<Out>().swap(r.out);
  }

  LdOptions options_;
};

}  // namespace

std::unique_ptr<Statistic> make_ld(const Query& q, const LdOptions& options) {
  return std::make_unique<LdStatistic>(q, options);
}

}  // namespace vczstats
