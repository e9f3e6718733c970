#!/usr/bin/env bash
# Install the Debian packages vczstats needs to build, test and benchmark.
# Idempotent and quiet when everything is already there. Needs root (or sudo).
set -euo pipefail

packages=(
  # build
  build-essential cmake pkg-config
  libblosc-dev libzstd-dev liblz4-dev zlib1g-dev libbz2-dev libisal-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libhts-dev
  # tests and benchmarks; every tool a test compares against (a missing one skips its test, and
  # fails it under CI=true)
  libgtest-dev libbenchmark-dev
  bcftools tabix plink2 plink1.9 vcftools scrm
  python3 python3-numpy python3-zarr python3-numcodecs python3-numba python3-crc32c
  # the sanitizer job and fuzzing (scripts/test.sh --sanitize, scripts/fuzz.sh): clang with
  # libFuzzer and the sanitizer runtimes, llvm-symbolizer for readable reports
  clang-14 libclang-rt-14-dev llvm-14
  # default data set (1000 Genomes EUR chr20:1-4 Mb)
  shapeit4-example
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
