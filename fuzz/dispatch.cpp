// The libFuzzer entry point of a fuzz binary. Each harness's LLVMFuzzerTestOneInput is compiled
// as vcz_fuzz_<name> (fuzz/CMakeLists.txt). fuzz_<name> calls its one harness (VCZ_FUZZ_ONLY);
// fuzz_all holds every harness and runs the one named by its argv[0] (fuzz_<name>, e.g. a
// symbolic link to fuzz_all) or else by the environment variable VCZ_FUZZ_TARGET.

#include <cstddef>
#include <cstdint>

#ifdef VCZ_FUZZ_ONLY

extern "C" int VCZ_FUZZ_ONLY(const std::uint8_t* data, std::size_t size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return VCZ_FUZZ_ONLY(data, size);
}

#else

#include <cstdio>
#include <cstdlib>
#include <string_view>

#define VCZ_FUZZ_TARGET(name) extern "C" int vcz_fuzz_##name(const std::uint8_t*, std::size_t);
#include "fuzz_targets.inc"
#undef VCZ_FUZZ_TARGET

namespace {

using Entry = int (*)(const std::uint8_t*, std::size_t);

struct Target {
  const char* name;
  Entry entry;
};

constexpr Target kTargets[] = {
#define VCZ_FUZZ_TARGET(name) {#name, vcz_fuzz_##name},
#include "fuzz_targets.inc"
#undef VCZ_FUZZ_TARGET
};

Entry selected = nullptr;

Entry find(std::string_view name) {
  for (const auto& t : kTargets)
    if (name == t.name) return t.entry;
  return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  std::string_view self = *argc > 0 ? (*argv)[0] : "";
  if (const auto slash = self.rfind('/'); slash != std::string_view::npos)
    self.remove_prefix(slash + 1);
  if (self.starts_with("fuzz_")) selected = find(self.substr(5));
  if (!selected) {
    const char* env = std::getenv("VCZ_FUZZ_TARGET");
    if (env) selected = find(env);
  }
  if (!selected) {
    std::fprintf(stderr, "fuzz_all: name a target by argv[0] fuzz_TARGET or VCZ_FUZZ_TARGET:");
    for (const auto& t : kTargets) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, "\n");
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return selected(data, size);
}

#endif
