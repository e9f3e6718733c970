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
# -O1 -g: readable sanitizer reports at a bearable speed. Only what runs our code on this CPU: no
# CUDA (device code is not instrumented; the GPU tests skip without a GPU), no MPI driver, no
# Python module (the tests of both are left to the plain build), no benchmarks. A folder
# configured before with MPI or Python is configured again.
cache=$build/CMakeCache.txt
if [ ! -f "$cache" ] || grep -qE '^VCZSTATS_(MPI|PYTHON|CUDA):BOOL=ON' "$cache"; then
  generator=()
  [ -f "$cache" ] || ! command -v ninja >/dev/null 2>&1 || generator=(-G Ninja)
  launcher=()
  command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DVCZSTATS_SANITIZE=ON -DVCZSTATS_FUZZ=ON -DVCZSTATS_CUDA=OFF -DVCZSTATS_BENCH=OFF \
    -DVCZSTATS_MPI=OFF -DVCZSTATS_PYTHON=OFF >/dev/null
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
nice -n 19 cmake --build "$build" -j "$(nproc)" "${targets[@]}"
