#!/usr/bin/env bash
# Benchmark `vczstats convert` against `bcftools view -Ob` of the same input, in the same run.
#
# Usage: bench/convert.sh [-i VCF] [-n RUNS] [-t THREADS]
#   -i VCF      input VCF/VCF.gz/BCF
#               (default ../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcf.gz)
#   -n RUNS     timed runs of each command; the median is reported (default 3)
#   -t THREADS  threads of both tools: vczstats -t N, bcftools --threads N-1 (default: nproc)
#   VCZSTATS=path  the vczstats binary (default build/vczstats)
#
# Both tools read the same input, parse every record with htslib and write a compressed
# store/file to the same folder (.data/bench/, git-ignored): vczstats a zip store (blosc zstd,
# bio2zarr's layout), bcftools a BCF (BGZF). Each command runs once untimed first (page cache),
# then RUNS times. Reported: wall seconds (median), variants/s, genotype calls/s (variants x
# samples x ploidy), output size, and the time relative to bcftools. A Markdown table is printed
# to paste into the README.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
vcf=$repo/../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcf.gz
runs=3
threads=$(nproc)
while getopts "i:n:t:h" opt; do
  case $opt in
    i) vcf=$OPTARG ;;
    n) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/convert.sh [-i VCF] [-n RUNS] [-t THREADS]" >&2; exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
[ -e "$vcf" ] || { echo "convert.sh: $vcf not found" >&2; exit 1; }
[ -x "$vczstats" ] || { echo "convert.sh: $vczstats not found (build first)" >&2; exit 1; }
command -v bcftools >/dev/null || { echo "convert.sh: bcftools not found" >&2; exit 1; }

cache=$repo/.data/bench
mkdir -p "$cache"
out=$(mktemp -d "$cache/convert.XXXXXX")
trap 'rm -rf "$out"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# time_cmd NAME COMMAND...: warm-up, then RUNS timed runs; prints the median wall seconds
time_cmd() {
  local name=$1
  shift
  "$@" >/dev/null 2>"$out/$name.err" || { cat "$out/$name.err" >&2; exit 1; }
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>>"$out/$name.err"
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
  done | median
}

bcf_threads=$((threads > 1 ? threads - 1 : 0))
t_bcf=$(time_cmd bcftools bcftools view --threads "$bcf_threads" -Ob -o "$out/out.bcf" "$vcf")
t_vcz=$(time_cmd vczstats "$vczstats" convert -f -t "$threads" --no-progress "$vcf" "$out/out.vcz.zip")

# Sizes from the store itself.
read -r variants samples ploidy < <("$vczstats" info --format json "$out/out.vcz.zip" |
  /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["variants"], j["samples"], j["ploidy"])')
calls=$((variants * samples * ploidy))
size_bcf=$(stat -c %s "$out/out.bcf")
size_vcz=$(stat -c %s "$out/out.vcz.zip")

row() {  # NAME SECONDS SIZE
  awk -v n="$1" -v t="$2" -v s="$3" -v v="$variants" -v c="$calls" -v ref="$t_bcf" 'BEGIN {
    printf "| %s | %.3f | %.0f | %.1f | %.1f | %.2fx |\n", n, t, v / t, c / t / 1e6, s / 1048576, t / ref }'
}
echo
echo "Input: $vcf ($variants variants x $samples samples x ploidy $ploidy = $calls genotype calls)"
echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), threads $threads, median of $runs runs, $(date +%F)"
echo
echo "| tool | wall s | variants/s | Mcalls/s | output MiB | time / bcftools |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
row "bcftools view -Ob (BCF, --threads $bcf_threads)" "$t_bcf" "$size_bcf"
row "vczstats convert (zip store, -t $threads)" "$t_vcz" "$size_vcz"
