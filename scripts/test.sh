#!/usr/bin/env bash
# Install dependencies, build, and run every test (unit tests and comparisons against bcftools
# and the Python reference implementations). Tests that need ../shared/data skip with a message
# when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" "$@"
