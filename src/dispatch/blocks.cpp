// Genotype blocks for streaming access (vczstats/blocks.hpp): the plan's units decoded and
// gathered by GenotypeReader on producer tasks of the shared pool, in plan order through the
// scheduler's ordered prefetcher, and copied to the device when asked.

#include "vczstats/blocks.hpp"

#include <cstring>

#include "backend/device_blocks.hpp"
#include "stream/genotype_reader.hpp"
#include "stream/prefetcher.hpp"
#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/variants.hpp"

namespace vczstats {
namespace {

/// Whether blocks go to the GPU: always for gpu[:N] (an error without one), for auto when one
/// is usable.
bool blocks_on_gpu(const DeviceSpec& wanted) {
  if (wanted.kind == DeviceKind::Cpu) return false;
  std::string reason;
  const bool usable = gpu_available(&reason, wanted.index);
  if (wanted.kind == DeviceKind::Gpu && !usable)
    throw UsageError("device " + wanted.to_string() + ": no usable GPU (" + reason + ")");
  return usable;
}

/// Host memory of @p bytes, not initialised.
std::shared_ptr<void> host_memory(std::int64_t bytes, std::byte** data) {
  std::shared_ptr<std::byte[]> p = std::make_unique_for_overwrite<std::byte[]>(
      static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1)));
  *data = p.get();
  return p;
}

}  // namespace

struct GenotypeBlockStream::Impl {
  const Query& q;
  stream::GenotypeReader reader;
  vcz::VariantReader fields;
  std::vector<std::int64_t> units;  // plan units with a selected variant
  std::int64_t selected = 0;
  unsigned threads = 1;
  bool gpu = false;
  int device = 0;
  std::unique_ptr<backend::DeviceBlockCopier> copier;
  std::vector<stream::BlockBuffers> buffers;  // per producer
  // Last: its producers use everything above, and its destructor joins them.
  std::unique_ptr<stream::OrderedPrefetcher<GenotypeBlock>> prefetcher;

  Impl(const Query& query, const BlockStreamOptions& o)
      : q(query),
        reader(checked(query), query.samples, {query.filters.min_gq, query.filters.min_dp}),
        fields(query.store, false, false) {
    for (std::size_t i = 0; i < q.plan.units.size(); ++i) {
      const std::int64_t n = q.plan.units[i].selected();
      if (n > 0) units.push_back(static_cast<std::int64_t>(i));
      selected += n;
    }
    threads = o.threads ? o.threads : hardware_threads();
    gpu = blocks_on_gpu(o.device);
    device = o.device.index;
    if (gpu) copier = backend::DeviceBlockCopier::make(device, threads);
    buffers.resize(threads);
    const unsigned depth = o.prefetch ? o.prefetch : 2 * threads;
    prefetcher = std::make_unique<stream::OrderedPrefetcher<GenotypeBlock>>(
        static_cast<std::int64_t>(units.size()), threads, depth,
        [this](std::int64_t i, unsigned w) { return produce(i, w); });
  }

  static const vcz::VczStore& checked(const Query& q) {
    if (!q.store.has_genotypes())
      throw UsageError(q.store.path() +
                       " has no call_genotype (a sites-only store): there are "
                       "no genotypes to read");
    return q.store;
  }

  GenotypeBlock produce(std::int64_t i, unsigned w) {
    const std::int64_t u = units[static_cast<std::size_t>(i)];
    const vcz::WorkUnit& unit = q.plan.units[static_cast<std::size_t>(u)];
    GenotypeBlock b;
    b.unit = u;
    b.samples = reader.num_samples();
    b.ploidy = reader.ploidy();
    b.elem_bytes = reader.elem_bytes();
    const vcz::VariantBlock vb = fields.read(unit.begin, unit.end);
    std::vector<std::int64_t> rows;  // selected rows of the unit
    for (std::int64_t r = 0; r < unit.size(); ++r) {
      if (!unit.mask.empty() && unit.mask[static_cast<std::size_t>(r)] == 0) continue;
      rows.push_back(r);
      b.variant.push_back(unit.begin + r);
      b.contig.push_back(vb.contig[static_cast<std::size_t>(r)]);
      b.position.push_back(vb.position[static_cast<std::size_t>(r)]);
    }
    const std::int64_t row_bytes = b.samples * b.ploidy * b.elem_bytes;
    std::byte* out = nullptr;
    if (gpu)
      out = copier->staging(w, b.bytes()).data();
    else
      b.owner = host_memory(b.bytes(), &out);
    for (std::size_t k = 0; k < reader.num_blocks(); ++k) {
      const GenotypeChunkView view = reader.read(unit, k, buffers[w]);
      const std::int64_t width = view.samples * b.ploidy * b.elem_bytes;
      const std::int64_t column = reader.block_first(k) * b.ploidy * b.elem_bytes;
      for (std::size_t j = 0; j < rows.size(); ++j)
        std::memcpy(out + static_cast<std::int64_t>(j) * row_bytes + column,
                    view.data + rows[j] * width, static_cast<std::size_t>(width));
    }
    if (gpu) {
      b.owner = copier->copy(w, b.bytes(), &out);
      b.on_device = true;
      b.device = device;
    }
    b.data = b.rows() > 0 ? out : nullptr;
    return b;
  }
};

GenotypeBlockStream::GenotypeBlockStream(const Query& q, const BlockStreamOptions& options)
    : impl_(std::make_unique<Impl>(q, options)) {}

GenotypeBlockStream::~GenotypeBlockStream() {
  close();
}

std::int64_t GenotypeBlockStream::size() const {
  return static_cast<std::int64_t>(impl_->units.size());
}
std::int64_t GenotypeBlockStream::variants() const {
  return impl_->selected;
}
std::int64_t GenotypeBlockStream::samples() const {
  return impl_->reader.num_samples();
}
std::int64_t GenotypeBlockStream::ploidy() const {
  return impl_->reader.ploidy();
}
int GenotypeBlockStream::elem_bytes() const {
  return impl_->reader.elem_bytes();
}
bool GenotypeBlockStream::on_device() const {
  return impl_->gpu;
}
int GenotypeBlockStream::device() const {
  return impl_->device;
}

std::optional<GenotypeBlock> GenotypeBlockStream::next() {
  if (!impl_->prefetcher) return std::nullopt;
  return impl_->prefetcher->next();
}

void GenotypeBlockStream::close() {
  impl_->prefetcher.reset();  // cancels and joins the producers
}

GenotypeBlock materialize(const Query& q, const BlockStreamOptions& options) {
  BlockStreamOptions host = options;
  host.device = {DeviceKind::Cpu, 0};
  GenotypeBlockStream blocks(q, host);
  const bool gpu = blocks_on_gpu(options.device);
  GenotypeBlock all;
  all.samples = blocks.samples();
  all.ploidy = blocks.ploidy();
  all.elem_bytes = blocks.elem_bytes();
  const std::int64_t bytes = blocks.variants() * all.samples * all.ploidy * all.elem_bytes;
  std::unique_ptr<backend::DeviceBlockCopier> copier;
  std::byte* out = nullptr;
  if (gpu) {
    copier = backend::DeviceBlockCopier::make(options.device.index, 1);
    out = copier->staging(0, bytes).data();
  } else {
    all.owner = host_memory(bytes, &out);
  }
  std::int64_t offset = 0;
  while (auto b = blocks.next()) {
    if (b->bytes() > 0) std::memcpy(out + offset, b->data, static_cast<std::size_t>(b->bytes()));
    offset += b->bytes();
    all.variant.insert(all.variant.end(), b->variant.begin(), b->variant.end());
    all.contig.insert(all.contig.end(), b->contig.begin(), b->contig.end());
    all.position.insert(all.position.end(), b->position.begin(), b->position.end());
  }
  if (gpu) {
    all.owner = copier->copy(0, bytes, &out);
    all.on_device = true;
    all.device = options.device.index;
  }
  all.data = all.rows() > 0 ? out : nullptr;
  return all;
}

}  // namespace vczstats
