#include "stream/phased_reader.hpp"

#include <string>

#include "vczstats/error.hpp"

namespace vczstats::stream {

PhasedReader::PhasedReader(const vcz::VczStore& store, const vcz::SampleSelection& samples,
                           const GenotypeReader& genotypes)
    : store_(store), samples_(samples), genotypes_(genotypes) {
  auto a = store.array("call_genotype_phased");
  if (!a)
    throw FormatError(store.path() +
                      " has no call_genotype_phased: the haplotype statistics need phased calls "
                      "(VCF genotypes written a|b)");
  phased_ = *a;
  const auto& gt = store.genotypes();
  if (phased_.dtype().kind == zarr::DataKind::String)
    throw FormatError(store.path() +
                      ": call_genotype_phased must hold booleans or integers, found " +
                      phased_.dtype().name());
  if (phased_.ndim() != 2 || phased_.shape()[0] != gt.shape()[0] ||
      phased_.shape()[1] != gt.shape()[1] || phased_.chunks()[0] != gt.chunks()[0] ||
      phased_.chunks()[1] != gt.chunks()[1])
    throw FormatError(store.path() +
                      ": call_genotype_phased does not have call_genotype's variants x samples "
                      "shape and chunks");
}

PhasedReader::Flags PhasedReader::read_flags(const vcz::WorkUnit& unit, std::size_t block,
                                             std::vector<std::byte>& buffer) const {
  buffer.resize(static_cast<std::size_t>(phased_.chunk_bytes()));
  const std::int64_t index[2] = {unit.chunk, genotypes_.block_chunk(block)};
  phased_.read_chunk(index, buffer);
  Flags f;
  f.elem = phased_.dtype().size;
  f.row_bytes = phased_.chunks()[1] * f.elem;
  f.rows = buffer.data() + (unit.begin - unit.chunk * phased_.chunks()[0]) * f.row_bytes;
  f.columns = genotypes_.block_columns(block);
  return f;
}

void PhasedReader::check(const vcz::WorkUnit& unit, std::size_t block,
                         const GenotypeChunkView& view, std::vector<std::byte>& buffer) const {
  check_flags(unit, view, read_flags(unit, block, buffer));
}

void PhasedReader::check_flags(const vcz::WorkUnit& unit, const GenotypeChunkView& view,
                               const Flags& flags) const {
  const int ploidy = static_cast<int>(view.ploidy);
  auto fail = [&](std::int64_t r, std::int64_t i) {
    const std::int64_t variant = unit.begin + r;
    const std::int64_t sel = view.sample_offset + i;
    const std::string id(store_.sample_ids()[samples_.indices[static_cast<std::size_t>(sel)]]);
    std::string where = "variant " + std::to_string(variant);
    const std::int64_t start[1] = {variant}, stop[1] = {variant + 1};
    if (auto pos = store_.array("variant_position"))
      where += " (POS " + std::to_string(pos->read_region_as<std::int64_t>(start, stop)[0]) + ")";
    throw FormatError(store_.path() + ": call_genotype_phased: the call of sample " + id + " at " +
                      where +
                      " is not phased; the haplotype statistics need phased calls (VCF a|b)");
  };
  auto scan = [&](auto t) {
    using T = decltype(t);
    for (std::int64_t r = 0; r < view.variants; ++r) {
      if (!unit.mask.empty() && !unit.mask[static_cast<std::size_t>(r)]) continue;
      const T* g = view.row<T>(r);
      for (std::int64_t i = 0; i < view.samples; ++i) {
        if (flags.set(r, static_cast<std::size_t>(i))) continue;  // (the usual case first)
        int called = 0;
        for (int j = 0; j < ploidy; ++j) called += g[i * ploidy + j] >= 0;
        if (called >= 2) fail(r, i);
      }
    }
  };
  switch (view.elem_bytes) {
    case 1:
      return scan(std::int8_t{});
    case 2:
      return scan(std::int16_t{});
    case 4:
      return scan(std::int32_t{});
    case 8:
      return scan(std::int64_t{});
    default:
      throw FormatError(store_.path() + ": call_genotype: unsupported integer width");
  }
}

void PhasedReader::check_encoded(const vcz::WorkUnit& unit, std::size_t block,
                                 std::vector<std::byte>& buffer, BlockBuffers& scratch) const {
  const Flags flags = read_flags(unit, block, buffer);
  for (std::int64_t r = 0; r < unit.size(); ++r) {
    if (!unit.mask.empty() && !unit.mask[static_cast<std::size_t>(r)]) continue;
    for (std::size_t i = 0; i < flags.columns.size(); ++i)
      if (!flags.set(r, i)) {
        check_flags(unit, genotypes_.read(unit, block, scratch), flags);  // (flags: read once)
        return;
      }
  }
}

}  // namespace vczstats::stream
