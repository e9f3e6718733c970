#!/usr/bin/env bash
# Test of vcz_to_bed: a random VCF (missing alleles, multi-allelic sites, ALT '.', indels, two
# contigs) and its store (several variant and sample chunks); the .bed vcz_to_bed writes from the
# store must be byte-identical to the one plink2 --make-bed writes from the VCF (half calls
# missing; every ALT allele merged into the first, since .bed counts REF against the rest), also
# after plink2 re-reads and rewrites ours; .bim positions and alleles, and .fam ids, must match.
# Exit 77 (skipped) without plink2 or python zarr, unless CI=true.
#   bench/vcz_to_bed_test.sh PATH/TO/vcz_to_bed
set -euo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
tools=$here/../tests/tools
python=/usr/bin/python3
skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL: $1 (CI=true requires it; scripts/setup.sh)"; exit 1; fi
  echo "skipped: $1"; exit 77
}
command -v plink2 >/dev/null || skip "plink2 is not installed"
"$python" -c 'import zarr, numcodecs, numpy' 2>/dev/null || skip "$python cannot import zarr"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" "$tools/random_vcf.py" --seed 11 --samples 61 --variants 600 --contigs 2 \
  --missing 0.05 --multiallelic 0.2 --alt-dot 0.05 --indels 0.1 -o "$tmp/r.vcf"
"$python" "$tools/vcf2vcz.py" "$tmp/r.vcf" "$tmp/r.vcz" --variants-chunk-size 37 \
  --samples-chunk-size 11 >/dev/null
# plink's copy: contig "1", every ALT allele as the first.
awk 'BEGIN { FS = OFS = "\t" }
  /^##contig/ { sub(/ID=[^,>]*/, "ID=1") }
  /^#/ { print; next }
  { $1 = "1"; split($5, a, ","); $5 = a[1]
    for (i = 10; i <= NF; i++) gsub(/[2-9]/, "1", $i)
    print }' "$tmp/r.vcf" >"$tmp/p.vcf"
plink2 --vcf "$tmp/p.vcf" --vcf-half-call m --max-alleles 2 --make-bed --threads 2 --silent \
  --out "$tmp/ref"

"$bin" "$tmp/r.vcz" "$tmp/ours" -t 2
fail=0
check() {  # name, file a, file b
  if cmp -s "$2" "$3"; then echo "ok: $1"; else echo "FAIL: $1 ($2 vs $3)"; fail=1; fi
}
check ".bed identical to plink2's" "$tmp/ours.bed" "$tmp/ref.bed"
plink2 --bfile "$tmp/ours" --make-bed --threads 2 --silent --out "$tmp/ours2"
check ".bed rewritten by plink2 identical" "$tmp/ours2.bed" "$tmp/ref.bed"
cut -f4-6 "$tmp/ours.bim" >"$tmp/a"
cut -f4-6 "$tmp/ref.bim" >"$tmp/b"
check ".bim positions and alleles" "$tmp/a" "$tmp/b"
grep -v '^#' "$tmp/r.vcf" | cut -f1 >"$tmp/a"
cut -f1 "$tmp/ours.bim" >"$tmp/b"
check ".bim contigs (the VCF's)" "$tmp/a" "$tmp/b"
cut -f2 "$tmp/ours.fam" >"$tmp/a"
cut -f2 "$tmp/ref.fam" >"$tmp/b"
check ".fam sample ids" "$tmp/a" "$tmp/b"
# Not vacuous: the data has every code.
n=$(wc -l <"$tmp/ours.bim")
[ "$n" -eq 600 ] || { echo "FAIL: $n variants, not 600"; fail=1; }
exit $fail
