#!/usr/bin/env bash
# Pinned host memory on huge pages against cudaHostAlloc (the hidden --pinned-hostalloc, the way
# every pinned buffer was allocated before), end to end: `afdist`, `stats` (windowed pi,
# theta_W, Tajima's D, Hudson Fst, dxy; two populations) and `king` (binary matrix) on the GPU,
# the two configurations interleaved run by run so that both see the same machine state.
# Reports the median wall seconds of each and their ratio; exits 1 when the outputs differ.
#
# Usage: bench/gpu_pinned_ab.sh [-n RUNS] [-s SAMPLESxVARIANTS] [-m SAMPLESxVARIANTS]
#   -n RUNS   interleaved runs per configuration (default 5)
#   -s SHAPE  the store of afdist and stats (default 100000x100000: chunks of 10^4 variants x
#             10^3 samples, two populations, as bench/gpu_decode_e2e.sh simulates it)
#   -m SHAPE  the store of king (default 10000x100000)
#   VCZSTATS=path  the vczstats binary (default build/vczstats); stores are cached under
#   .data/bench/. Run it on the GPU machine.
# shellcheck disable=SC2054  # commas inside --stats lists, not between array elements
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
runs=5
shape=100000x100000
mshape=10000x100000
while getopts "n:s:m:h" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    s) shape=$OPTARG ;;
    m) mshape=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/gpu_pinned_ab.sh [-n RUNS] [-s SHAPE] [-m SHAPE]" >&2; exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
[ -x "$vczstats" ] || { echo "gpu_pinned_ab.sh: $vczstats not found (build first)" >&2; exit 1; }
cache=$repo/.data/bench
mkdir -p "$cache"
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-pinned-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT

store=$cache/pinned_ab_$shape.vcz
pops=$cache/pinned_ab_$shape.pops
if [ ! -e "$store" ]; then
  "$vczstats" simulate "$store" --samples "${shape%x*}" --variants "${shape#*x}" --missing 0.002 \
    --pops 2 --pops-file "$pops" --variants-chunk-size 10000 --samples-chunk-size 1000 --seed 7 \
    --no-progress
fi
mstore=$cache/pinned_ab_$mshape.vcz
if [ ! -e "$mstore" ]; then
  "$vczstats" simulate "$mstore" --samples "${mshape%x*}" --variants "${mshape#*x}" \
    --missing 0.002 --seed 1 --no-progress
fi

run() {  # run CONFIG COMMAND: time one run, keep its output
  local cfg=$1 cmd=$2 out=$work/$1.$2 args
  case $cmd in
    afdist) args=(afdist "$store") ;;
    stats) args=(stats "$store" -P "$pops" --window-size 100000
                 --stats pi,theta_w,tajima_d,fst_hudson,dxy) ;;
    king) args=(king "$mstore" --bin -o "$out.bin") ;;
  esac
  [ "$cfg" = hostalloc ] && args+=(--pinned-hostalloc)
  local a b
  a=$(date +%s.%N)
  "$vczstats" "${args[@]}" --device gpu >"$out" 2>>"$work/err"
  b=$(date +%s.%N)
  echo "$cfg $cmd $(python3 -c "print($b - $a)")" >>"$work/times"
}

for ((r = 0; r < runs; r++)); do
  for cmd in afdist stats king; do
    for cfg in huge hostalloc; do run "$cfg" "$cmd"; done
  done
done
same=yes
for cmd in afdist stats king; do
  cmp -s "$work/huge.$cmd" "$work/hostalloc.$cmd" || same=no
  [ "$cmd" = king ] && { cmp -s "$work/huge.$cmd.bin" "$work/hostalloc.$cmd.bin" || same=no; }
done
echo "## Pinned memory: huge pages against cudaHostAlloc, $runs interleaved runs each"
echo
echo "afdist and stats: ${shape} (two populations); king: ${mshape}; --device gpu, page cache warm"
echo
echo "| command | cudaHostAlloc s (median) | huge pages s (median) | hostalloc / huge |"
echo "| --- | ---: | ---: | ---: |"
python3 - "$work/times" <<'PY'
import collections, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    cfg, cmd, s = line.split()
    t[(cfg, cmd)].append(float(s))
for cmd in ("afdist", "stats", "king"):
    a, b = statistics.median(t[("hostalloc", cmd)]), statistics.median(t[("huge", cmd)])
    print(f"| {cmd} | {a:.3f} | {b:.3f} | {a / b:.2f}x |")
PY
echo
echo "outputs identical: $same"
[ "$same" = yes ]
