#!/usr/bin/env bash
# Benchmark one statistic command as one process against MPI ranks (mpirun), in one run, with the
# outputs compared byte for byte.
#
# Usage: bench/mpi.sh [-s STORE [-P POPS] | --simulate SAMPLES,VARIANTS] [-c CONFIGS] [-d DEVICE]
#                     [-n RUNS] [-C "COMMAND OPTIONS"] [-o OUTDIR]
#   -s STORE     a VCZ store (default: the Ag1000G store of ../shared/data); -P its populations
#   --simulate S,V  instead, a store of S samples x V variants written by `vczstats simulate
#                --missing 0.01 --pops 2` (cached under .data/bench/, or $BENCH_DATA)
#   -c CONFIGS   comma-separated RANKSxTHREADS: 1x16 is the plain process (no mpirun) with
#                -t 16, 4x4 is `mpirun -n 4` with -t 4 per rank, m1x16 is `mpirun -n 1`,
#                g2x16 is one process sharing the run among 2 GPUs (`--device gpu:0,1`, no
#                mpirun) with -t 16 in all (default: 1xN,m1xN,2x(N/2),4x(N/4) for N cores)
#   -d DEVICE    vczstats --device (default cpu; with gpu every rank takes device
#                local_rank mod GPUs)
#   -n RUNS      timed runs per configuration, after one warm-up run; the median is reported
#                (default 3)
#   -C COMMAND   the statistic and its options after STORE (default: with populations `stats
#                --window-size 100000 --stats pi,theta_w,tajima_d,dxy,fst_hudson`, else
#                `diversity --window-size 100000`)
#   -o OUTDIR    keep the outputs and -v logs there (default: a temporary folder, removed)
#   VCZSTATS=path (default build/vczstats), MPIRUN=path (default mpirun), MPIRUN_ARGS (default
#   "--bind-to none", plus --allow-run-as-root as root and --oversubscribe)
#
# Reported per configuration: median and minimum wall seconds, genotype calls per second, time
# against the plain process, and whether the output equals the plain process's byte for byte;
# then each configuration's -v lines (per-rank cursor, compute and wait times, the merge time).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
store=$repo/../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip
pops=""
simulate=""
configs=""
device=cpu
runs=3
command=""
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    -s) store=$2; shift ;;
    -P) pops=$2; shift ;;
    --simulate) simulate=$2; shift ;;
    -c) configs=$2; shift ;;
    -d) device=$2; shift ;;
    -n) runs=$2; shift ;;
    -C) command=$2; shift ;;
    -o) keep=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/mpi.sh [-s STORE [-P POPS] | --simulate S,V] [-c CONFIGS] [-d DEVICE] [-n RUNS] [-C COMMAND] [-o OUTDIR]" >&2; exit 2 ;;
  esac
  shift
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
mpirun=${MPIRUN:-mpirun}
read -r -a mpi_args <<<"${MPIRUN_ARGS:---bind-to none}"
[ "$(id -u)" -eq 0 ] && mpi_args+=(--allow-run-as-root)
mpi_args+=(--oversubscribe)
cores=$(nproc)
[ -n "$configs" ] || configs="1x$cores,m1x$cores,2x$((cores / 2)),4x$((cores > 4 ? cores / 4 : 1))"
command -v "$mpirun" >/dev/null || { echo "mpi.sh: $mpirun not found" >&2; exit 1; }
[ -x "$vczstats" ] || { echo "mpi.sh: $vczstats not found" >&2; exit 1; }

if [ -n "$simulate" ]; then
  S=${simulate%,*}
  V=${simulate#*,}
  data=${BENCH_DATA:-$repo/.data/bench}
  mkdir -p "$data"
  store=$data/simulated_${S}x${V}.vcz
  pops=$data/simulated_${S}x${V}.pops
  if [ ! -e "$store" ] || [ ! -e "$pops" ]; then
    rm -rf "$store"
    "$vczstats" simulate "$store" --samples "$S" --variants "$V" --missing 0.01 --pops 2 \
      --pops-file "$pops" --seed 1 --no-progress -v
  fi
fi
[ -e "$store" ] || { echo "mpi.sh: $store not found" >&2; exit 1; }
if [ -z "$command" ]; then
  if [ -n "$pops" ]; then
    command="stats --window-size 100000 --stats pi,theta_w,tajima_d,dxy,fst_hudson"
  else
    command="diversity --window-size 100000"
  fi
fi
read -r -a cmd <<<"$command"
extra=(--no-progress)
# Populations for the commands that take them (not the matrix and variant-pair commands).
# (The help is read whole first: `--help | grep -q` under pipefail fails when grep stops reading.)
if [ -n "$pops" ] && [[ $("$vczstats" "${cmd[0]}" --help) == *--pops* ]]; then
  extra+=(-P "$pops")
fi

if [ -n "$keep" ]; then
  out=$keep
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
"$vczstats" info "$store" >"$out/info"
samples=$(awk -F'\t' '$1=="samples"{print $2}' "$out/info")
variants=$(awk -F'\t' '$1=="variants"{print $2}' "$out/info")
ploidy=$(awk -F'\t' '$1=="ploidy"{print $2}' "$out/info")
calls=$(awk "BEGIN { print $samples * $variants * $ploidy }")

# run CONFIG LOG OUT: one run of a configuration, its wall seconds on stdout.
run() {
  local config=$1 log=$2 result=$3 ranks threads launcher=() dev=$device
  threads=${config#*x}
  ranks=${config%x*}
  if [ "${ranks#g}" != "$ranks" ]; then  # one process, GPUs 0..K-1
    dev=gpu:$(seq -s, 0 $((${ranks#g} - 1)))
  elif [ "${ranks#m}" != "$ranks" ] || [ "$ranks" != 1 ]; then
    launcher=("$mpirun" "${mpi_args[@]}" -n "${ranks#m}")
  fi
  local t0 t1
  t0=$(date +%s.%N)
  "${launcher[@]}" "$vczstats" "${cmd[0]}" "$store" "${cmd[@]:1}" --device "$dev" "${extra[@]}" \
    -t "$threads" -v -o "$result" 2>"$log"
  t1=$(date +%s.%N)
  awk "BEGIN { printf \"%.3f\", $t1 - $t0 }"
}

IFS=, read -r -a list <<<"$configs"
echo "## ${cmd[*]} on $store ($samples samples x $variants variants, $calls calls), --device $device, $(hostname), $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "| configuration | wall s (median of $runs) | min | calls/s | time / plain | output |"
echo "| --- | ---: | ---: | ---: | ---: | --- |"
base=""
first=""
for config in "${list[@]}"; do
  run "$config" "$out/$config.warmup.log" "$out/$config.tsv" >/dev/null  # warm-up (page cache)
  times=()
  for ((i = 0; i < runs; i++)); do times+=("$(run "$config" "$out/$config.log" "$out/$config.tsv")"); done
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
  min=$(printf '%s\n' "${times[@]}" | sort -g | head -1)
  [ -n "$first" ] || first=$config
  [ -n "$base" ] || base=$median
  same="identical"
  cmp -s "$out/$first.tsv" "$out/$config.tsv" || same="DIFFERS from $first"
  label="1 process x $((${config#*x})) threads"
  [ "${config%x*}" != 1 ] && label="mpirun -n ${config%x*} x ${config#*x} threads"
  [ "${config%x*}" = m1 ] && label="mpirun -n 1 x ${config#*x} threads"
  k=${config%x*}
  [ "${k#g}" != "$k" ] && label="1 process x ${k#g} GPUs x ${config#*x} threads"
  echo "| $label | $median | $min | $(awk "BEGIN { printf \"%.3g\", $calls / $median }") | $(awk "BEGIN { printf \"%.3f\", $median / $base }")x | $same |"
done
echo
for config in "${list[@]}"; do
  echo "### $config (last run, -v)"
  echo '```'
  grep '^vczstats:' "$out/$config.log" || true
  echo '```'
done
for config in "${list[@]}"; do
  cmp -s "$out/$first.tsv" "$out/$config.tsv" || exit 1
done
