#!/usr/bin/env bash
# Benchmark a windowed population-genetics scan against vcftools, in one run.
#
# Usage: bench/popgen.sh [-s STORE -v VCF] [-n RUNS] [-t THREADS] [-w WINDOW] [-d DEVICE]
#                        [--synthetic SAMPLES,VARIANTS]
#   -s STORE    VCZ store (default ../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip)
#   -v VCF      the same data as VCF for vcftools (default: STORE with .vcf.gz)
#   --synthetic S,V  instead, generate a store of S samples × V variants and its VCF with
#               bench/make_synthetic_store.py (cached under .data/bench/)
#   -n RUNS     timed runs of vczstats; the median is reported (default 3); vcftools runs once
#   -t THREADS  vczstats -t (default: all cores)
#   -w WINDOW   window size in bp (default 100000)
#   -d DEVICE   vczstats --device (default auto)
#   VCZSTATS=path  the vczstats binary (default build/vczstats)
#
# Populations: the samples alternate between p1 and p2 (odd and even positions), so every
# sample chunk holds both. vczstats computes pi, theta_W, Tajima's D, dxy and Hudson Fst for
# both populations and the pair in ONE pass (`vczstats stats`); vcftools needs one run per
# statistic: --window-pi, --TajimaD, --weir-fst-pop with --fst-window-size (vcftools has no
# dxy or Hudson Fst; Weir & Cockerham is its Fst). The table reports wall seconds, genotype
# calls per second and the vcftools/vczstats ratio, plus where vczstats' time goes (-v):
# the heavy pass (decode + gather + count, thread-seconds / threads) and the consumer's
# reductions (windows, statistics).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
store=$repo/../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip
vcf=""
runs=3
threads=""
window=100000
device=auto
synthetic=""
while [ $# -gt 0 ]; do
  case "$1" in
    -s) store=$2; shift ;;
    -v) vcf=$2; shift ;;
    -n) runs=$2; shift ;;
    -t) threads=$2; shift ;;
    -w) window=$2; shift ;;
    -d) device=$2; shift ;;
    --synthetic) synthetic=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/popgen.sh [-s STORE -v VCF] [-n RUNS] [-t THREADS] [-w WINDOW] [-d DEVICE] [--synthetic S,V]" >&2; exit 2 ;;
  esac
  shift
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
cache=$repo/.data/bench
mkdir -p "$cache"
if [ -n "$synthetic" ]; then
  S=${synthetic%,*}
  V=${synthetic#*,}
  store=$cache/synthetic_${S}x${V}.vcz
  vcf=$cache/synthetic_${S}x${V}.vcf.gz
  if [ ! -e "$store" ] || [ ! -e "$vcf" ]; then
    /usr/bin/python3 "$repo/bench/make_synthetic_store.py" --samples "$S" --variants "$V" \
      --variants-chunk-size 10000 --samples-chunk-size 1000 "$store" --vcf "$vcf" -f
  fi
fi
[ -n "$vcf" ] || vcf=$(echo "$store" | sed -E 's/\.vcz(\.zip)?$/.vcf.gz/')
for f in "$store" "$vcf" "$vczstats"; do
  [ -e "$f" ] || { echo "popgen.sh: $f not found" >&2; exit 1; }
done
command -v vcftools >/dev/null || { echo "popgen.sh: vcftools not installed (scripts/setup.sh)" >&2; exit 1; }

out=$(mktemp -d "$cache/popgen.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$vczstats" info "$store" >"$out/info"
samples=$(awk -F'\t' '$1=="samples"{print $2}' "$out/info")
variants=$(awk -F'\t' '$1=="variants"{print $2}' "$out/info")
{ zcat -f "$vcf" 2>/dev/null || true; } | awk -F'\t' '/^#CHROM/{for (i = 10; i <= NF; i++) print $i, (i % 2 ? "p1" : "p2"); exit}' >"$out/pops"
awk '$2=="p1"{print $1}' "$out/pops" >"$out/p1"
awk '$2=="p2"{print $1}' "$out/pops" >"$out/p2"

targs=()
[ -n "$threads" ] && targs=(-t "$threads")
cmd=("$vczstats" stats "$store" -P "$out/pops" --window-size "$window" --device "$device"
  --stats pi,theta_w,tajima_d,dxy,fst_hudson "${targs[@]}" -v -o "$out/vczstats.tsv")
"${cmd[@]}" 2>"$out/warm.log"  # warm the page cache
times=()
for _ in $(seq "$runs"); do
  s=$(date +%s.%N)
  "${cmd[@]}" 2>"$out/v.log"
  times+=("$(echo "$(date +%s.%N) - $s" | bc -l)")
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')

timeit() {  # timeit NAME CMD...: wall seconds of one run
  local s
  s=$(date +%s.%N)
  "${@:2}" >/dev/null 2>&1
  echo "$(echo "$(date +%s.%N) - $s" | bc -l)"
}
(cd "$out" && zcat -f "$vcf" >/dev/null)  # warm the page cache for vcftools too
t_pi=$(cd "$out" && timeit pi vcftools --gzvcf "$vcf" --window-pi "$window" --out vt)
t_td=$(cd "$out" && timeit tajd vcftools --gzvcf "$vcf" --TajimaD "$window" --out vt)
t_fst=$(cd "$out" && timeit fst vcftools --gzvcf "$vcf" --weir-fst-pop p1 --weir-fst-pop p2 \
  --fst-window-size "$window" --out vt)
t_vt=$(echo "$t_pi + $t_td + $t_fst" | bc -l)

calls=$(echo "$samples * $variants * 2" | bc)
device_line=$(grep "device" "$out/v.log" | head -1 | sed 's/^vczstats: //')
stage() { awk -v k="$1" '$2==k{print $3}' "$out/v.log"; }
nthreads=$(echo "$device_line" | sed -nE 's/.*cpu, ([0-9]+) threads.*/\1/p')
heavy=$(echo "($(stage read+decode) + $(stage gather) + $(stage compute))" | bc -l)
reduce=$(stage reduce)
echo
echo "popgen scan: $store ($samples samples x $variants variants), windows of $window bp, 2 populations"
echo "$device_line"
echo
printf '| tool | wall | genotype calls/s | vs vczstats |\n|---|---|---|---|\n'
printf '| vczstats stats (pi, theta_W, Tajima D, dxy, Hudson Fst; one pass) | %.3f s | %.3g | 1 |\n' \
  "$median" "$(echo "$calls / $median" | bc -l)"
for row in "vcftools --window-pi:$t_pi" "vcftools --TajimaD:$t_td" \
  "vcftools --weir-fst-pop --fst-window-size:$t_fst" "vcftools, the three together:$t_vt"; do
  name=${row%:*}
  t=${row##*:}
  printf '| %s | %.2f s | %.3g | %.1fx slower |\n' "$name" "$t" "$(echo "$calls / $t" | bc -l)" \
    "$(echo "$t / $median" | bc -l)"
done
if [ -n "$nthreads" ]; then
  printf '\nvczstats time (last run, -v): heavy pass (decode + gather + count) %.3f thread-s = %.0f%% of %s threads x wall; reductions in the consumer %.3f s = %.0f%% of wall\n' \
    "$heavy" "$(echo "100 * $heavy / ($nthreads * $(stage total))" | bc -l)" "$nthreads" \
    "$reduce" "$(echo "100 * $reduce / $(stage total)" | bc -l)"
else
  grep -E "^vczstats:  " "$out/v.log" | sed 's/^vczstats: //'
fi
