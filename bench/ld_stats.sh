#!/usr/bin/env bash
# Benchmark `vczstats ld-stats` (moments.LD's statistics) for two populations on a simulated
# store, in bins of recombination distance up to 1 cM on a uniform map (1 cM per Mb), and print
# the time and the pairs per second. Issue 31's size: 5,000 diploid samples (10^4 haplotypes)
# x 10^6 variants over 1 Gb (1 variant per kb, about 10^9 pairs within 1 cM).
#
# Usage: bench/ld_stats.sh [-s SAMPLES] [-m VARIANTS] [-L LENGTH] [-n RUNS] [-t THREADS] [-d DEVICE]
#   -s SAMPLES   diploid samples, split in two populations (default 5000)
#   -m VARIANTS  variants (default 1000000)
#   -L LENGTH    contig length in bp (default 1000000000)
#   -n RUNS      timed runs; the median is reported (default 1)
#   -t THREADS   passed to vczstats as -t (default: vczstats' own default)
#   -d DEVICE    passed as --device (default gpu; a comma-separated list runs each, e.g. gpu,cpu)
#   VCZSTATS=path  the vczstats binary (default build/vczstats)
#   BENCH_DIR=dir  where the store is simulated once and kept (default .data/bench)
#
# The peer, pg_gpu (kr-colab/pg_gpu, a CuPy implementation), cannot be installed on the GPU
# machine (no network); docs/ld-decay.md compares with the figure its documentation states.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
samples=5000
variants=1000000
length=1000000000
runs=1
threads=""
devices=gpu
while getopts "s:m:L:n:t:d:h" opt; do
  case $opt in
    s) samples=$OPTARG ;;
    m) variants=$OPTARG ;;
    L) length=$OPTARG ;;
    n) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    d) devices=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
[ -x "$vczstats" ] || { echo "ld_stats.sh: no vczstats binary at $vczstats" >&2; exit 1; }
dir=${BENCH_DIR:-$repo/.data/bench}
mkdir -p "$dir"
store=$dir/ld_stats.s$samples.m$variants.L$length.vcz
pops=$store.pops.tsv
map=$store.map
if [ ! -d "$store" ]; then
  "$vczstats" simulate "$store" --samples "$samples" --variants "$variants" --length "$length" \
    --pops 2 --seed 31 --pops-file "$pops" --no-progress -f
fi
# A uniform map of 1 cM per Mb (plink .map: chrom, id, cM, bp; linear between its rows).
printf '1\tm0\t0\t1\n1\tm1\t%s\t%s\n' "$(awk -v l="$length" 'BEGIN{printf "%.6f", l / 1e6}')" \
  "$length" >"$map"
bins=0,1e-6,2e-6,5e-6,1e-5,2e-5,5e-5,1e-4,2e-4,5e-4,1e-3,2e-3,5e-3,1e-2
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "store: $store ($samples samples in 2 populations, $variants variants over $length bp)," \
  "$(nproc) cores; r-bins $bins (Morgans, up to 1 cM)"
printf '%-8s %10s %16s %14s %18s\n' device wall_s pairs pairs_per_s pair_haplotypes_s
for device in ${devices//,/ }; do
  args=(ld-stats "$store" -P "$pops" --r-bins "$bins" --map "$map" --device "$device" --no-progress)
  [ -n "$threads" ] && args+=(-t "$threads")
  log=$(mktemp)
  out=$(mktemp)
  for _ in $(seq "$runs"); do
    /usr/bin/time -a -o "$log" -f "%e" "$vczstats" "${args[@]}" -o "$out"
  done
  wall=$(median <"$log")
  pairs=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "pairs") c = i; next }
    { s += $c } END { printf "%.0f", s }' "$out")
  printf '%-8s %10.2f %16s %14.3g %18.3g\n' "$device" "$wall" "$pairs" \
    "$(awk -v p="$pairs" -v w="$wall" 'BEGIN{print p / w}')" \
    "$(awk -v p="$pairs" -v w="$wall" -v h="$((2 * samples))" 'BEGIN{print p * h / w}')"
  rm -f "$log" "$out"
done
