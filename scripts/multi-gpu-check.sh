#!/usr/bin/env bash
# Issue 15: the MPI driver over the GPUs of one host (nvidia-h200-x2 or larger), strong scaling.
# Run ON that machine, from the repository root, with the tree carrying .debs/ and .gpu/ (made
# here by scripts/fetch-gpu-deps.sh, as for scripts/gpu-check.sh). The image's Open MPI (or
# HPC-X) is used; NCCL is not needed yet (no statistic reduces device tiles).
#
# Phases (each fits one 10-minute device call; run them in this order on the same warm machine,
# or all at once with --phase all):
#   build  scripts/gpu-check.sh --phase build: unpack .debs into a prefix, configure build-gpu/
#          (CUDA sm_90, VCZSTATS_MPI=ON with the image's MPI) and build;
#   test   ctest -R 'TwoRanksSharingOneGpu|DistShares' with CUDA_VISIBLE_DEVICES=0: two
#          ranks sharing one GPU write what one CPU process writes, for every statistic command
#          on the test stores (and the Ag1000G store when .gpu/shared-data is there);
#   bench  on a generated store (default 10^5 samples x 10^5 variants, 1% missing, written once
#          into $TMPDIR/vczstats-bench): one process on GPU 0 with every core; one process
#          sharing the run among N GPUs (--device gpu:0,..,N-1, every core); mpirun -n 2, one
#          GPU per rank (rank r takes GPU local_rank mod GPUs), cores/2 threads each; up to the
#          number of GPUs in powers of two; two ranks per GPU; and one process on the CPU. Every
#          output is compared byte for byte with the one-GPU output (bench/mpi.sh), the CPU's
#          too; the log must show rank 1 on GPU 1. Prints the timings and the strong-scaling
#          table (wall, speedup and efficiency against one GPU).
# Logs go to $OUT when set (the device tool brings them back), else .gpu/logs-multi; the
# summary is printed at the end. Exit status 0 when every step passed and outputs are identical.
#
# Options: --phase build|test|bench|all  (default all)
#          --simulate S,V   bench store size (default 100000,100000)
#          -s STORE         bench this store instead (no populations)
#          -n RUNS          timed runs per configuration (default 3)
#          -C "COMMAND"     statistic and options after STORE (default: bench/mpi.sh's scan,
#                           stats --window-size 100000 --stats pi,theta_w,tajima_d,dxy,fst_hudson)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD

phase=all
size=100000,100000
runs=3
commands=()
store_given=""
weak_scaling=0
two_per_gpu=1
while [ $# -gt 0 ]; do
  case "$1" in
    --phase) phase=$2; shift ;;
    --simulate) size=$2; shift ;;
    -s) store_given=$2; shift ;;
    -n) runs=$2; shift ;;
    -C) commands+=("$2"); shift ;;
    --weak) weak_scaling=1 ;;
    --one-per-gpu) two_per_gpu=0 ;;
    *) echo "usage: $0 [--phase build|test|bench|all] [--simulate S,V | -s STORE] [-n RUNS] [-C COMMAND]... [--weak] [--one-per-gpu]" >&2; exit 2 ;;
  esac
  shift
done
case "$phase" in build | test | bench | all) ;; *) echo "$0: unknown phase $phase" >&2; exit 2 ;; esac

logs=${OUT:-$root/.gpu/logs-multi}
mkdir -p "$logs"
summary=$logs/multi-summary.txt
: >"$summary"
say() { echo "multi-gpu-check: $*" | tee -a "$summary"; }
status=0
build=$root/build-gpu

# build: gpu-check.sh's build (its summary.txt and build.log land in $logs too).
if [ "$phase" = build ] || [ "$phase" = all ]; then
  OUT=$logs bash scripts/gpu-check.sh --phase build || status=$?
  say "build: exit $status (logs: build.log, summary.txt)"
fi
[ "$phase" = build ] && { cat "$summary"; exit $status; }

# The environment of gpu-check.sh: the prefix's libraries, the image's MPI.
prefix=${TMPDIR:-/tmp}/vczstats-gpu-deps
libpath=$prefix/usr/lib/x86_64-linux-gnu:$prefix/lib/x86_64-linux-gnu
if [ -r /opt/hpcx/hpcx-init.sh ] && ! command -v mpirun >/dev/null; then
  # shellcheck disable=SC1091
  source /opt/hpcx/hpcx-init.sh && hpcx_load
fi
mpi_home=""
for d in "${MPI_HOME:-}" "$(dirname "$(dirname "$(command -v mpirun 2>/dev/null || echo /none/bin/mpirun)")")" \
  /opt/hpcx/ompi /usr/local/mpi /opt/openmpi /usr/lib64/openmpi; do
  [ -n "$d" ] && [ -x "$d/bin/mpirun" ] && { mpi_home=$d; break; }
done
if [ -z "$mpi_home" ] || [ ! -x "$build/vczstats" ] ||
  ! grep -q '^VCZSTATS_MPI:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  say "no MPI build in build-gpu/ (MPI found: ${mpi_home:-none}); run --phase build first, see build.log"
  exit 1
fi
export PATH=$mpi_home/bin:$PATH OPAL_PREFIX=${OPAL_PREFIX:-$mpi_home}
# Containers forbid the cross-memory attach Open MPI's shared-memory transport tries first.
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl_sm_single_copy_mechanism=none
export LD_LIBRARY_PATH=$libpath:$mpi_home/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VCZSTATS_TEST_STORES=$root/.gpu/stores
[ -d "$root/.gpu/shared-data" ] && export VCZSTATS_SHARED_DATA=$root/.gpu/shared-data

nvidia-smi >"$logs/nvidia-smi.txt" 2>&1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
cores=$(nproc)
say "$gpus GPUs, $cores cores, $(mpirun --version 2>&1 | head -1) in $mpi_home"

# test: two ranks on one GPU (CUDA_VISIBLE_DEVICES=0 hides the others), and the share cuts.
if [ "$phase" = test ] || [ "$phase" = all ]; then
  t0=$SECONDS
  CUDA_VISIBLE_DEVICES=0 ctest --test-dir "$build" -R 'TwoRanksSharingOneGpu|DistShares' \
    --output-on-failure >"$logs/multi-ctest.log" 2>&1 || status=1
  say "test: $(grep -E 'tests passed|tests failed' "$logs/multi-ctest.log" || echo 'see multi-ctest.log') ($((SECONDS - t0)) s)"
fi

# bench_one K COMMAND...: bench/mpi.sh for one statistic command (or its default when none),
# its logs under gpu-K/ and cpu-K/, its tables in scaling-K.md.
bench_one() {
  local k=$1
  shift
  local cmd=("$@") g=$logs/gpu-$k c=$logs/cpu-$k t0=$SECONDS
  VCZSTATS=$build/vczstats BENCH_DATA=$data \
    bash bench/mpi.sh "${input[@]}" -d gpu -n "$runs" -c "$configs" -o "$g" "${cmd[@]}" \
    >"$logs/scaling-gpu-$k.md" 2>"$logs/scaling-gpu-$k.err" || status=1
  VCZSTATS=$build/vczstats BENCH_DATA=$data \
    bash bench/mpi.sh "${input[@]}" -d cpu -n "$runs" -c "1x$cores" -o "$c" "${cmd[@]}" \
    >"$logs/scaling-cpu-$k.md" 2>"$logs/scaling-cpu-$k.err" || status=1
  say "bench $k (${cmd[*]:-default}): $((SECONDS - t0)) s (configurations $configs on the GPUs, 1x$cores on the CPU)"
  if grep -q DIFFERS "$logs/scaling-gpu-$k.md" || [ ! -s "$g/1x$cores.tsv" ]; then
    say "  GPU outputs DIFFER between configurations (or none was written; see scaling-gpu-$k.err)"
    status=1
  else
    say "  GPU outputs identical for every configuration"
  fi
  if [ -s "$c/1x$cores.tsv" ] && cmp -s "$g/1x$cores.tsv" "$c/1x$cores.tsv"; then
    say "  one GPU and the CPU: outputs identical"
  else
    say "  one GPU and the CPU: outputs DIFFER (or missing)"
    status=1
  fi
  if [ "$gpus" -ge 2 ]; then
    # One process sharing the run among GPUs 0 and 1 (gpu:0,1): its shares on two GPUs.
    local shared=$g/g2x$cores.log
    if grep -q 'rank 1 (.*gpu 1 (' "$shared" && grep -q 'rank 0 (.*gpu 0 (' "$shared"; then
      say "  1 process, --device gpu:0,1: share 0 on GPU 0, share 1 on GPU 1"
    else
      say "  1 process, --device gpu:0,1: shares not on two GPUs (see $(basename "$g")/$(basename "$shared"))"
      status=1
    fi
    local two=$g/2x$((cores / 2)).log pci0 pci1
    # Each rank sees only its own GPU (bind_process_to_gpu), so the PCI addresses tell them apart.
    pci0=$(grep -o 'rank 0 (.*gpu 0 ([^)]* at PCI [0-9a-f:]*' "$two" | grep -o '[0-9a-f:]*$')
    pci1=$(grep -o 'rank 1 (.*gpu 0 ([^)]* at PCI [0-9a-f:]*' "$two" | grep -o '[0-9a-f:]*$')
    if [ -n "$pci0" ] && [ -n "$pci1" ] && [ "$pci0" != "$pci1" ]; then
      say "  mpirun -n 2: rank 0 on the GPU at PCI $pci0, rank 1 on the GPU at PCI $pci1"
    else
      say "  mpirun -n 2: ranks not on two different GPUs (see $(basename "$g")/$(basename "$two"))"
      status=1
    fi
  fi
  # Weak scaling: one GPU on the first 1/N of the contig (about 1/N of the variants) against N
  # GPUs on the whole store; efficiency = T(1 GPU, 1/N) / T(N GPUs, all).
  local weak=""
  if [ "$weak_scaling" = 1 ] && [ ${#cmd[@]} -gt 0 ]; then
    local store=${store_given:-$data/simulated_${size/,/x}.vcz} length n part
    length=$("$build/vczstats" info "$store" | awk -F'\t' '$1=="contigs"{print $2}' | grep -o '[0-9]* bp' | grep -o '[0-9]*')
    for ((n = 2; n <= gpus; n *= 2)); do
      part=$((length / n))
      VCZSTATS=$build/vczstats BENCH_DATA=$data \
        bash bench/mpi.sh "${input[@]}" -d gpu -n "$runs" -c "1x$cores" -o "$logs/weak-$k-$n" \
        -C "${cmd[1]} -r 1:1-$part" >"$logs/weak-$k-$n.md" 2>"$logs/weak-$k-$n.err" || status=1
      weak+=" $n:$(awk -F'|' '/^\| 1 process/ { print $3 + 0 }' "$logs/weak-$k-$n.md")"
    done
  fi
  {
    echo "| run | GPUs | threads | wall s (median) | speedup vs 1 GPU | efficiency per GPU |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
    awk -F'|' -v gpus="$gpus" '
      /^\| (1 process|mpirun -n)/ {
        label = $2; wall = $3 + 0
        split(label, a, " ")
        if (label ~ /GPUs/) {  # 1 process x K GPUs x T threads
          run = "1 process, " a[4] " GPUs"; used = a[4] + 0; threads = a[7] + 0
        } else if (label ~ /1 process/) {
          run = "1 process"; used = 1; threads = a[4] + 0
        } else {  # mpirun -n K x T threads
          run = "mpirun -n " a[3]; used = a[3] + 0 < gpus ? a[3] + 0 : gpus; threads = a[5] + 0
          run = run " (" threads " threads each)"
        }
        if (used < 1) used = 1
        if (base == 0) base = wall
        printf "| %s | %d | %d | %.3f | %.2fx | %.0f%% |\n", run, used, threads, wall, base / wall, 100 * base / wall / used
      }' "$logs/scaling-gpu-$k.md"
    if [ -n "$weak" ]; then
      echo
      echo "Weak scaling (one GPU on 1/N of the contig against N GPUs on all of it):"
      echo
      echo "| GPUs | 1 GPU on 1/N s | N GPUs on all s | efficiency |"
      echo "| ---: | ---: | ---: | ---: |"
      for w in $weak; do
        n=${w%%:*}
        awk -F'|' -v n="$n" -v one="${w#*:}" '
          /^\| mpirun -n/ { split($2, a, " "); if (a[3] + 0 == n) printf "| %d (mpirun) | %.3f | %.3f | %.0f%% |\n", n, one, $3 + 0, 100 * one / ($3 + 0) }
          /^\| 1 process x [0-9]+ GPUs/ { split($2, a, " "); if (a[4] + 0 == n) printf "| %d (1 process) | %.3f | %.3f | %.0f%% |\n", n, one, $3 + 0, 100 * one / ($3 + 0) }' \
          "$logs/scaling-gpu-$k.md"
      done
    fi
  } >"$logs/scaling-$k.md"
  cat "$logs/scaling-gpu-$k.md" "$logs/scaling-$k.md" "$logs/scaling-cpu-$k.md"
  rm -f "$g"/*.tsv "$c"/*.tsv "$logs"/weak-"$k"-*/*.tsv  # compared; the -v logs stay
}

if [ "$phase" = bench ] || [ "$phase" = all ]; then
  [ "$gpus" -ge 2 ] || say "fewer than 2 GPUs: no one-GPU-per-rank run"
  # 1 GPU (plain process); N = 2, 4, ... GPUs shared by one process (gpu:0,..,N-1) and one MPI
  # rank each; then two ranks per GPU.
  configs="1x$cores"
  for ((n = 2; n <= gpus; n *= 2)); do configs+=",g${n}x$cores,${n}x$((cores / n))"; done
  [ "$gpus" -ge 2 ] && [ $((gpus & (gpus - 1))) -ne 0 ] && configs+=",g${gpus}x$cores,${gpus}x$((cores / gpus))"
  per=$((cores / (2 * gpus) > 0 ? cores / (2 * gpus) : 1))
  [ "$two_per_gpu" = 1 ] && configs+=",$((2 * gpus))x$per"
  data=${TMPDIR:-/tmp}/vczstats-bench
  input=(--simulate "$size")
  [ -n "$store_given" ] && input=(-s "$store_given")
  if [ ${#commands[@]} -eq 0 ]; then
    bench_one 1
  else
    k=0
    for c in "${commands[@]}"; do
      k=$((k + 1))
      bench_one "$k" -C "$c"
    done
  fi
fi
cat "$summary"
exit $status
