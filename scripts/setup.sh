#!/usr/bin/env bash
# Install the Debian packages vczstats needs to build, test and benchmark.
# Idempotent and quiet when everything is already there. Needs root (or sudo).
set -euo pipefail

packages=(
  # build
  build-essential cmake pkg-config
  libblosc-dev libzstd-dev liblz4-dev zlib1g-dev libbz2-dev libisal-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libhts-dev
  # remote stores (http(s)://, s3://, gs://): libcurl, the GnuTLS flavour, because libhts-dev
  # depends on it and conflicts with libcurl4-openssl-dev (the API is the same)
  libcurl4-gnutls-dev
  # MPI driver (src/dist; tests run mpirun --allow-run-as-root --oversubscribe)
  openmpi-bin libopenmpi-dev
  libopenblas-dev  # BLAS + LAPACK of the matrix family (grm, pca)
  # tests and benchmarks; every tool a test compares against (a missing one skips its test, and
  # fails it under CI=true)
  libgtest-dev libbenchmark-dev
  bcftools tabix plink2 plink1.9 vcftools scrm
  # remote-store tests: a web server on the loopback address (and node/npm for s3rver below);
  # its echo module delays answers for bench/remote.sh -L (an object store's latency)
  nginx libnginx-mod-http-echo nodejs npm
  python3 python3-numpy python3-zarr python3-numcodecs python3-numba python3-crc32c
  # the sanitizer job and fuzzing (scripts/test.sh --sanitize, scripts/fuzz.sh): clang with
  # libFuzzer and the sanitizer runtimes, llvm-symbolizer for readable reports
  clang-14 libclang-rt-14-dev llvm-14
  # default data set (1000 Genomes EUR chr20:1-4 Mb)
  shapeit4-example
  # Python package (python/): build, results as pandas/xarray, plots, tests, offline pip install
  pybind11-dev python3-dev python3-pandas python3-xarray python3-matplotlib python3-tqdm
  python3-pytest python3-venv python3-pip
  # the executed tutorial notebook (ctest PythonNotebook: jupyter nbconvert --execute)
  jupyter-nbconvert python3-nbconvert python3-ipykernel
  # the documentation site (scripts/docs.sh, ctest Docs.*): Sphinx with MyST Markdown, and
  # headless Chromium for the rendering test
  python3-sphinx python3-myst-parser libjs-mathjax chromium
)

missing=()
for p in "${packages[@]}"; do
  case "$p" in
    # any nginx flavour, and node/npm from wherever they came (e.g. NodeSource's nodejs has npm)
    nginx) command -v nginx >/dev/null 2>&1 && continue ;;
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
  esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The S3-compatible server of the remote-store tests: s3rver from the npm registry, pinned, into
# the git-ignored .tools/ (the tests skip with a message when it is absent).
s3rver_version=3.7.1
s3rver_dir="$(cd "$(dirname "$0")/.." && pwd)/.tools/s3rver"
if [ ! -x "$s3rver_dir/node_modules/.bin/s3rver" ] ||
  ! grep -q "\"version\": \"$s3rver_version\"" "$s3rver_dir/node_modules/s3rver/package.json" 2>/dev/null; then
  echo "setup: installing s3rver $s3rver_version into .tools/ (npm)" >&2
  mkdir -p "$s3rver_dir"
  npm install --silent --no-audit --no-fund --prefix "$s3rver_dir" "s3rver@$s3rver_version" >/dev/null ||
    echo "setup: warning: npm could not install s3rver; the S3 tests will be skipped" >&2
fi
