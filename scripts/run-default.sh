#!/usr/bin/env bash
# Install dependencies, build, make the default data set (1000 Genomes EUR chr20:1-4 Mb, 503
# samples, from Debian's shapeit4-example) and run the main job on it: info and afdist.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
store=$(bash scripts/make-default-data.sh)
echo "== vczstats info $store"
build/vczstats info "$store"
echo
echo "== vczstats afdist $store"
build/vczstats afdist "$store" -v
