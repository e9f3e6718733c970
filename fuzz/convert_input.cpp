// Fuzz target: `vczstats convert` of one input file (VCZ_FUZZ_CONVERT: "vcf" for VCF/BCF through
// htslib, "ms" for ms/scrm output) into a store in /dev/shm, chunked small so that chunk
// boundaries and dimension growth (re-encoding of written chunks) are exercised.
// Input: the file.

#include <string_view>

#include "fuzz_support.hpp"
#include "vczstats/simulate.hpp"
#ifdef VCZSTATS_HAVE_CONVERT
#include "vczstats/convert.hpp"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vczstats;
  static const fuzz::ScratchFile input(".in");
  static const fuzz::ScratchFile output(".vcz");
  input.write(data, size);
  output.clear();
  const std::string_view what = VCZ_FUZZ_CONVERT;
  try {
    if (what == "ms") {
      simulate::MsOptions o;
      o.variants_chunk_size = 3;
      o.samples_chunk_size = 2;
      o.threads = 1;
      (void)simulate::ms_to_vcz(input.path().string(), output.path(), o);
    } else {
#ifdef VCZSTATS_HAVE_CONVERT
      convert::ConvertOptions o;
      o.variants_chunk_size = 2;
      o.samples_chunk_size = 2;
      o.threads = 1;
      o.skip_bad = size % 2 == 0;  // both ways of handling a bad record
      (void)convert::vcf_to_vcz(input.path().string(), output.path(), o);
#else
      __builtin_trap();
#endif
    }
  } catch (const Error&) {
  }
  return 0;
}
