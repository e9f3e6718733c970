#!/usr/bin/env bash
# Benchmark the haplotype family on each device asked for, in one run: iHS and nSL on a
# simulated cohort (default 5,000 diploid samples = 10^4 haplotypes x 10^6 variants, written
# once by `vczstats simulate` and cached under .data/bench/), and Garud's H (haplotypes) on
# Ag1000G. The peer is the other device: every command runs on each device of -d (default
# gpu,cpu: the H100 and its 16 cores), and the outputs must be byte-identical.
#
# Usage: bench/haplo.sh [-n RUNS] [-t THREADS] [-d DEVICES] [--samples S] [--variants V]
#                       [--ag STORE] [--no-sim] [--no-ag]
#   -n RUNS       timed runs per command and device; the median is reported (default 3)
#   -t THREADS    vczstats -t (default: all cores)
#   -d DEVICES    comma-separated --device values (default gpu,cpu)
#   --samples S   simulated diploid samples (default 5000: 10^4 haplotypes)
#   --variants V  simulated variants (default 1000000)
#   --ag STORE    the Ag1000G store (default ../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip)
#   --no-sim, --no-ag   skip one data set
#   VCZSTATS=path the vczstats binary (default build/vczstats)
#
# Reported per command and device: wall seconds (median), focal sites scored (or windows) per
# second, and the -v report of the last run (heavy pass: read+decode, pack; the segment kernels
# run inside the consumer's reduce time; the table note says which device ran them).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
runs=3
threads=""
devices=gpu,cpu
samples=5000
variants=1000000
ag=$repo/../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip
do_sim=1
do_ag=1
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs=$2; shift ;;
    -t) threads=$2; shift ;;
    -d) devices=$2; shift ;;
    --samples) samples=$2; shift ;;
    --variants) variants=$2; shift ;;
    --ag) ag=$2; shift ;;
    --no-sim) do_sim=0 ;;
    --no-ag) do_ag=0 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/haplo.sh [-n RUNS] [-t THREADS] [-d DEVICES] [--samples S] [--variants V] [--ag STORE] [--no-sim] [--no-ag]" >&2; exit 2 ;;
  esac
  shift
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
[ -x "$vczstats" ] || { echo "haplo.sh: $vczstats not found" >&2; exit 1; }
cache=$repo/.data/bench
mkdir -p "$cache"
out=$(mktemp -d "$cache/haplo.XXXXXX")
trap 'rm -rf "$out"' EXIT
tflag=()
[ -n "$threads" ] && tflag=(-t "$threads")
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "# $(date -u +%F) $(hostname); $(nproc) cores; $("$vczstats" --version)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | sed 's/^/# gpu: /'
printf "%-12s %-28s %-6s %10s %12s %s\n" command data device wall_s rows_per_s identical

# bench NAME DATA ARGS...: time `vczstats ARGS --device D` on every device, check outputs match.
bench() {
  local name=$1 data=$2
  shift 2
  local first="" dev
  for dev in ${devices//,/ }; do
    local times=()
    for _ in $(seq "$runs"); do
      local t0 t1
      t0=$(now)
      "$vczstats" "$@" --device "$dev" "${tflag[@]}" -v -o "$out/$name.$dev.tsv" 2>"$out/$name.$dev.log"
      t1=$(now)
      times+=("$(awk "BEGIN {print $t1 - $t0}")")
    done
    local wall rows same=""
    wall=$(printf '%s\n' "${times[@]}" | median)
    rows=$(grep -vc '^#' "$out/$name.$dev.tsv" || true)
    rows=$((rows - 1))
    if [ -z "$first" ]; then
      first=$dev
    elif cmp -s "$out/$name.$first.tsv" "$out/$name.$dev.tsv"; then
      same="= $first"
    else
      same="DIFFERS from $first"
    fi
    printf "%-12s %-28s %-6s %10.3f %12.0f %s\n" "$name" "$data" "$dev" "$wall" \
      "$(awk "BEGIN {print $rows / $wall}")" "$same"
    sed 's/^/    /' "$out/$name.$dev.log"
    { grep '^#' "$out/$name.$dev.tsv" || true; } | cut -c1-200 | sed 's/^/    /'
  done
}

if [ "$do_sim" = 1 ]; then
  sim=$cache/haplo_sim_${samples}x${variants}.vcz
  if [ ! -e "$sim" ]; then
    echo "# writing $sim (vczstats simulate)"
    "$vczstats" simulate "$sim" --samples "$samples" --variants "$variants" \
      --variants-chunk-size 10000 --samples-chunk-size 1000 --seed 1 "${tflag[@]}" -v
  fi
  label="sim ${samples}x2 x ${variants}"
  bench ihs "$label" ihs "$sim"
  bench nsl "$label" nsl "$sim"
fi
if [ "$do_ag" = 1 ]; then
  if [ -e "$ag" ]; then
    bench garud400 "Ag1000G 100x2 x 1.02M" haplotypes "$ag" --window-variants 400
    bench garud100k "Ag1000G 100x2 x 1.02M" haplotypes "$ag" --window-size 100000 --window-step 10000
    bench ihs-ag "Ag1000G 100x2 x 1.02M" ihs "$ag"
  else
    echo "# $ag not found: Ag1000G skipped"
  fi
fi
