#!/usr/bin/env bash
# The candidates for `recompress --preset gpu` (issue 10): each encoding of the same genotypes,
# its compression ratio, and `stats` end to end with the genotypes decoded on the device against
# 16 CPU cores decoding on the host, in one run. The preset should maximise GPU throughput x
# compression ratio. Each row re-encodes the store with `vczstats recompress ARGS` and runs
# bench/gpu_decode_e2e.sh -k on it; its full tables (afdist too, and the -v stages) go to
# stderr.
#
# Usage: bench/gpu_preset_candidates.sh [-s SAMPLESxVARIANTS | -k STORE] [-n RUNS]
#   -s SHAPE  simulated store (bio2zarr's encoding: blosc zstd 7, bit shuffle; default
#             2500x1019012, two populations)
#   -k STORE  an existing store instead (stats over all samples)
#   -n RUNS   timed runs per configuration, median reported (default 3)
#   VCZSTATS=path  the vczstats binary (default build/vczstats); TMPDIR: where the stores go
# Run it on the GPU machine.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shape=2500x1019012
store=
runs=3
while getopts "s:k:n:h" opt; do
  case $opt in
    s) shape=$OPTARG ;;
    k) store=$OPTARG ;;
    n) runs=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/gpu_preset_candidates.sh [-s SHAPE | -k STORE] [-n RUNS]" >&2; exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
export VCZSTATS=$vczstats
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-preset.XXXXXX")
trap 'rm -rf "$work"' EXIT
popsarg=()
if [ -z "$store" ]; then
  store=$work/sim.vcz
  "$vczstats" simulate "$store" --samples "${shape%x*}" --variants "${shape#*x}" --missing 0.002 \
    --pops 2 --pops-file "$work/pops.tsv" --variants-chunk-size 10000 --samples-chunk-size 1000 \
    --seed 7 --no-progress
  popsarg=(-p "$work/pops.tsv")
fi

candidates=(
  ""                                      # as simulated: bio2zarr's blosc zstd 7, bit shuffle
  "--preset gpu"                          # blosc lz4 5, bit shuffle
  "--codec blosc-lz4 --clevel 9 --shuffle bit"
  "--codec blosc-zstd --clevel 1 --shuffle bit"
  "--codec blosc-zstd --clevel 3 --shuffle bit"
  "--codec blosc-lz4 --shuffle none"
  "--codec zstd --clevel 3"
  "--preset gpu --samples-chunk-size 500"
)
echo "| encoding | stored MiB | ratio | stats GPU decode s | calls/s | 16-core CPU s | GPU vs CPU | GPU decode stage s |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for args in "${candidates[@]}"; do
  s=$store
  if [ -n "$args" ]; then
    s=$work/re.vcz
    rm -rf "$s"
    # shellcheck disable=SC2086  # args is a list of arguments
    "$vczstats" recompress "$store" "$s" $args --arrays call_genotype >/dev/null 2>&1
  fi
  read -r stored decoded < <("$vczstats" info --format json "$s" | python3 -c "
import json, sys
a = [x for x in json.load(sys.stdin)['arrays'] if x['name'] == 'call_genotype'][0]
print(a['stored_bytes'], a['decoded_bytes'])")
  table=$(bash "$repo/bench/gpu_decode_e2e.sh" -k "$s" "${popsarg[@]}" -n "$runs" 2>&1 || true)
  echo "$table" >&2
  row() { echo "$table" | grep -E "^\| stats \| $1 \|" | head -1 || true; }
  gpu=$(row gpu-decode-on | cut -d'|' -f4 | tr -d ' ')
  rate=$(row gpu-decode-on | cut -d'|' -f5 | tr -d ' ')
  cpu=$(row cpu | cut -d'|' -f4 | tr -d ' ')
  dec=$({ row gpu-decode-on | grep -oE 'decode [0-9.]+' || true; } | head -1 | cut -d' ' -f2)
  printf '| %s | %.1f | %.1f | %s | %s | %s | %s | %s |\n' "${args:-bio2zarr default (blosc zstd 7, bit)}" \
    "$(python3 -c "print($stored / 1048576)")" "$(python3 -c "print($decoded / max($stored, 1))")" \
    "${gpu:-?}" "${rate:-?}" "${cpu:-?}" \
    "$(python3 -c "print(f'{${cpu:-0} / ${gpu:-1}:.2f}x')" 2>/dev/null || echo ?)" "${dec:-?}"
done
