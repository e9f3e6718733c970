#!/usr/bin/env bash
# Benchmark `vczstats sfs --project N` against the plain `vczstats sfs` on a simulated store.
#
# Usage: bench/sfs_project.sh [-s SAMPLES] [-m VARIANTS] [-p N] [-n RUNS] [-t THREADS] [-d DEVICE]
#   -s SAMPLES   samples of the simulated store (default 2000)
#   -m VARIANTS  variants (default 20000)
#   -p N         projection size in alleles (default 100)
#   -n RUNS      timed runs of each command; the median is reported (default 3)
#   -t THREADS   passed to vczstats as -t (default: vczstats' own default)
#   -d DEVICE    passed as --device (default auto)
#   VCZSTATS=path  the vczstats binary (default build/vczstats)
#
# It simulates (once, cached under .data/bench/) a store of two populations with 0.1% missing
# calls, runs each command once untimed (page cache), then RUNS times, and prints the median
# wall seconds of `sfs`, `sfs --project N`, `sfs --project N --joint pop0,pop1` and
# `sfs --project-preview --project N`, each relative to the plain `sfs` (the issue's goal:
# --project N at most 1.5x the plain spectrum).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
samples=2000
variants=20000
size=100
runs=3
threads=""
device=auto
while getopts "s:m:p:n:t:d:h" opt; do
  case $opt in
    s) samples=$OPTARG ;;
    m) variants=$OPTARG ;;
    p) size=$OPTARG ;;
    n) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    d) device=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
[ -x "$vczstats" ] || { echo "sfs_project.sh: no vczstats binary at $vczstats" >&2; exit 1; }

dir=$repo/.data/bench
mkdir -p "$dir"
store=$dir/sfs_project.s$samples.m$variants.vcz
pops=$store.pops.tsv
if [ ! -d "$store" ]; then
  "$vczstats" simulate "$store" --samples "$samples" --variants "$variants" --pops 2 \
    --missing 0.001 --seed 30 --pops-file "$pops" -f
fi
common=(-P "$pops" --device "$device")
[ -n "$threads" ] && common+=(-t "$threads")

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
time_cmd() {  # median wall seconds of RUNS runs of vczstats sfs STORE "$@"
  "$vczstats" sfs "$store" "${common[@]}" "$@" >/dev/null
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$vczstats" sfs "$store" "${common[@]}" "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
  done | median
}

echo "store: $store ($samples samples, $variants variants, 0.1% missing), device $device," \
  "$(nproc) cores, median of $runs"
base=$(time_cmd)
printf '%-45s %8.3f s\n' "sfs" "$base"
for args in "--project $size" "--project $size --joint pop0,pop1" \
  "--project-preview --project $size"; do
  # shellcheck disable=SC2086
  t=$(time_cmd $args)
  printf '%-45s %8.3f s  %5.2fx\n' "sfs $args" "$t" "$(echo "$t / $base" | bc -l)"
done
