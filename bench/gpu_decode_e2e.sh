#!/usr/bin/env bash
# End to end with the genotypes decoded on the device (issue 10): `stats` (windowed pi, theta_W,
# Tajima's D, dxy, Hudson Fst; two populations) and `afdist` on a simulated store, with
# --device gpu --gpu-decode on, --device gpu --gpu-decode off (host decode on every core) and
# --device cpu (every core). Reports wall seconds (median), genotype calls/s, the ratio to the
# CPU, the -v stage breakdown (read, compressed host->device copy, decode, compute) of the
# median run, and whether the three outputs are byte-identical (exit 1 when they differ).
#
# Usage: bench/gpu_decode_e2e.sh [-s SAMPLESxVARIANTS] [-n RUNS] [-c SAMPLE_CHUNK] [-k STORE [-p POPS]]
#                               [-r ARGS]
#   -s SHAPE   simulated store shape (default 10000x100000)
#   -n RUNS    timed runs per configuration; the median is reported (default 3)
#   -c SIZE    --samples-chunk-size of the simulated store (default 1000; variants chunk 10000)
#   -k STORE   use this store instead of simulating one (e.g. a bio2zarr store)
#   -p POPS    populations file for -k (two populations; without it, stats computes pi,
#              theta_w and tajima_d over all samples)
#   -r ARGS    re-encode the store first with `vczstats recompress ARGS`, e.g.
#              "--codec blosc-lz4 --shuffle bit" or "--codec zstd --clevel 3" (default: as simulated,
#              bio2zarr's blosc zstd 7 bit shuffle)
#   VCZSTATS=path  the vczstats binary (default build/vczstats); TMPDIR: where the store goes
# Run it on the GPU machine (scripts/gpu-check.sh runs it in its bench section).
# shellcheck disable=SC2054  # commas inside --stats lists, not between array elements
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shape=10000x100000
runs=3
schunk=1000
store=
reargs=
pops=
while getopts "s:n:c:k:r:p:h" opt; do
  case $opt in
    s) shape=$OPTARG ;;
    n) runs=$OPTARG ;;
    c) schunk=$OPTARG ;;
    k) store=$OPTARG ;;
    r) reargs=$OPTARG ;;
    p) pops=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/gpu_decode_e2e.sh [-s SHAPE] [-n RUNS] [-c SIZE] [-k STORE [-p POPS]] [-r ARGS]" >&2; exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
[ -x "$vczstats" ] || { echo "gpu_decode_e2e.sh: $vczstats not found (build first)" >&2; exit 1; }
calc() { python3 -c "print($1)"; }
samples=${shape%x*}
variants=${shape#*x}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-decode-e2e.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Two populations (simulate --pops 2 writes the table; a given store: halves of sample_id).
if [ -z "$store" ]; then
  store=$work/sim.vcz
  "$vczstats" simulate "$store" --samples "$samples" --variants "$variants" --missing 0.002 \
    --pops 2 --pops-file "$work/pops.tsv" --variants-chunk-size 10000 \
    --samples-chunk-size "$schunk" --seed 7 --no-progress
else
  [ -n "$pops" ] && cp "$pops" "$work/pops.tsv"
  json=$("$vczstats" info --format json "$store")
  samples=$(echo "$json" | python3 -c "import json,sys; print(json.load(sys.stdin)['samples'])")
  variants=$(echo "$json" | python3 -c "import json,sys; print(json.load(sys.stdin)['variants'])")
fi
if [ -n "$reargs" ]; then
  # shellcheck disable=SC2086  # reargs is a list of arguments
  "$vczstats" recompress "$store" "$work/re.vcz" $reargs
  store=$work/re.vcz
fi
calls=$((samples * variants * 2))
info=$("$vczstats" info "$store" | grep -E '^gpu_decode' || true)

echo "## Device decode end to end: ${samples}x${variants} (${calls} calls), $info"
echo
echo "| command | configuration | wall s (median of $runs) | calls/s | vs CPU | stages (-v) |"
echo "| --- | --- | ---: | ---: | ---: | --- |"
status=0
for cmd in stats afdist; do
  case $cmd in
    stats)
      if [ -e "$work/pops.tsv" ]; then
        args=(stats "$store" -P "$work/pops.tsv" --window-size 100000
              --stats pi,theta_w,tajima_d,fst_hudson,dxy)
      else
        args=(stats "$store" --window-size 100000 --stats pi,theta_w,tajima_d)
      fi ;;
    afdist) args=(afdist "$store") ;;
  esac
  "$vczstats" "${args[@]}" --device gpu >/dev/null 2>&1 || true  # page cache, CUDA warm-up
  declare -A median=()
  for conf in cpu gpu-decode-on gpu-decode-off; do
    case $conf in
      gpu-decode-on) dev=(--device gpu --gpu-decode on) ;;
      gpu-decode-off) dev=(--device gpu --gpu-decode off) ;;
      cpu) dev=(--device cpu) ;;
    esac
    times=()
    for ((rep = 0; rep < runs; rep++)); do
      t0=$(date +%s.%N)
      "$vczstats" "${args[@]}" "${dev[@]}" -v >"$work/$cmd-$conf.out" 2>"$work/$cmd-$conf.$rep.err"
      t1=$(date +%s.%N)
      times+=("$(calc "$t1 - $t0")")
    done
    m=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")
    median[$conf]=$m
    stages=$(grep -E '^vczstats: +(read|read\+decode|host->device|decode|compute|total) ' \
      "$work/$cmd-$conf.0.err" | sed 's/^vczstats: *//; s/  */ /g' | cut -d' ' -f1-3 | tr '\n' ';')
    rate=$(calc "$calls / $m")
    printf '| %s | %s | %.3f | %.3g | %.2fx | %s |\n' "$cmd" "$conf" "$m" "$rate" \
      "$(calc "${median[cpu]} / $m")" "$stages"
  done
  for conf in gpu-decode-on gpu-decode-off; do
    if ! cmp -s "$work/$cmd-$conf.out" "$work/$cmd-cpu.out"; then
      echo "| $cmd | $conf | OUTPUT DIFFERS FROM THE CPU | | | |"
      status=1
    fi
  done
  unset median
done
echo
echo "-v of the last gpu-decode-on stats run:"
sed 's/^/    /' "$work/stats-gpu-decode-on.0.err"
exit $status
