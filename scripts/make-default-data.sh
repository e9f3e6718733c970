#!/usr/bin/env bash
# Build the project's default data set from Debian's shapeit4-example package:
# 1000 Genomes chr20:1-4 Mb, 503 samples (EUR) x 24,990 variants, diploid.
#
# The package ships two VCFs of the same 24,990 sites: reference.vcf.gz
# (300 samples, phased) and unphased.vcf.gz (203 other samples, unphased);
# scaffold.vcf.gz has only 3,008 sites and the .bcf.gz files are not plain
# BCF. `bcftools merge` of the first two gives the 503 samples.
#
# Writes, under .data/ (git-ignored) of the repository:
#   1kg_chr20.vcf.gz (+ .tbi)  merged VCF, for comparisons with bcftools
#   1kg_chr20.vcz              VCZ directory store made by tests/tools/vcf2vcz.py
#   1kg_chr20.pops.tsv         the 503 samples' 1000 Genomes populations (sample pop super_pop:
#                              CEU, FIN, GBR, IBS, TSI; EUR), for -P (and --pop-column
#                              super_pop): the rows of scripts/data/1kg_chr20.panel.tsv (the
#                              store's samples cut from the 1000 Genomes phase 3 sample panel
#                              integrated_call_samples_v3.20130502.ALL.panel, IGSR,
#                              ftp.1000genomes.ebi.ac.uk/vol1/ftp/release/20130502/; sample
#                              labels only), or of the full panel at $VCZSTATS_1KG_PANEL
#   1kg_chr20.phased.pops.tsv  the same for the 300 samples with phased calls (reference.vcf.gz),
#                              for the haplotype statistics
# Idempotent: does nothing when they exist. Prints the store's path on stdout
# (so `store=$(scripts/make-default-data.sh)` works) and one line saying what
# it made, or that it was already there, on stderr.
# Usage: scripts/make-default-data.sh [OUTDIR]   (default: <repo>/.data)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$repo/.data}
examples=/usr/share/doc/shapeit4/examples/test
vcf=$out/1kg_chr20.vcf.gz
store=$out/1kg_chr20.vcz

pops=$out/1kg_chr20.pops.tsv
phased_pops=$out/1kg_chr20.phased.pops.tsv
panel=${VCZSTATS_1KG_PANEL:-$repo/scripts/data/1kg_chr20.panel.tsv}

# The populations of the store's samples, from the 1000 Genomes panel.
write_pops() {
  local tmp_pops
  if [ ! -f "$panel" ]; then
    echo "make-default-data: no 1000 Genomes panel at $panel (VCZSTATS_1KG_PANEL)" >&2
    exit 1
  fi
  tmp_pops=$(mktemp "$out/.pops.XXXXXX")
  bcftools query -l "$vcf" |
    awk -F'\t' 'NR == FNR { want[$1] = 1; next }
                FNR == 1 { print "sample\tpop\tsuper_pop"; next }
                ($1 in want) { print $1 "\t" $2 "\t" $3; found++ }
                END { if (found != length(want)) exit 1 }' - "$panel" >"$tmp_pops" || {
    rm -f "$tmp_pops"
    echo "make-default-data: $panel lacks some of the store's samples" >&2
    exit 1
  }
  mv "$tmp_pops" "$pops"
  # The samples with phased calls (shapeit4's reference panel, 300 of the 503), for the haplotype
  # statistics (the examples of `vczstats ihs --help` etc.): their rows of the file above.
  bcftools query -l "$examples/reference.vcf.gz" |
    awk 'NR == FNR { phased[$1] = 1; next } FNR == 1 || ($1 in phased)' - "$pops" >"$phased_pops"
}

if [ -s "$vcf.tbi" ] && [ -f "$store/call_genotype/.zarray" ]; then
  [ -s "$pops" ] && [ -s "$phased_pops" ] && head -1 "$pops" | grep -q super_pop || write_pops
  echo "make-default-data: $store already built ($(du -sh "$store" | cut -f1))" >&2
  echo "$store"
  exit 0
fi
for f in reference.vcf.gz unphased.vcf.gz; do
  if [ ! -f "$examples/$f" ]; then
    echo "make-default-data: $examples/$f not found; run scripts/setup.sh (package shapeit4-example)" >&2
    exit 1
  fi
done
mkdir -p "$out"

tmp=$(mktemp -d "$out/.make-default-data.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# merge warns that the two files declare INFO/AC differently (Number=1 and A)
run() { "$@" 2>>"$tmp/log" || { cat "$tmp/log" >&2; echo "make-default-data: failed: $*" >&2; exit 1; }; }
run bcftools merge --no-version -Oz -o "$tmp/merged.vcf.gz" \
  "$examples/reference.vcf.gz" "$examples/unphased.vcf.gz"
run tabix -p vcf "$tmp/merged.vcf.gz"
run /usr/bin/python3 "$repo/tests/tools/vcf2vcz.py" "$tmp/merged.vcf.gz" "$tmp/store.vcz"

rm -rf "$store"
mv "$tmp/merged.vcf.gz" "$vcf"
mv "$tmp/merged.vcf.gz.tbi" "$vcf.tbi"
mv "$tmp/store.vcz" "$store"
write_pops

dims=$(/usr/bin/python3 -c "import zarr,sys; print('x'.join(map(str, zarr.open(sys.argv[1], mode='r')['call_genotype'].shape)))" "$store")
echo "make-default-data: built $store ($dims calls, $(du -sh "$store" | cut -f1)) and $vcf" >&2
echo "$store"
