#!/usr/bin/env bash
# Benchmark the per-sample setup (issue 18): what a run costs outside the engine at 10^5, 10^6
# and 10^7 samples, with and without a sample selection or populations file.
#
# Usage: bench/samples.sh [-N "100000 1000000 10000000"] [-v VARIANTS] [-n RUNS] [-t THREADS]
#   -N SIZES     space-separated sample counts (default "100000 1000000 10000000")
#   -v VARIANTS  variants of each store (default 100)
#   -n RUNS      runs of each command; medians are reported (default 3)
#   -t THREADS   vczstats -t (default: all cores)
#   VCZSTATS=path  the vczstats binary (default build/vczstats); BCFTOOLS=path likewise
#
# Stores: `vczstats simulate --samples N --variants V --pops 4 --pops-file` (bio2zarr's chunks,
# 10,000 samples per chunk), cached under .data/bench/ (git-ignored; 10^7 samples take minutes
# to write once). Commands, each timed as a whole process:
#   afdist            no selection
#   afdist -S         half of the samples, drawn at random, listed in random order
#   freq -P           the 4-population table as simulate wrote it (store order)
#   stats -P          the same table with its lines shuffled (random order)
# Reported: process wall, the engine's total and the setup line of -v (open store, read
# sample_id, selection, populations), wall - engine (everything outside the engine: process
# start, setup, planning, output, exit), the CPU time (user + sys) of the same command over a
# region without variants (-r 1:1-1: every per-sample step, no scan; on a busy machine wall
# times stretch, CPU times much less), peak RSS; then the bytes per sample of peak RSS between
# the two largest sizes. The peer, measured in the same run: `bcftools view -S` with the same
# half of the samples on a one-record VCF of the same N samples (its per-sample work: parsing
# the header's names, looking the list up, subsetting one record), written as uncompressed BCF to
# /dev/null.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
sizes="100000 1000000 10000000"
variants=100
runs=3
threads=$(nproc)
while getopts "N:v:n:t:h" opt; do
  case $opt in
    N) sizes=$OPTARG ;;
    v) variants=$OPTARG ;;
    n) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/samples.sh [-N SIZES] [-v VARIANTS] [-n RUNS] [-t THREADS]" >&2; exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
bcftools=${BCFTOOLS:-bcftools}
[ -x "$vczstats" ] || { echo "samples.sh: $vczstats not found (build first)" >&2; exit 1; }
command -v "$bcftools" >/dev/null || { echo "samples.sh: bcftools not found" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "samples.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }

cache=$repo/.data/bench
mkdir -p "$cache"
work=$(mktemp -d "$cache/samples.XXXXXX")
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# Inputs for N samples: the store and its populations table, a random half of the names in
# random order, the table shuffled, and a one-record VCF of the same samples.
prepare() {
  local n=$1 base=$cache/samples_${1}x${variants}
  if [ ! -e "$base.vcz" ]; then
    echo "writing $base.vcz ..." >&2
    "$vczstats" simulate "$base.vcz" --samples "$n" --variants "$variants" --pops 4 \
      --pops-file "$base.pops.tsv" --seed 1 -t "$threads" --no-progress
  fi
  if [ ! -e "$base.half.txt" ]; then
    tail -n +2 "$base.pops.tsv" | cut -f1 | shuf -n $((n / 2)) --random-source=<(yes) \
      >"$base.half.txt"
    (head -n 1 "$base.pops.tsv"; tail -n +2 "$base.pops.tsv" | shuf --random-source=<(yes)) \
      >"$base.pops-shuffled.tsv"
    {
      printf '##fileformat=VCFv4.2\n##contig=<ID=1,length=1000000>\n'
      printf '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
      printf '#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT'
      tail -n +2 "$base.pops.tsv" | cut -f1 | awk '{printf "\t%s", $1}'
      printf '\n1\t100\t.\tA\tT\t.\tPASS\t.\tGT'
      awk -v n="$n" 'BEGIN { for (i = 0; i < n; ++i) printf "\t0|1"; printf "\n" }'
    } >"$base.one.vcf"
  fi
}

# Run one command RUNS times; print "wall engine setup open read selection populations rss_kib
# cpu" (medians; cpu = user + sys). Engine and setup come from -v (absent for the peer: 0).
measure() {
  local walls=() engines=() setups=() opens=() reads=() sels=() popss=() rsss=() cpus=()
  local wall rss user sys
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$@" >/dev/null 2>"$work/err" ||
      { cat "$work/err" >&2; exit 1; }
    read -r wall rss user sys <"$work/time"
    walls+=("$wall")
    rsss+=("$rss")
    cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')")
    engines+=("$(awk '/vczstats:   total/ {print $3}' "$work/err")")
    local line
    line=$(grep 'vczstats: setup' "$work/err" || true)
    field() { grep -o "$1 [0-9.]*" <<<"$line" | awk '{print $NF}' || true; }
    setups+=("$(field 'setup')")
    opens+=("$(field 'open store')")
    reads+=("$(field 'read samples')")
    sels+=("$(field 'selection')")
    popss+=("$(field 'populations')")
  done
  m() { printf '%s\n' "$@" | sed 's/^$/0/' | median; }
  echo "$(m "${walls[@]}") $(m "${engines[@]}") $(m "${setups[@]}") $(m "${opens[@]}")" \
    "$(m "${reads[@]}") $(m "${sels[@]}") $(m "${popss[@]}") $(m "${rsss[@]}") $(m "${cpus[@]}")"
}

echo "bench/samples.sh: $variants variants, vczstats -t $threads, median of $runs runs;" \
  "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'));" \
  "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| samples | command | wall s | engine s | wall - engine s | setup s: open, read samples, selection, populations | CPU s, no scan | peak RSS MiB |"
echo "| ---: | --- | ---: | ---: | ---: | --- | ---: | ---: |"
declare -A rss_of
last=""
prev=""
for n in $sizes; do
  prepare "$n"
  base=$cache/samples_${n}x${variants}
  common=(--device cpu -t "$threads" --no-progress -v)
  for label in "afdist" "afdist -S" "freq -P" "stats -P" "bcftools view -S (peer)"; do
    case $label in
      "afdist") cmd=("$vczstats" afdist "$base.vcz" "${common[@]}") ;;
      "afdist -S") cmd=("$vczstats" afdist "$base.vcz" -S "$base.half.txt" "${common[@]}") ;;
      "freq -P") cmd=("$vczstats" freq "$base.vcz" -P "$base.pops.tsv" "${common[@]}") ;;
      "stats -P") cmd=("$vczstats" stats "$base.vcz" -P "$base.pops-shuffled.tsv" "${common[@]}") ;;
      *) cmd=("$bcftools" view -S "$base.half.txt" -Ou -o /dev/null "$base.one.vcf") ;;
    esac
    measure "${cmd[@]}" >"$work/measured"
    read -r wall engine setup open rd sel pops rss cpu <"$work/measured"
    rss_of["$n/$label"]=$rss
    if [ "$engine" = 0 ]; then
      awk -v n="$n" -v l="$label" -v w="$wall" -v c="$cpu" -v r="$rss" \
        'BEGIN { printf "| %d | %s | %.2f | | | | %.2f | %.0f |\n", n, l, w, c, r / 1024 }'
      continue
    fi
    # The same command over a region without variants: all of its per-sample work, no scan;
    # its CPU time is what the setup costs on an idle machine.
    measure "${cmd[@]}" -r 1:1-1 >"$work/measured"
    read -r _ _ _ _ _ _ _ _ cpu <"$work/measured"
    awk -v n="$n" -v l="$label" -v w="$wall" -v e="$engine" -v s="$setup" -v o="$open" \
      -v rd="$rd" -v se="$sel" -v p="$pops" -v c="$cpu" -v r="$rss" \
      'BEGIN { printf "| %d | `%s` | %.2f | %.2f | %.2f | %.3f: %.3f, %.3f, %.3f, %.3f | %.2f | %.0f |\n",
               n, l, w, e, w - e, s, o, rd, se, p, c, r / 1024 }'
  done
  prev=$last
  last=$n
done
if [ -n "$prev" ]; then
  echo
  printf 'Peak RSS per sample between %s and %s samples:' "$prev" "$last"
  for label in "afdist" "afdist -S" "freq -P" "stats -P" "bcftools view -S (peer)"; do
    awk -v l="$label" -v a="${rss_of[$prev/$label]}" -v b="${rss_of[$last/$label]}" \
      -v na="$prev" -v nb="$last" \
      'BEGIN { printf " %s %.0f B;", l, (b - a) * 1024 / (nb - na) }'
  done
  echo
fi
