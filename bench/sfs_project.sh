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
# wall seconds and CPU seconds (user + system) of `sfs`, `sfs --project N`,
# `sfs --project N --joint pop0,pop1` and `sfs --project-preview --project N`, each relative
# to the plain `sfs` (the issue's goal: --project N at most 1.5x the plain spectrum).
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
# Median wall seconds and median CPU seconds (user + system: fairer on a loaded machine) of
# RUNS runs of vczstats sfs STORE "$@".
time_cmd() {
  "$vczstats" sfs "$store" "${common[@]}" "$@" >/dev/null
  local log
  log=$(mktemp)
  for _ in $(seq "$runs"); do
    /usr/bin/time -a -o "$log" -f "%e %U %S" "$vczstats" sfs "$store" "${common[@]}" "$@" >/dev/null
  done
  echo "$(awk '{print $1}' "$log" | median) $(awk '{print $2 + $3}' "$log" | median)"
  rm -f "$log"
}

echo "store: $store ($samples samples, $variants variants, 0.1% missing), device $device," \
  "$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), median of $runs"
read -r base_wall base_cpu <<<"$(time_cmd)"
printf '%-45s %8s %8s %7s %7s\n' command wall_s cpu_s wall_x cpu_x
printf '%-45s %8.3f %8.3f\n' "sfs" "$base_wall" "$base_cpu"
for args in "--project $size" "--project $size --joint pop0,pop1" \
  "--project-preview --project $size"; do
  # shellcheck disable=SC2086
  read -r wall cpu <<<"$(time_cmd $args)"
  printf '%-45s %8.3f %8.3f %6.2fx %6.2fx\n' "sfs $args" "$wall" "$cpu" \
    "$(awk -v a="$wall" -v b="$base_wall" 'BEGIN{print a / b}')" \
    "$(awk -v a="$cpu" -v b="$base_cpu" 'BEGIN{print a / b}')"
done
