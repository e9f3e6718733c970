#!/usr/bin/env bash
# Where `--device auto` should leave the GPU for the CPU: site statistics (stats, afdist) and a
# matrix (king) on stores of growing size, the CPU (-t threads) against the GPU in the same run.
#
# Usage: bench/auto_device.sh [-t THREADS] [-n RUNS] [-s SIZES] [-c COMMANDS] [STORE...]
#   -t THREADS  CPU threads of every run (default: all cores)
#   -n RUNS     timed runs per device; the median is reported (default 3)
#   -s SIZES    comma-separated SxV stores made by `vczstats simulate --seed 1` (cached under
#               .data/bench/; default 100x10000,1000x10000,1000x100000,2500x100000,2500x1000000)
#   -c COMMANDS comma-separated subset of stats,afdist,king (default all)
#   STORE...    further stores (e.g. Ag1000G), timed the same way
#   VCZSTATS    the program (default build/vczstats)
# Each cell is the wall time of the whole process (store to output file), `--device auto` left
# out: one column with --device cpu, one with --device gpu (its default --gpu-decode auto), and
# the calls per second of each. The `auto` column says which device `--device auto` took (from
# -v's "device" line).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
threads=$(nproc)
runs=3
sizes=100x10000,1000x10000,1000x100000,2500x100000,2500x1000000
commands=stats,afdist,king
stores=()
while [ $# -gt 0 ]; do
  case "$1" in
    -t) threads=$2; shift ;;
    -n) runs=$2; shift ;;
    -s) sizes=$2; shift ;;
    -c) commands=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "usage: bench/auto_device.sh [-t THREADS] [-n RUNS] [-s SIZES] [-c COMMANDS] [STORE...]" >&2; exit 2 ;;
    *) stores+=("$1") ;;
  esac
  shift
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
cache=$repo/.data/bench
mkdir -p "$cache"
out=$(mktemp -d "$cache/auto.XXXXXX")
trap 'rm -rf "$out"' EXIT

calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }  # no bc on the GPU machine
timeit() {
  local t0
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "auto_device.sh: failed: $*" >&2; exit 1; }
  calc "$(date +%s.%N) - $t0"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

all=()
for sv in ${sizes//,/ }; do
  S=${sv%x*}
  V=${sv#*x}
  store=$cache/simulate_${S}x${V}.vcz
  if [ ! -e "$store" ]; then
    "$vczstats" simulate --samples "$S" --variants "$V" --seed 1 --missing 0.002 -t "$threads" \
      -f "$store.tmp" >/dev/null
    mv "$store.tmp" "$store"
  fi
  all+=("$store")
done
all+=("${stores[@]}")

echo "device choice: $threads CPU threads, median of $runs runs, whole process wall time"
echo
echo "| command | store | samples x variants | CPU s | GPU s | GPU / CPU | CPU calls/s | GPU calls/s | auto took |"
echo "|---|---|---|---:|---:|---:|---:|---:|---|"
for store in "${all[@]}"; do
  shape=$("$vczstats" info "$store" --format json 2>/dev/null |
    sed -n 's/^  "samples": *\([0-9]*\).*/\1/p; s/^  "variants": *\([0-9]*\).*/\1/p' |
    paste -sd x)
  calls=$(calc "$(echo "$shape" | tr x '*')")
  for c in ${commands//,/ }; do
    case "$c" in
      stats) ours=(stats --stats pi,theta_w,tajima_d --window-size 100000) ;;
      afdist) ours=(afdist) ;;
      king) ours=(king --bin --shape square) ;;
      *) echo "auto_device.sh: unknown command $c" >&2; exit 2 ;;
    esac
    row="| $c | $(basename "$store") | $shape |"
    declare -A med=()
    for d in cpu gpu; do
      cmd=("$vczstats" "${ours[@]}" "$store" --device "$d" -t "$threads" -o "$out/o")
      "${cmd[@]}" >/dev/null 2>&1 || { echo "auto_device.sh: failed: ${cmd[*]}" >&2; exit 1; }
      times=()
      for _ in $(seq "$runs"); do times+=("$(timeit "${cmd[@]}")"); done
      med[$d]=$(median "${times[@]}")
      echo "auto_device.sh: $c $(basename "$store") --device $d: ${times[*]} s" >&2
    done
    took=$("$vczstats" "${ours[@]}" "$store" --device auto -t "$threads" -o "$out/o" -v 2>&1 |
      sed -n 's/^vczstats: device \([a-z]*\).*/\1/p' | head -1)
    row+=" $(printf '%.3f | %.3f | %.2f | %.2e | %.2e' "${med[cpu]}" "${med[gpu]}" \
      "$(calc "${med[gpu]} / ${med[cpu]}")" "$(calc "$calls / ${med[cpu]}")" \
      "$(calc "$calls / ${med[gpu]}")") | ${took:-?} |"
    echo "$row"
    unset med
  done
done
