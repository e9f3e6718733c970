#!/usr/bin/env bash
# ld-stats on data of the shape of pg_gpu's documented moments.LD benchmark, against the figure
# its documentation states (pg_gpu itself cannot be installed on the machines here: no network).
#
# pg_gpu's docs (docs/source/tutorials/moments_integration.rst, "Performance"): parsing two-
# population LD statistics of 3 replicate 1 Mb regions, 10 diploid samples per population,
# takes 0.9 s with pg_gpu on an A100 (190 s with moments). Here: 3 stores simulated with
# `vczstats simulate` (1 Mb, 20 diploid samples in 2 populations, 1,700 sites a replicate, as
# that simulation's parameters give), every pair within the region binned (bp bins up to 1 Mb),
# each replicate a separate run of the CLI, as pg_gpu's figure parses each region; the wall
# time of the three runs together is compared with 0.9 s. The data differ (pg_gpu simulates
# with msprime); the shape (haplotypes, sites, pairs) is the same.
#
# Usage: bench/ld_stats_pg_gpu.sh [-n RUNS] [-t THREADS] [-d DEVICE] [-S SITES]
#   -n RUNS     timed repetitions of the three runs; the median is reported (default 5)
#   -t THREADS  passed as -t (default: vczstats' own default)
#   -d DEVICE   passed as --device (default cpu; a comma-separated list runs each)
#   -S SITES    sites per replicate (default 1700)
#   VCZSTATS=path  the vczstats binary (default build/vczstats)
#   BENCH_DIR=dir  where the stores are simulated once and kept (default .data/bench)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
runs=5
threads=""
devices=cpu
sites=1700
while getopts "n:t:d:S:h" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    d) devices=$OPTARG ;;
    S) sites=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
[ -x "$vczstats" ] || { echo "ld_stats_pg_gpu.sh: no vczstats binary at $vczstats" >&2; exit 1; }
dir=${BENCH_DIR:-$repo/.data/bench}/pg_gpu_shape.S$sites
mkdir -p "$dir"
for r in 1 2 3; do
  [ -d "$dir/rep$r.vcz" ] || "$vczstats" simulate "$dir/rep$r.vcz" --samples 20 --pops 2 \
    --length 1000000 --variants "$sites" --seed "$r" --pops-file "$dir/pops.tsv" --no-progress -f
done
bins=0,100,1000,10000,100000,1000000
peer=0.9
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "3 replicates x (20 diploid samples in 2 populations, $sites sites over 1 Mb), bp bins" \
  "$bins; $(nproc) cores; pg_gpu (A100, its docs): $peer s"
printf '%-8s %10s %12s %14s %14s\n' device wall_s pairs pairs_per_s vs_pg_gpu
for device in ${devices//,/ }; do
  args=(ld-stats -P "$dir/pops.tsv" --bp-bins "$bins" --device "$device" --no-progress)
  [ -n "$threads" ] && args+=(-t "$threads")
  log=$(mktemp)
  out=$(mktemp -d)
  for _ in $(seq "$runs"); do
    start=$(date +%s.%N)
    for r in 1 2 3; do "$vczstats" "${args[@]}" "$dir/rep$r.vcz" -o "$out/$r.tsv"; done
    awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.4f\n", b - a }' >>"$log"
  done
  wall=$(median <"$log")
  pairs=$(cat "$out"/*.tsv | awk -F'\t' '$1 == "bin_start" { for (i = 1; i <= NF; i++)
    if ($i == "pairs") c = i; next } { s += $c } END { printf "%.0f", s }')
  printf '%-8s %10.3f %12s %14.3g %13.1fx\n' "$device" "$wall" "$pairs" \
    "$(awk -v p="$pairs" -v w="$wall" 'BEGIN{print p / w}')" \
    "$(awk -v p="$peer" -v w="$wall" 'BEGIN{print p / w}')"
  rm -rf "$log" "$out"
done
