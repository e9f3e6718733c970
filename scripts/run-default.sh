#!/usr/bin/env bash
# Install dependencies, build, make the default data set (1000 Genomes EUR chr20:1-4 Mb, 503
# samples, from Debian's shapeit4-example) and run the main job on it: info, afdist and a
# windowed population scan.
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
# The samples' 1000 Genomes populations (CEU, FIN, GBR, IBS, TSI), written by
# make-default-data.sh beside the store (see there for where they come from).
pops=$(dirname "$store")/1kg_chr20.pops.tsv
echo
echo "== vczstats stats $store -P $pops --window-size 500000 (pi, Tajima's D, dxy, Hudson Fst)"
build/vczstats stats "$store" -P "$pops" --window-size 500000 --stats pi,tajima_d,dxy,fst_hudson -v
