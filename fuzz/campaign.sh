#!/usr/bin/env bash
# A parallel libFuzzer campaign over vczstats' fuzz targets, with nothing but bash and coreutils
# (no clang, no Python, no grep): scripts/fuzz.sh campaign runs it on the repository's build, and
# scripts/fuzz.sh pack DIR copies it to DIR/run-campaign.sh next to the binary and corpora.
#
#   run-campaign.sh [options] SECONDS JOBS [TARGET...]
#
# JOBS libFuzzer processes run at once for about SECONDS; each target gets SECONDS * JOBS /
# ntargets seconds of one core, cut into slices of equal length dealt round-robin to the jobs
# (so two jobs rarely fuzz one target at once). New inputs go to CORPUS/TARGET; findings to
# OUT/artifacts/TARGET/, logs to OUT/logs/. At the end one line per target
# "fuzz: TARGET: N executions, M s, crashes K" and a total; the exit status is 1 if any slice
# ended with a finding (crash, leak, timeout or out-of-memory).
#
# Options (defaults: the packed layout, folders next to this script):
#   --bin DIR        holds fuzz_TARGET for each target: a binary, or a link to fuzz_all (bin)
#   --corpus DIR     DIR/TARGET receives new inputs (corpus)
#   --seeds DIR      DIR/TARGET is read too; repeatable (seeds)
#   --out DIR        artifacts and logs (out)
#   --supp FILE      LeakSanitizer suppressions (lsan.supp)
#   --nice N         run at this niceness (0)
# TARGETs default to the lines of the file "targets" next to this script. Shared libraries
# the binary needs (see NEEDED) are found through LD_LIBRARY_PATH; lib/ next to the script is
# added to it when present.
set -euo pipefail

# --- Per-target libFuzzer options (also used by scripts/fuzz.sh) ---------------------------

# Longest input: whole files for targets whose seeds are files (zip stores, chunks, VCFs), a
# short text for the rest. Smaller is faster: libFuzzer's mutations of a 64 kB input cost more.
fuzz_max_len() {
  case "$1" in
    zip | zip_ranges | gpu_* | zarr_v2_metadata | zarr_v3_metadata | convert_vcf | convert_ms | codec_*) echo 65536 ;;
    *) echo 4096 ;;
  esac
}

# Seconds before an input counts as a hang.
fuzz_timeout() {
  case "$1" in
    convert_vcf | convert_ms) echo 20 ;;
    *) echo 10 ;;
  esac
}

# Sanitizer options: htslib's own leak for convert_vcf (fuzz/lsan.supp, given as $2).
fuzz_lsan_options() {
  case "$1" in
    convert_vcf) echo "suppressions=$2:print_suppressions=0" ;;
    *) echo "" ;;
  esac
}

# Every libFuzzer option of a target but the time and the corpora.
fuzz_flags() {
  echo "-max_len=$(fuzz_max_len "$1") -timeout=$(fuzz_timeout "$1") -rss_limit_mb=2048" \
    "-malloc_limit_mb=2048 -print_final_stats=1"
}

# --- The campaign ---------------------------------------------------------------------------

campaign_usage() {
  echo "usage: run-campaign.sh [--bin F] [--corpus D] [--seeds D]... [--out D] [--supp F]" \
    "[--nice N] SECONDS JOBS [TARGET...]" >&2
  exit 2
}

gcd() {
  local a=$1 b=$2 t
  while [ "$b" -ne 0 ]; do
    t=$((a % b))
    a=$b
    b=$t
  done
  echo "$a"
}

# One slice: fuzz target $1 for $2 seconds; appends "executions seconds status" to $3.
campaign_slice() {
  local t=$1 secs=$2 stats=$3 log=$4 status=0
  local dirs=("$corpus/$t")
  local s
  for s in "${seeds[@]}"; do
    [ -d "$s/$t" ] && dirs+=("$s/$t")
  done
  mkdir -p "$corpus/$t" "$out/artifacts/$t"
  local start end
  start=$(date +%s)
  # shellcheck disable=SC2046
  VCZ_FUZZ_TARGET=$t LSAN_OPTIONS=$(fuzz_lsan_options "$t" "$supp") nice -n "$niceness" \
    "$bin/fuzz_$t" -max_total_time="$secs" $(fuzz_flags "$t") -artifact_prefix="$out/artifacts/$t/" \
    "${dirs[@]}" >"$log" 2>&1 || status=$?
  end=$(date +%s)
  local execs=0 line
  while IFS= read -r line; do
    if [[ $line =~ ^stat::number_of_executed_units:\ *([0-9]+) ]]; then
      execs=${BASH_REMATCH[1]}
    fi
  done <"$log"
  echo "$execs $((end - start)) $status" >>"$stats"
}

campaign_main() {
  local here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  bin=$here/bin
  corpus=$here/corpus
  seeds=()
  out=$here/out
  supp=$here/lsan.supp
  niceness=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --bin) bin=$2; shift 2 ;;
      --corpus) corpus=$2; shift 2 ;;
      --seeds) seeds+=("$2"); shift 2 ;;
      --out) out=$2; shift 2 ;;
      --supp) supp=$2; shift 2 ;;
      --nice) niceness=$2; shift 2 ;;
      -*) campaign_usage ;;
      *) break ;;
    esac
  done
  [ ${#seeds[@]} -gt 0 ] || seeds=("$here/seeds")
  [ $# -ge 2 ] || campaign_usage
  local seconds=$1 jobs=$2
  shift 2
  [[ $seconds =~ ^[0-9]+$ && $jobs =~ ^[0-9]+$ && $seconds -gt 0 && $jobs -gt 0 ]] ||
    campaign_usage
  local targets=("$@")
  if [ ${#targets[@]} -eq 0 ]; then
    local line
    while IFS= read -r line; do
      [ -n "$line" ] && targets+=("$line")
    done <"$here/targets"
  fi
  for t in "${targets[@]}"; do
    [ -x "$bin/fuzz_$t" ] || { echo "run-campaign: no executable $bin/fuzz_$t" >&2; exit 1; }
  done
  [ -d "$here/lib" ] && export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

  # Each target's share of core-seconds, in m slices of equal length L: with n * m a multiple
  # of the jobs every job gets the same work; slices stay at least 300 s (each one first runs
  # the whole corpus: 30-100 s for convert_vcf), which may leave the last round unbalanced.
  local n=${#targets[@]}
  local share=$((seconds * jobs / n))
  [ "$share" -gt 0 ] || share=1
  local m=$((jobs / $(gcd "$n" "$jobs")))
  local min_slice=300
  [ "$share" -lt "$min_slice" ] && min_slice=$share
  if [ $((share / m)) -lt "$min_slice" ]; then m=$((share / min_slice)); fi
  [ "$m" -gt 0 ] || m=1
  local slice=$((share / m))

  local stamp
  stamp=$(date +%Y%m%d-%H%M%S)
  local work=$out/campaign-$stamp
  mkdir -p "$work" "$out/logs"
  echo "run-campaign: ${#targets[@]} targets, $jobs jobs, $m slice(s) of $slice s per target" \
    "(about $((m * n * slice / jobs)) s); logs in $out/logs, stats in $work" >&2
  local items=() k t
  for ((k = 0; k < m; k++)); do
    for t in "${targets[@]}"; do items+=("$t"); done
  done
  local pids=() j
  for ((j = 0; j < jobs; j++)); do
    (
      local i
      for ((i = j; i < ${#items[@]}; i += jobs)); do
        local tt=${items[$i]}
        campaign_slice "$tt" "$slice" "$work/$tt.stats" "$out/logs/$tt.$stamp.$i.log"
      done
    ) &
    pids+=($!)
  done
  local p failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done

  local total_execs=0 total_secs=0 total_crashes=0
  for t in "${targets[@]}"; do
    local e=0 s=0 c=0 ex sx st
    if [ -f "$work/$t.stats" ]; then
      while read -r ex sx st; do
        e=$((e + ex))
        s=$((s + sx))
        [ "$st" -ne 0 ] && c=$((c + 1))
      done <"$work/$t.stats"
    fi
    echo "fuzz: $t: $e executions, $s s, crashes $c"
    total_execs=$((total_execs + e))
    total_secs=$((total_secs + s))
    total_crashes=$((total_crashes + c))
  done
  echo "fuzz: total: $total_execs executions, $total_secs s, crashes $total_crashes" \
    "(findings in $out/artifacts)"
  [ "$total_crashes" -eq 0 ] && [ "$failed" -eq 0 ]
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  campaign_main "$@"
fi
