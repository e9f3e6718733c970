#!/usr/bin/env bash
# Configure and build vczstats into build/ (Release). CUDA code is compiled when nvcc is found
# (in PATH or /usr/local/cuda); pass -DVCZSTATS_CUDA=OFF to skip it. Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
elif [ $# -gt 0 ]; then
  cmake -S . -B build "$@" >/dev/null
fi
cmake --build build -j "$(nproc)"
