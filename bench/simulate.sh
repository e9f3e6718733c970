#!/usr/bin/env bash
# Benchmark `vczstats simulate`: how fast it writes stores of several shapes.
#
# Usage: bench/simulate.sh [-s "SAMPLES x VARIANTS ..."] [-n RUNS] [-t THREADS] [-m MISSING]
#   -s SHAPES   space-separated SAMPLESxVARIANTS (default "1000x100000 10000x20000 100000x2000")
#   -n RUNS     timed runs per shape; the median is reported (default 3)
#   -t THREADS  vczstats -t (default: nproc)
#   -m MISSING  --missing (default 0; missing calls cost more to compress, as in real data)
#   -z          write zip stores (default: directory stores)
#   VCZSTATS=path  the vczstats binary (default build/vczstats)
#
# Each store is written to .data/bench/ (git-ignored) with the defaults of simulate (bio2zarr's
# chunks: 1000 variants x 10000 samples; blosc zstd 7, bit shuffle), then removed. Reported:
# wall seconds (median), variants/s, genotype calls/s (samples x variants x ploidy 2),
# call_genotype stored MiB and compression ratio. A Markdown table is printed for the README.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shapes="1000x100000 10000x20000 100000x2000"
runs=3
threads=$(nproc)
missing=0
ext=.vcz
while getopts "s:n:t:m:zh" opt; do
  case $opt in
    s) shapes=$OPTARG ;;
    n) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    m) missing=$OPTARG ;;
    z) ext=.vcz.zip ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/simulate.sh [-s SHAPES] [-n RUNS] [-t THREADS] [-m MISSING] [-z]" >&2; exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
[ -x "$vczstats" ] || { echo "simulate.sh: $vczstats not found (build first)" >&2; exit 1; }

cache=$repo/.data/bench
mkdir -p "$cache"
out=$(mktemp -d "$cache/simulate.XXXXXX")
trap 'rm -rf "$out"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "vczstats simulate, $threads threads, --missing $missing, $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))"
echo
echo "| samples | variants | calls | wall s | variants/s | calls/s | call_genotype MiB | ratio |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for shape in $shapes; do
  samples=${shape%x*}
  variants=${shape#*x}
  times=()
  for _ in $(seq "$runs"); do
    rm -rf "$out/s$ext"
    t0=$(date +%s.%N)
    "$vczstats" simulate "$out/s$ext" --samples "$samples" --variants "$variants" \
      --missing "$missing" -t "$threads" --no-progress -v 2>"$out/err" ||
      { cat "$out/err" >&2; exit 1; }
    t1=$(date +%s.%N)
    times+=("$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }')")
  done
  wall=$(printf '%s\n' "${times[@]}" | median)
  # "call_genotype X MiB (Yx compression)" from the -v line
  mib=$(grep -o 'call_genotype [0-9.]* MiB' "$out/err" | awk '{print $2}')
  ratio=$(grep -o '([0-9.]*x compression)' "$out/err" | tr -d '(x' | awk '{print $1}')
  calls=$((samples * variants * 2))
  awk -v s="$samples" -v v="$variants" -v c="$calls" -v w="$wall" -v m="$mib" -v r="$ratio" \
    'BEGIN { printf "| %d | %d | %.3g | %.2f | %.0f | %.3g | %s | %s |\n", s, v, c, w, v / w, c / w, m, r }'
done
