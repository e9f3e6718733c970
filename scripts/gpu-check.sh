#!/usr/bin/env bash
# Run ON the GPU machine, from the repository root, after scripts/fetch-gpu-deps.sh ran on the
# development machine (the tree must carry .debs/ and .gpu/stores/):
#   1. unpacks every .debs/*.deb into a private prefix under $TMPDIR (never into /);
#   2. configures build-gpu/ against it (CUDA on, sm_90) and builds;
#   3. runs the CUDA tests (ctest -R Cuda), then compute-sanitizer memcheck on the CUDA GPU tests;
#   4. runs the kernel benchmarks (bench/gpu_afdist_bench: afdist and allele-counts kernels
#      against the D2D copy; bench/gpu_zstd_bench: the zstd decoder on genotype chunks against
#      the D2D copy and host libzstd; bench/gpu_pinned_bench: pinned host memory on huge pages
#      against cudaHostAlloc) and records registers and SASS;
#   5. end to end on a generated 10^4 x 10^5 store: afdist through the CLI and the allele-counts
#      pass through the benchmark's --counts-e2e mode, each on the CPU (all cores), the GPU
#      pipeline and the seed-style baseline (--gpu-seed-baseline: one thread per
#      variant, pageable copies, no overlap);
#      Then GPUDirect Storage against the pipeline's pread + pinned copy (bench/gpu_gds_bench).
#   6. device decode end to end (bench/gpu_decode_e2e.sh): stats and afdist with --gpu-decode
#      on / off and the CPU on simulated stores.
#   (--phase suite, alone) build-gpu built (configured first when absent), then the whole GPU test
#      suite in one go: the Cuda* ctest tests, the MPI ranks sharing a GPU, BindProcess*,
#      CliHelp*, CliOutput*, spread over the host's GPUs (a ctest resource spec written from
#      nvidia-smi -L; tests/gpu_tests.cmake gives each GPU test one GPU slot) with -j = cores,
#      and beside them the Python GPU tests (python/tests/test_gpu.py, test_dlpack.py) with the
#      image's Python; then every test's wall time, longest first (suite-times.txt).
#   7. (--phase mpi, and all) the MPI driver with the image's own MPI (Open MPI or HPC-X, found
#      on PATH, $MPI_HOME, /opt/hpcx or /usr/local/mpi): the MPI tests (every statistic command
#      byte-identical for 1-4 CPU ranks; 2 ranks sharing the GPU give the CPU's output), then
#      bench/mpi.sh on a generated 10^5 x 10^5 store: 1 process x 16 threads against 4 ranks x 4
#      threads (and 2 x 8, mpirun -n 1) on the CPU, and 1 process against 2 ranks sharing the GPU.
# The VCZ stores of ../shared/data travel as .gpu/shared-data (scripts/fetch-gpu-deps.sh copies
# them); the tests find them through VCZSTATS_SHARED_DATA.
# Logs go to $OUT when set (the device tool brings them back), else .gpu/logs. The exit status is
# that of the first failed step; every step runs regardless.
#
# Options: --configure-only  unpack and configure, then stop (a dry run that works without a GPU)
#          --phase build|test|gputest|bench|popgen|mpi|suite|all  build only / tests and
#                  benchmarks except the popgen scan and MPI (reusing build-gpu) / of those, the
#                  GPU tests and memchecks only / the benchmarks only / the popgen scan against
#                  vcftools only / the MPI tests and benchmarks only (reusing build-gpu) / build
#                  and the whole GPU test suite with the Python GPU tests, spread over the GPUs,
#                  in one device call (-j and the suite's time limit: GPU_SUITE_JOBS, default the
#                  cores, GPU_SUITE_LIMIT_S, default 420) / everything (default). gputest and
#                  bench split test so that each fits one device call.
# shellcheck disable=SC2317  # unpack and configure run through step()
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD

phase=all
configure_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --configure-only) configure_only=1 ;;
    --phase) phase=$2; shift ;;
    *) echo "usage: $0 [--configure-only] [--phase build|test|gputest|bench|popgen|mpi|suite|all]" >&2; exit 2 ;;
  esac
  shift
done

logs=${OUT:-$root/.gpu/logs}
mkdir -p "$logs"
prefix=${TMPDIR:-/tmp}/vczstats-gpu-deps
build=$root/build-gpu
status=0
summary=$logs/summary.txt
: >"$summary"
note() { echo "gpu-check: $*" >>"$summary"; }  # printed at the end, after the bench table
step() {  # step NAME LOG COMMAND...: run, log, record the status
  local name=$1 log=$2
  shift 2
  local t0=$SECONDS
  "$@" >>"$log" 2>&1
  local rc=$?
  note "$name: exit $rc ($((SECONDS - t0)) s, log $(basename "$log"))"
  [ $rc -ne 0 ] && [ $status -eq 0 ] && status=$rc
  return $rc
}

# ---- 1. unpack the Debian packages into the prefix ------------------------------------------------
unpack() {
  rm -rf "$prefix"
  mkdir -p "$prefix"
  local n=0
  for deb in "$root"/.debs/*.deb; do
    [ -e "$deb" ] || { echo "no .debs/*.deb: run scripts/fetch-gpu-deps.sh first"; return 1; }
    if command -v dpkg >/dev/null; then
      dpkg -x "$deb" "$prefix" || return 1
    else  # no dpkg: a .deb is an ar archive holding data.tar.*
      local t
      t=$(mktemp -d)
      (cd "$t" && ar x "$deb" && tar -xf data.tar.* -C "$prefix") || return 1
      rm -rf "$t"
    fi
    n=$((n + 1))
  done
  # Debian's -dev symlinks may be absolute (libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13):
  # point them into the prefix. .pc files name prefix=/usr: rewrite them too (CMake does not
  # read them, other tools might). The CMake packages (GTest, fmt, CLI11, nlohmann_json) compute
  # their prefix from their own location, so they need no fix.
  find "$prefix" -type l -lname '/*' | while read -r link; do
    ln -sfn "$prefix$(readlink "$link")" "$link"
  done
  find "$prefix" -name '*.pc' -exec sed -i "s|^prefix=/usr|prefix=$prefix/usr|" {} +
  echo "unpacked $n packages into $prefix"
}

libpath=$prefix/usr/lib/x86_64-linux-gnu:$prefix/usr/lib/x86_64-linux-gnu/openblas-pthread:$prefix/lib/x86_64-linux-gnu

# MPI is the image's own (no Debian packages there): Open MPI or HPC-X's, on PATH, in $MPI_HOME,
# or in the usual places. Found, the build has the MPI driver (VCZSTATS_MPI=ON).
find_mpi() {
  local d
  for d in "${MPI_HOME:-}" "$(dirname "$(dirname "$(command -v mpirun 2>/dev/null || echo /none/bin/mpirun)")")" \
    /opt/hpcx/ompi /usr/local/mpi /opt/openmpi /usr/lib64/openmpi; do
    [ -n "$d" ] && [ -x "$d/bin/mpirun" ] && [ -x "$d/bin/mpicc" ] && { echo "$d"; return 0; }
  done
  return 1
}
if [ -r /opt/hpcx/hpcx-init.sh ] && ! command -v mpirun >/dev/null; then
  # shellcheck disable=SC1091
  source /opt/hpcx/hpcx-init.sh && hpcx_load  # HPC-X: its Open MPI, UCX and their environment
fi
mpi_home=$(find_mpi || true)
if [ -n "$mpi_home" ]; then
  export PATH=$mpi_home/bin:$PATH
  export OPAL_PREFIX=${OPAL_PREFIX:-$mpi_home}  # a relocated Open MPI finds its own files
  libpath=$libpath:$mpi_home/lib
  # Containers forbid the cross-memory attach Open MPI's shared-memory transport tries first.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl_sm_single_copy_mechanism=none
fi
# The image's own Python has numpy, pybind11 and CuPy (the Python GPU tests); its /usr/bin/python3
# has none of them.
python_cmake=()
[ -x /opt/torch/.venv/bin/python3 ] && python_cmake=(-DPython_EXECUTABLE=/opt/torch/.venv/bin/python3)
mpi_cmake=(-DVCZSTATS_MPI=OFF)
[ -n "$mpi_home" ] && mpi_cmake=(-DVCZSTATS_MPI=ON -DMPI_HOME="$mpi_home")

configure() {
  local cmake_dir=$prefix/usr/lib/x86_64-linux-gnu/cmake
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S "$root" -B "$build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Release \
    -DVCZSTATS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DVCZSTATS_CONVERT=OFF -DVCZSTATS_REMOTE=OFF "${mpi_cmake[@]}" \
    -DCMAKE_PREFIX_PATH="$prefix/usr" \
    -DGTest_DIR="$cmake_dir/GTest" -Dfmt_DIR="$cmake_dir/fmt" \
    -DCLI11_DIR="$prefix/usr/share/cmake/CLI11" \
    -Dnlohmann_json_DIR="$prefix/usr/share/cmake/nlohmann_json" \
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
    -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST "${python_cmake[@]}" || return 1
  # Show where each dependency was found: all of them must be under the prefix.
  grep -E '^(blosc|zstd|lz4|isal|openblas)_(INCLUDE_DIR|LIBRARY)|^(ZLIB|BZIP2)_(INCLUDE_DIR|LIBRARY)|^(GTest|fmt|CLI11|nlohmann_json)_DIR' \
    "$build/CMakeCache.txt"
  if grep -E '^(blosc|zstd|lz4|isal|openblas)_(INCLUDE_DIR|LIBRARY)|^(GTest|fmt|CLI11|nlohmann_json)_DIR' \
    "$build/CMakeCache.txt" | grep -v "$prefix"; then
    echo "a dependency was found outside $prefix"
    return 1
  fi
}

if [ "$phase" = build ] || [ "$phase" = all ] || [ "$phase" = popgen ]; then
  step unpack "$logs/build.log" unpack
  step configure "$logs/build.log" configure
  if [ $configure_only -eq 1 ]; then
    cat "$summary"
    exit $status
  fi
  step build "$logs/build.log" cmake --build "$build" -j "$(nproc)"
  # Registers and spills of every kernel (the same flags as the build, plus -Xptxas -v).
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  cuobjdump=$(command -v cuobjdump || echo "$(dirname "$nvcc")/cuobjdump")
  for source in afdist_kernels counts_kernels sample_matrix_kernels decode/zstd_decoder; do
    kernels=${source##*/}
    step "ptxas $kernels" "$logs/kernels.txt" "$nvcc" -std=c++20 -O3 -arch=sm_90 \
      --expt-relaxed-constexpr -Xptxas -v -I"$root/include" -I"$root/src" \
      -c "$root/src/backend/cuda/$source.cu" -o "$build/${kernels}_ptxas.o"
    if [ -x "$cuobjdump" ]; then
      step "resources $kernels" "$logs/kernels.txt" "$cuobjdump" --dump-resource-usage \
        "$build/${kernels}_ptxas.o"
      step "sass $kernels" "$logs/sass.txt" "$cuobjdump" --dump-sass "$build/${kernels}_ptxas.o"
    fi
  done
fi

if [ "$phase" = suite ] && [ $configure_only -eq 0 ]; then  # build-gpu reused, made if absent
  [ -d "$prefix/usr/lib" ] || step unpack "$logs/build.log" unpack
  [ -f "$build/CMakeCache.txt" ] || step configure "$logs/build.log" configure
  step build "$logs/build.log" cmake --build "$build" -j "$(nproc)"
fi

if [ "$phase" != build ] && [ $configure_only -eq 0 ]; then
  # --phase test on a machine that lost $TMPDIR: the prefix is only needed for its libraries.
  [ -d "$prefix/usr/lib" ] || step unpack "$logs/build.log" unpack
  export VCZSTATS_TEST_STORES=$root/.gpu/stores
  [ -d "$root/.gpu/shared-data" ] && export VCZSTATS_SHARED_DATA=$root/.gpu/shared-data
fi
if { [ "$phase" = all ] || [ "$phase" = test ] || [ "$phase" = gputest ]; } && [ $configure_only -eq 0 ]; then
  nvidia-smi >"$logs/ctest.log" 2>&1
  # Only our binaries get the prefix's libraries (cmake, nvcc and gcc keep the system ones).
  step ctest "$logs/ctest.log" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    ctest --test-dir "$build" -R Cuda --output-on-failure
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  step memcheck "$logs/memcheck.log" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    VCZSTATS_GPU_TEST_QUICK=1 timeout 300 "$sanitizer" --tool memcheck --leak-check full --error-exitcode 3 \
    "$build/tests/vczstats_tests" --gtest_filter='CudaAfdistGpu.*:CudaCountsGpu.*:Widths/CudaCountsGpuWidth.*'
  # The zstd kernel on corrupt input: every access inside the task's buffers.
  step "memcheck zstd" "$logs/memcheck.log" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 600 "$sanitizer" --tool memcheck --leak-check full --error-exitcode 3 \
    "$build/tests/vczstats_tests" --gtest_filter='CudaZstdGpu.CorruptBatchFailsLikeTheHost'
  # Device decode in the pipeline on corrupt chunks: the CLI runs the test starts (all processes).
  step "memcheck gpu decode" "$logs/memcheck.log" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 1200 "$sanitizer" --tool memcheck --target-processes all --error-exitcode 3 \
    "$build/tests/vczstats_tests" --gtest_filter='CudaGpuDecodeCli.CorruptChunkIsACleanErrorNamingTheChunk'
fi
if [ "$phase" = suite ] && [ $configure_only -eq 0 ]; then
  # The GPUs: those of CUDA_VISIBLE_DEVICES when set, else nvidia-smi's. Resource ids are their
  # positions; the test binary maps a slot to the entry (tests/test_util.cpp).
  if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    gpus=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
  else
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  fi
  [ "$gpus" -ge 1 ] || gpus=1
  jobs=${GPU_SUITE_JOBS:-$(nproc)}
  slots=$(((jobs + gpus - 1) / gpus))
  spec=$logs/gpu-resources.json
  {
    printf '{"version": {"major": 1, "minor": 0}, "local": [{"gpus": ['
    for ((g = 0; g < gpus; g++)); do
      printf '%s{"id": "%d", "slots": %d}' "$([ $g -gt 0 ] && echo ', ')" "$g" "$slots"
    done
    printf ']}]}\n'
  }>"$spec"
  nvidia-smi -L >"$logs/suite.log" 2>&1
  echo "suite: $gpus GPU(s), ctest -j $jobs, $slots GPU tests per GPU at once" >>"$logs/suite.log"
  run_env=(env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  # The Python GPU tests beside the ctest tests (they take a few seconds).
  py=/opt/torch/.venv/bin/python3
  [ -x "$py" ] || py=python3
  "${run_env[@]}" PYTHONPATH="$build/python" VCZSTATS_BINARY="$build/vczstats" \
    VCZSTATS_SOURCE_DIR="$root" "$py" -m pytest -q -p no:cacheprovider -rs \
    "$root/python/tests/test_gpu.py" "$root/python/tests/test_dlpack.py" >"$logs/suite-python.log" 2>&1 &
  py_pid=$!
  py_t0=$SECONDS
  # --stop-time: ctest starts no test after the limit and stops the running ones at it, so the
  # times and the summary still come back within the device call.
  step "suite ctest" "$logs/suite.log" "${run_env[@]}" \
    ctest --test-dir "$build" -R 'Cuda|TwoRanksSharingOneGpu|ThreadShares|ThreadRanks|BindProcess|CliHelp|CliOutput' \
    -j "$jobs" --resource-spec-file "$spec" --output-on-failure \
    --stop-time "$(date -d "+${GPU_SUITE_LIMIT_S:-420} seconds" +%H:%M:%S)"
  wait "$py_pid"
  py_rc=$?
  note "suite python (test_gpu.py, test_dlpack.py): exit $py_rc (ended $((SECONDS - py_t0)) s after it started, log suite-python.log)"
  [ $py_rc -ne 0 ] && [ $status -eq 0 ] && status=$py_rc
  tail -3 "$logs/suite-python.log"
  # Every test's wall time, longest first ("Test #N: NAME .... Passed  12.34 sec").
  grep -E 'Test +#[0-9]+: ' "$logs/suite.log" |
    sed -E 's/^.*Test +#[0-9]+: ([^ ]+).* ([0-9.]+) sec$/\2 \1/' | sort -rn >"$logs/suite-times.txt"
  echo "suite: the longest tests (s), of $(wc -l <"$logs/suite-times.txt"):"
  head -25 "$logs/suite-times.txt"
  grep -E 'tests passed|tests failed|Total Test time' "$logs/suite.log"
fi
if { [ "$phase" = all ] || [ "$phase" = test ] || [ "$phase" = bench ]; } && [ $configure_only -eq 0 ]; then
  step bench "$logs/bench.md" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$build/bench/gpu_afdist_bench"
  cat "$logs/bench.md"
  # Pinning host memory: PinnedBuffer (huge pages + cudaHostRegister) against cudaHostAlloc.
  step "pinned bench" "$logs/pinned-bench.md" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$build/bench/gpu_pinned_bench"
  cat "$logs/pinned-bench.md"
  # The zstd decoding kernel on genotype chunks, against the D2D copy and host libzstd.
  step "zstd bench" "$logs/zstd-bench.md" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$build/bench/gpu_zstd_bench"
  cat "$logs/zstd-bench.md"
  # The whole pipeline through the CLI, with its -v timing breakdown, GPU and CPU.
  store=$root/.gpu/stores/wide_int8.vcz
  if [ -e "$store" ]; then
    for dev in gpu cpu; do
      step "cli --device $dev" "$logs/ctest.log" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$build/vczstats" afdist "$store" --device "$dev" -v
    done
  fi
  # End to end from a generated store on local disk (page cache warm after the first run):
  # 10^4 samples x 10^5 variants (2 GB of int8 calls), GPU against every CPU core, same output.
  # The store comes from `vczstats simulate` (it needs no htslib, so it is built here), chunked
  # 10^4 variants x 10^3 samples; bench/make_synthetic_store.py is the fallback.
  big=${TMPDIR:-/tmp}/vczstats-synthetic-10k-100k.vcz
  e2e=$logs/e2e.md
  if [ ! -e "$big" ] && [ -x "$build/vczstats" ]; then
    step simulate "$logs/e2e.log" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$build/vczstats" simulate "$big" --samples 10000 --variants 100000 --missing 0.002 \
      --variants-chunk-size 10000 --samples-chunk-size 1000 --seed 1 --no-progress -v
  fi
  if [ ! -e "$big" ]; then
    step synthesize "$logs/e2e.log" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      VCZ_BLOSC_LIB="$prefix/usr/lib/x86_64-linux-gnu/libblosc.so.1" \
      python3 "$root/bench/make_synthetic_store.py" --samples 10000 --variants 100000 "$big"
  fi
  if [ -e "$big" ]; then
    run_cli() { env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$build/vczstats" "$@"; }
    run_cli afdist "$big" --device gpu >/dev/null 2>&1  # warm the page cache
    {
      echo "| device | run | wall s | breakdown (-v) |"
      echo "| --- | --- | ---: | --- |"
      # gpu: the pipeline as it runs by default; gpu-serial: one stream, one slab ahead and one
      # decode thread, so decode, copy and compute do not overlap; gpu-seed-baseline: what the
      # seeds did (one thread per variant, pageable copies, nothing overlapped); cpu: all cores.
      for dev in gpu gpu-serial gpu-seed-baseline cpu; do
        case $dev in
          gpu) args=(--device gpu) ;;
          gpu-serial) args=(--device gpu --gpu-streams 1 --prefetch 1 -t 1) ;;
          gpu-seed-baseline) args=(--device gpu --gpu-seed-baseline) ;;
          cpu) args=(--device cpu) ;;
        esac
        for rep in 1 2 3; do
          t0=$(date +%s.%N)
          run_cli afdist "$big" "${args[@]}" -v >"$logs/e2e-$dev.tsv" 2>"$logs/e2e-$dev.err"
          t1=$(date +%s.%N)
          echo "| $dev | $rep | $(python3 -c "print(round($t1 - $t0, 3))") | $(grep -E 'device|total' "$logs/e2e-$dev.err" | tr '\n' ' ') |"
        done
      done
      if cmp -s "$logs/e2e-gpu.tsv" "$logs/e2e-cpu.tsv"; then echo "GPU and CPU outputs identical"; else echo "GPU and CPU outputs DIFFER"; fi
      cat "$logs"/e2e-gpu.err
    } >"$e2e" 2>&1
    cmp -s "$logs/e2e-gpu.tsv" "$logs/e2e-cpu.tsv" || { [ $status -eq 0 ] && status=1; }
    cmp -s "$logs/e2e-gpu-seed-baseline.tsv" "$logs/e2e-cpu.tsv" || { [ $status -eq 0 ] && status=1; }
    # The allele-counts pass end to end (1 and 4 populations): CPU, GPU pipeline, seed baseline.
    for pops in 1 4; do
      step "counts e2e, $pops pops" "$logs/e2e-counts.md" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$build/bench/gpu_afdist_bench" --counts-e2e "$big" --pops "$pops" --reps 2
    done
    cat "$e2e" "$logs/e2e-counts.md"
    # The matrix family's int8 GEMMs alone, against the device's int8 tensor peak.
    step "int8 gemm bench" "$logs/int8-gemm.md" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$build/bench/gpu_int8_gemm_bench" --samples 10000,20000 --k 4096,16384
    cat "$logs/int8-gemm.md"
    # GPUDirect Storage (cuFileRead into device memory) against pread + pinned copy, warm and
    # cold, on the store's compressed genotype chunks (built here only: EXCLUDE_FROM_ALL).
    if cmake --build "$build" --target help 2>/dev/null | grep -q gpu_gds_bench &&
      step "build gds bench" "$logs/gds.md" cmake --build "$build" --target gpu_gds_bench; then
      step "gds bench" "$logs/gds.md" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$build/bench/gpu_gds_bench" "$big" call_genotype 8 3
      cat "$logs/gds.md"
    fi
    # Candidates of `recompress --preset gpu` (blosc zstd 3 bit shuffle): device decode rate
    # (bench/gpu_decode_bench) and compression ratio (info) of each encoding of the same store;
    # bench/gpu_preset_candidates.sh times them end to end.
    cand=${TMPDIR:-/tmp}/vczstats-preset-candidate.vcz
    for enc in "--preset gpu" "--codec blosc-lz4 --shuffle bit" "--codec blosc-zstd --clevel 1" \
      "--codec blosc-zstd --clevel 7" "--codec zstd --clevel 3"; do
      # shellcheck disable=SC2086  # enc is a list of arguments
      run_cli recompress "$big" "$cand" $enc -f >/dev/null 2>&1 &&
        { echo "### $enc"; run_cli info "$cand" | grep -E '^(call_genotype|gpu_decode)'; } >>"$logs/preset.md"
      step "decode bench $enc" "$logs/preset.md" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$build/bench/gpu_decode_bench" --store "$cand" --reps 3
    done
    rm -rf "$cand"
    cat "$logs/preset.md"
  fi
  # Device decode end to end (stats, afdist): --gpu-decode on / off / the CPU, calls/s, ratio.
  for args in "-s 10000x100000" "-s 10000x100000 -r --preset=gpu" "-s 100000x10000 -c 1000"; do
    # shellcheck disable=SC2086  # args is a list of arguments
    step "gpu decode e2e $args" "$logs/gpu-decode-e2e.md" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      VCZSTATS="$build/vczstats" bash "$root/bench/gpu_decode_e2e.sh" $args -n 3
  done
  cat "$logs/gpu-decode-e2e.md"
fi
if { [ "$phase" = all ] || [ "$phase" = popgen ]; } && [ $configure_only -eq 0 ]; then
  # Windowed population-genetics scan (pi, theta_W, Tajima's D, dxy, Hudson Fst; two
  # populations) on the GPU and on every CPU core, against vcftools from the .debs, on the
  # Ag1000G store and on a generated 10^4-sample store with its VCF.
  vcftools_bin=$prefix/usr/bin/vcftools
  if [ -x "$vcftools_bin" ]; then
    popgen=$logs/popgen.md
    : >"$popgen"
    ag=$root/.gpu/shared-data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip
    if [ -e "$ag" ]; then
      step "popgen ag1000g" "$popgen" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        VCZSTATS="$build/vczstats" VCFTOOLS="$vcftools_bin" \
        bash "$root/bench/popgen.sh" -s "$ag" -d gpu,cpu -n 3
    fi
    step "popgen synthetic" "$popgen" env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      VCZSTATS="$build/vczstats" VCFTOOLS="$vcftools_bin" \
      VCZ_BLOSC_LIB="$prefix/usr/lib/x86_64-linux-gnu/libblosc.so.1" \
      bash "$root/bench/popgen.sh" --synthetic 10000,20000 -d gpu,cpu -n 3 -w 20000
    cat "$popgen"
  fi
fi
if { [ "$phase" = all ] || [ "$phase" = mpi ]; } && [ $configure_only -eq 0 ]; then
  # The MPI driver: tests (CPU ranks, and 2 ranks sharing the GPU), then 4 ranks x 4 threads
  # against 1 process x 16 threads on a generated 10^5 x 10^5 store (written once into $TMPDIR).
  mpilog=$logs/mpi.md
  : >"$mpilog"
  if [ -z "$mpi_home" ]; then
    note "mpi: no MPI found (PATH, MPI_HOME, /opt/hpcx, /usr/local/mpi): skipped"
    [ $status -eq 0 ] && status=1
  elif ! grep -q '^VCZSTATS_MPI:BOOL=ON' "$build/CMakeCache.txt"; then
    note "mpi: build-gpu was configured without MPI (rerun --phase build): skipped"
    [ $status -eq 0 ] && status=1
  else
    run_env=(env LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    echo "MPI: $mpi_home ($(mpirun --version 2>&1 | head -1))" >>"$mpilog"
    step "mpi tests" "$logs/mpi-ctest.log" "${run_env[@]}" \
      ctest --test-dir "$build" -R 'MpiCli|DistShares|ExactSum|StagedSum' --output-on-failure
    cores=$(nproc)
    step "mpi bench cpu" "$mpilog" "${run_env[@]}" VCZSTATS="$build/vczstats" \
      BENCH_DATA="${TMPDIR:-/tmp}/vczstats-bench" bash "$root/bench/mpi.sh" \
      --simulate 100000,100000 -d cpu -n 3 -o "$logs/mpi-cpu" \
      -c "1x$cores,m1x$cores,4x$((cores / 4)),2x$((cores / 2))"
    step "mpi bench gpu" "$mpilog" "${run_env[@]}" VCZSTATS="$build/vczstats" \
      BENCH_DATA="${TMPDIR:-/tmp}/vczstats-bench" bash "$root/bench/mpi.sh" \
      --simulate 100000,100000 -d gpu -n 3 -o "$logs/mpi-gpu" -c "1x$cores,2x$((cores / 2))"
    rm -f "$logs"/mpi-*/*.tsv  # outputs compared; the -v logs stay
    cat "$mpilog"
  fi
fi
cat "$summary"
exit $status
