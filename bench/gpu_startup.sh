#!/usr/bin/env bash
# The GPU's fixed cost per process, on the GPU machine (after scripts/gpu-check.sh --phase build):
# gpu_startup_probe's steps with every GPU visible and with one, then `vczstats afdist` on a tiny
# store (300 samples x 2,050 variants, simulated) on the CPU and the GPU, each timed over -n runs
# (median wall, user and system seconds), with the engine's own total from -v beside it. The GPU
# runs with CUDA started on a thread at process start (the default) and, as the peer, with
# --no-gpu-prestart (CUDA started when the run first needs it); with several GPUs also shared by
# one process (--device gpu:all) and by MPI ranks.
#   bench/gpu_startup.sh [-n RUNS] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5
[ "${1:-}" = -n ] && { runs=$2; shift 2; }
build=${1:-build-gpu}
bin=$build/vczstats
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
store=$tmp/tiny.vcz
"$bin" simulate "$store" --samples 300 --variants 2050 --seed 1 --no-progress >/dev/null

echo "== gpu_startup_probe, every GPU visible"
"$build/bench/gpu_startup_probe"
if [ -z "${CUDA_VISIBLE_DEVICES:-}" ]; then
  echo "== gpu_startup_probe, CUDA_VISIBLE_DEVICES=0"
  CUDA_VISIBLE_DEVICES=0 "$build/bench/gpu_startup_probe"
fi

# median of the runs' wall, user and sys seconds (bash's time)
timed() {
  local label=$1
  shift
  local f=$tmp/times
  : >"$f"
  for _ in $(seq "$runs"); do
    { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>&1; } 2>>"$f"
  done
  sort -n "$f" | awk -v l="$label" -v n="$runs" '{ w[NR] = $1; u[NR] = $2; s[NR] = $3 }
    END { m = int((n + 1) / 2); printf "%-44s wall %.3f s  user %.3f s  sys %.3f s (median of %d)\n", l, w[m], u[m], s[m], n }'
}
echo "== afdist on $store"
timed "cpu" "$bin" afdist "$store" --device cpu
timed "gpu, every GPU visible" "$bin" afdist "$store" --device gpu
timed "gpu, CUDA_VISIBLE_DEVICES=0" env CUDA_VISIBLE_DEVICES=0 "$bin" afdist "$store" --device gpu
timed "gpu, CUDA started on first use" "$bin" afdist "$store" --device gpu --no-gpu-prestart
echo "== the engine's own breakdown (-v), gpu"
"$bin" afdist "$store" --device gpu -v 2>&1 >/dev/null | grep -E "setup|total|device|open" || true
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
# One process sharing the run among every GPU (a thread each; CUDA started on all at once).
if [ "$gpus" -ge 2 ]; then
  timed "gpu:all, one process ($gpus GPUs)" "$bin" afdist "$store" --device gpu:all
fi
# Under mpirun, one rank per GPU: every rank binds its GPU before CUDA starts.
if command -v mpirun >/dev/null && [ "$gpus" -ge 2 ] &&
  grep -q 'VCZSTATS_MPI:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  mpi=(mpirun --allow-run-as-root --oversubscribe -n "$gpus" -x LD_LIBRARY_PATH)
  timed "gpu, mpirun -n $gpus (one GPU per rank)" "${mpi[@]}" "$bin" afdist "$store" --device gpu
  timed "gpu, mpirun -n $gpus, CUDA started on first use" "${mpi[@]}" "$bin" afdist "$store" \
    --device gpu --no-gpu-prestart
  timed "cpu, mpirun -n $gpus" "${mpi[@]}" "$bin" afdist "$store" --device cpu
  echo "== ranks' devices (-v)"
  "${mpi[@]}" "$bin" afdist "$store" --device gpu -v 2>&1 >/dev/null | grep -E "^vczstats: +rank" || true
fi
