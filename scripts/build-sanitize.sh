#!/usr/bin/env bash
# Configure and build the ASan + UBSan build (clang, with the libFuzzer targets of fuzz/) into
# build-sanitize/ (VCZSTATS_SANITIZE_BUILD overrides the folder). Arguments: targets to build
# (default: everything). Used by scripts/test.sh --sanitize and scripts/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${VCZSTATS_SANITIZE_BUILD:-build-sanitize}
for tool in clang++-14 clang-14; do
  command -v "$tool" >/dev/null ||
    { echo "build-sanitize: $tool is not installed (run scripts/setup.sh)" >&2; exit 1; }
done
if [ ! -f "$build/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  launcher=()
  command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # -O1 -g: readable sanitizer reports at a bearable speed; no CUDA (device code is not
  # instrumented, and the GPU tests skip without a GPU anyway).
  cmake -S . -B "$build" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DVCZSTATS_SANITIZE=ON -DVCZSTATS_FUZZ=ON -DVCZSTATS_CUDA=OFF -DVCZSTATS_BENCH=OFF >/dev/null
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
nice -n 19 cmake --build "$build" -j "$(nproc)" "${targets[@]}"
