#!/usr/bin/env bash
# Benchmark the genotype masks: a windowed `vczstats stats` run with --min-gq 20 (and with
# --min-gq 20 --min-dp 10) against the same run without masks, on a simulated store that has
# call_GQ and call_DP (`vczstats simulate --gq-dp`). Issue 29's goal on the GPU: --min-gq at most
# 2x the plain run (the GQ array is as large as the genotypes; a GPU run decodes on the host
# when masks are given).
#
# Usage: bench/genotype_masks.sh [-s SAMPLES] [-m VARIANTS] [-n RUNS] [-t THREADS] [-d DEVICE]
#   -s SAMPLES   samples of the simulated store (default 2000)
#   -m VARIANTS  variants (default 100000)
#   -n RUNS      timed runs of each command, interleaved; the median is reported (default 3)
#   -t THREADS   passed to vczstats as -t (default: vczstats' own default)
#   -d DEVICE    passed as --device (default auto)
#   VCZSTATS=path  the vczstats binary (default build/vczstats)
#   BENCH_DIR=dir  where the store is simulated once and kept (default .data/bench)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
samples=2000
variants=100000
runs=3
threads=""
device=auto
while getopts "s:m:n:t:d:h" opt; do
  case $opt in
    s) samples=$OPTARG ;;
    m) variants=$OPTARG ;;
    n) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    d) device=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
[ -x "$vczstats" ] || { echo "genotype_masks.sh: no vczstats binary at $vczstats" >&2; exit 1; }
dir=${BENCH_DIR:-$repo/.data/bench}
mkdir -p "$dir"
store=$dir/masks.s$samples.m$variants.vcz
pops=$store.pops.tsv
if [ ! -d "$store" ]; then
  "$vczstats" simulate "$store" --samples "$samples" --variants "$variants" --pops 2 \
    --missing 0.01 --gq-dp --seed 29 --pops-file "$pops" --no-progress -f
fi
common=(stats "$store" -P "$pops" --window-size 100000 --stats pi,theta_w,tajima_d,dxy,fst_hudson
  --device "$device" --no-progress)
[ -n "$threads" ] && common+=(-t "$threads")
cases=("" "--min-gq 20" "--min-gq 20 --min-dp 10")

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for k in "${!cases[@]}"; do
  # shellcheck disable=SC2086  # the case is a word list
  "$vczstats" "${common[@]}" ${cases[$k]} >/dev/null  # page cache, GPU context
done
for _ in $(seq "$runs"); do  # interleaved, so drift in the machine's load hits all alike
  for k in "${!cases[@]}"; do
    # shellcheck disable=SC2086
    /usr/bin/time -a -o "$tmp/$k" -f "%e %U %S" "$vczstats" "${common[@]}" ${cases[$k]} >/dev/null
  done
done
echo "store: $store, device $device, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)," \
  "median of $runs"
printf '%-40s %8s %8s %7s %7s\n' command wall_s cpu_s wall_x cpu_x
for k in "${!cases[@]}"; do
  read -r w c <<<"$(awk '{print $1}' "$tmp/$k" | median) $(awk '{print $2 + $3}' "$tmp/$k" | median)"
  [ "$k" = 0 ] && { pw=$w; pc=$c; }
  printf '%-40s %8.3f %8.3f %6.2fx %6.2fx\n' "stats ${cases[$k]:-(no masks)}" "$w" "$c" \
    "$(awk -v a="$w" -v b="$pw" 'BEGIN{print a / b}')" \
    "$(awk -v a="$c" -v b="$pc" 'BEGIN{print a / b}')"
done
