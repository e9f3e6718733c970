#!/usr/bin/env bash
# ctest LibraryExample.FindPackage: `cmake --install` of BUILD into a temporary prefix, then the
# project examples/find_package configured against that prefix alone (find_package(vczstats)),
# built, and run on a store written by the installed CLI (`vczstats simulate`).
#
#   tests/tools/find_package_example.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"
for f in bin/vczstats include/vczstats/compute.hpp lib/cmake/vczstats/vczstatsConfig.cmake \
  lib/cmake/vczstats/vczstatsConfigVersion.cmake lib/cmake/vczstats/vczstatsTargets.cmake; do
  [ -e "$prefix/$f" ] || { echo "find_package_example: cmake --install made no $f" >&2; exit 1; }
done
ls "$prefix"/lib/libvczstats_core.a >/dev/null

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Only the prefix: a vczstats of the build tree or of the system must not be what is found. The
# build's own CMAKE_PREFIX_PATH follows it: the dependencies the build found outside the system
# (the GPU machine's unpacked Debian packages: BZip2, fmt, ...) are found there again.
deps=$(sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S "$source/examples/find_package" -B "$tmp/consumer" "${generator[@]}" "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix${deps:+;$deps}" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  >"$tmp/configure.log" || { cat "$tmp/configure.log" >&2; exit 1; }
grep -q "vczstats_DIR:PATH=$prefix/lib/cmake/vczstats" "$tmp/consumer/CMakeCache.txt" || {
  echo "find_package_example: vczstats was not found in $prefix:" >&2
  grep vczstats_DIR "$tmp/consumer/CMakeCache.txt" >&2
  exit 1
}
cmake --build "$tmp/consumer" >"$tmp/build.log" || { cat "$tmp/build.log" >&2; exit 1; }
# The consumer compiled against the installed headers, never the source tree's.
if grep -q -- "$source/include" "$tmp/consumer/compile_commands.json" ||
  ! grep -q -- "$prefix/include" "$tmp/consumer/compile_commands.json"; then
  echo "find_package_example: the consumer was compiled against $source/include" >&2
  exit 1
fi

"$prefix/bin/vczstats" simulate --samples 20 --variants 2000 --pops 2 --seed 5 \
  --pops-file "$tmp/pops.tsv" --no-progress "$tmp/sim.vcz" >/dev/null
"$tmp/consumer/library_scan" "$tmp/sim.vcz" "$tmp/pops.tsv" cpu
