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
# Two populations by 1000 Genomes sample series (HG0... and NA...), for the population scan.
pops=$(dirname "$store")/1kg_chr20.pops.tsv
bcftools query -l "$(dirname "$store")/1kg_chr20.vcf.gz" |
  awk 'BEGIN{print "sample\tpopulation"} {print $1 "\t" (substr($1, 1, 2) == "HG" ? "HG" : "NA")}' >"$pops"
# The samples with phased calls (shapeit4's reference panel: every HG sample), as two
# populations by sample series (HG00... and HG01/HG02...), for the haplotype scans (the examples
# of `vczstats ihs --help` etc.).
awk 'NR == 1 {print} NR > 1 && substr($1, 1, 2) == "HG" {print $1 "\t" (substr($1, 1, 4) == "HG00" ? "HG00" : "HG01")}' \
  "$pops" >"$(dirname "$store")/1kg_chr20.phased.pops.tsv"
echo
echo "== vczstats stats $store -P $pops --window-size 500000 (pi, Tajima's D, dxy, Hudson Fst)"
build/vczstats stats "$store" -P "$pops" --window-size 500000 --stats pi,tajima_d,dxy,fst_hudson -v
