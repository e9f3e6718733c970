#!/usr/bin/env bash
# The documentation's picture (docs/index.md, docs/start/quickstart-python.md): diversity,
# Tajima's D and Hudson Fst along 1000 Genomes chr20:1-4 Mb
# (the default data set, two populations by sample series HG... and NA...), drawn by the Python
# package from the store: `python -m vczstats plot windows`. Writes docs/python-scan.png.
# Needs the build (bash scripts/build.sh) and the default data (scripts/make-default-data.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
store=$(bash scripts/make-default-data.sh)
pops=$(dirname "$store")/1kg_chr20.series.pops.tsv  # not 1kg_chr20.pops.tsv: that holds the populations
bcftools query -l "$(dirname "$store")/1kg_chr20.vcf.gz" |
  awk 'BEGIN{print "sample\tpopulation"} {print $1 "\t" (substr($1, 1, 2) == "HG" ? "HG" : "NA")}' >"$pops"
mkdir -p docs
PYTHONPATH=build/python MPLBACKEND=Agg /usr/bin/python3 -m vczstats plot windows "$store" \
  -P "$pops" -r 20:1000001-4000000 --window-size 100000 --stats pi_per_bp,tajima_d,hudson_fst \
  --title "1000 Genomes EUR chr20:1-4 Mb, 100 kb windows (HG vs NA sample series)" \
  --width 9 --height 6.5 --dpi 80 --no-progress -o docs/python-scan.png
echo "python-figure: wrote docs/python-scan.png ($(du -h docs/python-scan.png | cut -f1))" >&2
