#!/usr/bin/env bash
# Benchmark a windowed population-genetics scan against vcftools, in one run.
#
# Usage: bench/popgen.sh [-s STORE -v VCF] [-n RUNS] [-t THREADS] [-w WINDOW] [-d DEVICES]
#                        [--synthetic SAMPLES,VARIANTS]
#   -s STORE    VCZ store (default ../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip)
#   -v VCF      the same data as VCF for vcftools (default: STORE with .vcf.gz)
#   --synthetic S,V  instead, generate a store of S samples x V variants and its VCF with
#               bench/make_synthetic_store.py (cached under .data/bench/)
#   -n RUNS     timed runs of vczstats per device; the median is reported (default 3); vcftools
#               runs once per statistic
#   -t THREADS  vczstats -t (default: all cores)
#   -w WINDOW   window size in bp (default 100000)
#   -d DEVICES  comma-separated vczstats --device values, each timed (default cpu)
#   VCZSTATS=path  the vczstats binary (default build/vczstats); VCFTOOLS=path likewise
#
# Populations: the samples alternate between p1 and p2, so every sample chunk holds both.
# vczstats computes pi, theta_W, Tajima's D, dxy and Hudson Fst for both populations and the
# pair in ONE pass (`vczstats stats`); vcftools needs one run per statistic: --window-pi,
# --TajimaD, --weir-fst-pop with --fst-window-size (it has no dxy or Hudson Fst; Weir &
# Cockerham is its Fst). Reported: wall seconds, genotype calls per second and the
# vcftools/vczstats ratio, plus where vczstats' time goes (-v): the heavy pass (decode + gather +
# count, thread-seconds / threads on the CPU; kernels on the GPU) and the consumer's reductions.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
store=$repo/../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip
vcf=""
runs=3
threads=""
window=100000
devices=cpu
synthetic=""
while [ $# -gt 0 ]; do
  case "$1" in
    -s) store=$2; shift ;;
    -v) vcf=$2; shift ;;
    -n) runs=$2; shift ;;
    -t) threads=$2; shift ;;
    -w) window=$2; shift ;;
    -d) devices=$2; shift ;;
    --synthetic) synthetic=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/popgen.sh [-s STORE -v VCF] [-n RUNS] [-t THREADS] [-w WINDOW] [-d DEVICES] [--synthetic S,V]" >&2; exit 2 ;;
  esac
  shift
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
vcftools=${VCFTOOLS:-vcftools}
cache=$repo/.data/bench
mkdir -p "$cache"
if [ -n "$synthetic" ]; then
  S=${synthetic%,*}
  V=${synthetic#*,}
  store=$cache/synthetic_${S}x${V}.vcz
  vcf=$cache/synthetic_${S}x${V}.vcf.gz
  if [ ! -e "$store" ] || [ ! -e "$vcf" ]; then
    python3 "$repo/bench/make_synthetic_store.py" --samples "$S" --variants "$V" \
      --variants-chunk-size 10000 --samples-chunk-size 1000 "$store" --vcf "$vcf" -f
  fi
fi
[ -n "$vcf" ] || vcf=$(echo "$store" | sed -E 's/\.vcz(\.zip)?$/.vcf.gz/')
for f in "$store" "$vcf" "$vczstats"; do
  [ -e "$f" ] || { echo "popgen.sh: $f not found" >&2; exit 1; }
done
command -v "$vcftools" >/dev/null || { echo "popgen.sh: vcftools not found (scripts/setup.sh)" >&2; exit 1; }
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
now() { date +%s.%N; }

out=$(mktemp -d "$cache/popgen.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$vczstats" info "$store" >"$out/info"
samples=$(awk -F'\t' '$1=="samples"{print $2}' "$out/info")
variants=$(awk -F'\t' '$1=="variants"{print $2}' "$out/info")
calls=$(calc "$samples * $variants * 2")
{ zcat -f "$vcf" 2>/dev/null || true; } |
  awk -F'\t' '/^#CHROM/{for (i = 10; i <= NF; i++) print $i, (i % 2 ? "p1" : "p2"); exit}' >"$out/pops"
awk '$2=="p1"{print $1}' "$out/pops" >"$out/p1"
awk '$2=="p2"{print $1}' "$out/pops" >"$out/p2"

targs=()
[ -n "$threads" ] && targs=(-t "$threads")
declare -A median
for dev in ${devices//,/ }; do
  cmd=("$vczstats" stats "$store" -P "$out/pops" --window-size "$window" --device "$dev"
    --stats pi,theta_w,tajima_d,dxy,fst_hudson "${targs[@]}" -v -o "$out/vczstats-$dev.tsv")
  "${cmd[@]}" 2>"$out/warm.log"  # warm the page cache (and the GPU)
  times=()
  for _ in $(seq "$runs"); do
    s=$(now)
    "${cmd[@]}" 2>"$out/v-$dev.log"
    times+=("$(calc "$(now) - $s")")
  done
  median[$dev]=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
done
first=${devices%%,*}
for dev in ${devices//,/ }; do
  cmp -s "$out/vczstats-$first.tsv" "$out/vczstats-$dev.tsv" ||
    echo "popgen.sh: WARNING: --device $dev output differs from --device $first" >&2
done

timeit() {
  local s
  s=$(now)
  "$@" >/dev/null 2>&1
  calc "$(now) - $s"
}
(cd "$out" && zcat -f "$vcf" >/dev/null)  # warm the page cache for vcftools too
t_pi=$(cd "$out" && timeit "$vcftools" --gzvcf "$vcf" --window-pi "$window" --out vt)
t_td=$(cd "$out" && timeit "$vcftools" --gzvcf "$vcf" --TajimaD "$window" --out vt)
t_fst=$(cd "$out" && timeit "$vcftools" --gzvcf "$vcf" --weir-fst-pop p1 --weir-fst-pop p2 \
  --fst-window-size "$window" --out vt)
t_vt=$(calc "$t_pi + $t_td + $t_fst")
ref=${median[$first]}

echo
echo "popgen scan: $store ($samples samples x $variants variants), windows of $window bp, 2 populations"
echo
printf '| tool | wall s | genotype calls/s | time / vczstats (%s) |\n|---|---:|---:|---:|\n' "$first"
for dev in ${devices//,/ }; do
  d=$(grep "device" "$out/v-$dev.log" | head -1 | sed -E 's/^vczstats: device ([^;]*);.*/\1/')
  printf '| vczstats stats, one pass (%s) | %.3f | %.3g | %.2fx |\n' "$d" "${median[$dev]}" \
    "$(calc "$calls / ${median[$dev]}")" "$(calc "${median[$dev]} / $ref")"
done
for row in "vcftools --window-pi:$t_pi" "vcftools --TajimaD:$t_td" \
  "vcftools --weir-fst-pop --fst-window-size:$t_fst" "vcftools, the three together:$t_vt"; do
  name=${row%:*}
  t=${row##*:}
  printf '| %s | %.2f | %.3g | %.1fx |\n' "$name" "$t" "$(calc "$calls / $t")" "$(calc "$t / $ref")"
done
echo
for dev in ${devices//,/ }; do
  stage() { awk -v k="$1" '$2==k{print $3}' "$out/v-$dev.log"; }
  total=$(stage total)
  nthreads=$(sed -nE 's/.*cpu, ([0-9]+) threads.*/\1/p' "$out/v-$dev.log" | head -1)
  if [ -n "$nthreads" ]; then
    heavy=$(calc "$(stage read+decode) + $(stage gather) + $(stage compute)")
    printf -- '- %s: heavy pass (decode + gather + count) %.3f thread-s = %.0f%% of %s threads x %.3f s; reductions in the consumer %.3f s (%.0f%%)\n' \
      "$dev" "$heavy" "$(calc "100 * $heavy / ($nthreads * $total)")" "$nthreads" "$total" \
      "$(stage reduce)" "$(calc "100 * $(stage reduce) / $total")"
  else
    printf -- '- %s: %s\n' "$dev" "$(grep -E '^vczstats:  ' "$out/v-$dev.log" | sed 's/^vczstats: *//' | tr -s ' ' | paste -sd';' -)"
  fi
done
