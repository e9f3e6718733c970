#!/usr/bin/env bash
# The documentation's picture (docs/index.md, docs/start/quickstart-python.md): diversity,
# Tajima's D and Hudson Fst along 1000 Genomes chr20:1-4 Mb
# (the default data set, FIN and TSI of its 1000 Genomes populations), drawn by the Python
# package from the store: `python -m vczstats plot windows`. Writes docs/python-scan.png.
# Needs the build (bash scripts/build.sh) and the default data (scripts/make-default-data.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
store=$(bash scripts/make-default-data.sh)
pops=$(mktemp --suffix .pops.tsv)
trap 'rm -f "$pops"' EXIT
awk -F'\t' 'NR == 1 || $2 == "FIN" || $2 == "TSI"' "$(dirname "$store")/1kg_chr20.pops.tsv" >"$pops"
mkdir -p docs
PYTHONPATH=${VCZSTATS_PYTHONPATH:-build/python} MPLBACKEND=Agg /usr/bin/python3 -m vczstats plot windows "$store" \
  -P "$pops" -r 20:1000001-4000000 --window-size 100000 --stats pi_per_bp,tajima_d,hudson_fst \
  --title "1000 Genomes EUR chr20:1-4 Mb, 100 kb windows (FIN vs TSI)" \
  --width 9 --height 6.5 --dpi 80 --no-progress -o docs/python-scan.png
echo "python-figure: wrote docs/python-scan.png ($(du -h docs/python-scan.png | cut -f1))" >&2
