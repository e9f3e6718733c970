// A store's diploid genotypes as a PLINK 1 fileset (.bed, .bim, .fam), so that bench/matrix.sh
// gives plink2 and plink 1.9 the same calls as vczstats on a machine without htslib, bcftools or
// numpy (the GPU machine). Uses only the public library API: the genotype block stream decodes
// ahead on the thread pool, and each block's rows are packed in parallel.
//
//   build/bench/vcz_to_bed STORE OUT [-t THREADS] [--contig NAME]
//
// The genotype of a diploid call is the number of non-REF alleles (multi-allelic sites: REF
// against all the other alleles, as the matrix commands count them); a call with a missing
// allele, or one that is not diploid (a haploid call's fill), is missing. The .bim names the
// first ALT allele as A1 (the allele counted, as plink2 --make-bed writes it: '.' for none) and
// REF as A2; the .fam has FID = IID = sample_id, no parents, sex 0 and phenotype -9. --contig
// names every variant's contig NAME in the .bim (e.g. 1, so that plink's rules for X, Y and MT,
// haploid calls and no KING, do not apply to a store of chromosome X).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "vczstats/blocks.hpp"
#include "vczstats/query.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/variants.hpp"

namespace {

// .bed codes (2 bits per sample, low bits first): 00 two A1 (ALT) alleles, 10 one, 11 none,
// 01 missing; indexed by the ALT count, 3 for missing.
constexpr std::uint8_t kBedCode[4] = {3, 2, 0, 1};

template <class T>
void pack_row(const T* g, std::int64_t samples, std::uint8_t* out) {
  const std::int64_t full = samples / 4;
  auto code = [g](std::int64_t i) -> unsigned {
    const T a = g[2 * i], b = g[2 * i + 1];
    const unsigned miss = (a < 0) | (b < 0);
    const unsigned ct = static_cast<unsigned>(a > 0) + static_cast<unsigned>(b > 0);
    return kBedCode[miss ? 3 : ct];
  };
  for (std::int64_t k = 0; k < full; ++k) {
    const std::int64_t i = 4 * k;
    out[k] =
        static_cast<std::uint8_t>(code(i) | code(i + 1) << 2 | code(i + 2) << 4 | code(i + 3) << 6);
  }
  if (samples % 4) {
    unsigned byte = 0;
    for (std::int64_t i = 4 * full; i < samples; ++i) byte |= code(i) << (2 * (i - 4 * full));
    out[full] = static_cast<std::uint8_t>(byte);
  }
}

void pack_rows(const vczstats::GenotypeBlock& b, std::int64_t r0, std::int64_t r1,
               std::int64_t row_bytes, std::uint8_t* out) {
  const std::int64_t stride = b.samples * 2;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::uint8_t* o = out + r * row_bytes;
    const std::byte* row = b.data + r * stride * b.elem_bytes;
    switch (b.elem_bytes) {
      case 1:
        pack_row(reinterpret_cast<const std::int8_t*>(row), b.samples, o);
        break;
      case 2:
        pack_row(reinterpret_cast<const std::int16_t*>(row), b.samples, o);
        break;
      case 4:
        pack_row(reinterpret_cast<const std::int32_t*>(row), b.samples, o);
        break;
      default:
        pack_row(reinterpret_cast<const std::int64_t*>(row), b.samples, o);
        break;
    }
  }
}

struct File {
  std::FILE* f;
  std::string path;
  File(const std::string& p) : f(std::fopen(p.c_str(), "wb")), path(p) {
    if (!f) throw std::runtime_error("cannot write " + p);
  }
  ~File() {
    if (f) std::fclose(f);
  }
  void write(const void* data, std::size_t n) {
    if (n && std::fwrite(data, 1, n, f) != n) throw std::runtime_error("cannot write " + path);
  }
  void write(const std::string& s) { write(s.data(), s.size()); }
  void close() {
    const int rc = std::fclose(f);
    f = nullptr;
    if (rc != 0) throw std::runtime_error("cannot write " + path);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  unsigned threads = 0;
  std::string contig;
  std::vector<std::string> pos;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-t" && i + 1 < args.size())
      threads = static_cast<unsigned>(std::stoul(args[++i]));
    else if (args[i] == "--contig" && i + 1 < args.size())
      contig = args[++i];
    else
      pos.push_back(args[i]);
  }
  if (pos.size() != 2) {
    std::fprintf(
        stderr,
        "usage: %s STORE OUT [-t THREADS] [--contig NAME]  (writes OUT.bed, OUT.bim, OUT.fam)\n",
        argv[0]);
    return 2;
  }
  try {
    vczstats::QueryOptions qo;
    qo.store = pos[0];
    const vczstats::Query q = vczstats::make_query(qo);
    if (q.store.ploidy() != 2)
      throw std::runtime_error(pos[0] + ": ploidy " + std::to_string(q.store.ploidy()) +
                               ", .bed holds diploid calls only");
    const std::string out = pos[1];

    {  // .fam
      File fam(out + ".fam");
      const auto& ids = q.store.sample_ids();
      std::string text;
      for (const std::int64_t s : q.samples.indices) {
        const std::string id(ids[s]);
        text += id + '\t' + id + "\t0\t0\t0\t-9\n";
      }
      fam.write(text);
      fam.close();
    }

    vczstats::BlockStreamOptions so;
    so.threads = threads;
    vczstats::GenotypeBlockStream stream(q, so);
    const std::int64_t samples = stream.samples();
    const std::int64_t row_bytes = (samples + 3) / 4;
    const vczstats::vcz::VariantReader variants(q.store, true, true);
    const auto& contigs = q.store.contig_ids();
    vczstats::ThreadPool pool(threads);

    File bed(out + ".bed");
    File bim(out + ".bim");
    const std::uint8_t magic[3] = {0x6c, 0x1b, 0x01};  // SNP-major
    bed.write(magic, 3);
    std::vector<std::uint8_t> packed;
    std::string text;
    std::int64_t rows = 0;
    while (auto b = stream.next()) {
      const std::int64_t n = b->rows();
      if (n == 0) continue;
      packed.resize(static_cast<std::size_t>(n * row_bytes));
      // Rows in pieces of about 1 MiB of calls, spread over the pool.
      const std::int64_t per = std::max<std::int64_t>(1, (std::int64_t{1} << 20) / (samples * 2));
      const std::int64_t pieces = (n + per - 1) / per;
      pool.parallel_for(pieces, [&](std::int64_t k) {
        pack_rows(*b, k * per, std::min(n, (k + 1) * per), row_bytes, packed.data());
      });
      bed.write(packed.data(), packed.size());

      const auto vb = variants.read(b->variant.front(), b->variant.back() + 1);
      text.clear();
      for (std::int64_t r = 0; r < n; ++r) {
        const std::int64_t v = b->variant[static_cast<std::size_t>(r)] - vb.begin;
        const std::string& id =
            vb.id.empty() ? std::string(".") : vb.id[static_cast<std::size_t>(v)];
        const std::string& alt = vb.num_alleles(v) > 1 ? vb.allele(v, 1) : std::string(".");
        text += contig.empty()
                    ? contigs[static_cast<std::size_t>(vb.contig[static_cast<std::size_t>(v)])]
                    : contig;
        text += '\t';
        text += id;
        text += "\t0\t";
        text += std::to_string(vb.position[static_cast<std::size_t>(v)]);
        text += '\t';
        text += alt;
        text += '\t';
        text += vb.allele(v, 0);
        text += '\n';
      }
      bim.write(text);
      rows += n;
    }
    bed.close();
    bim.close();
    std::fprintf(stderr, "vcz_to_bed: %lld samples x %lld variants -> %s.{bed,bim,fam}\n",
                 static_cast<long long>(samples), static_cast<long long>(rows), out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vcz_to_bed: %s\n", e.what());
    return 1;
  }
  return 0;
}
