#!/usr/bin/env bash
# Benchmark two builds of vczstats against each other (before/after a change) and a peer tool,
# in the same run, on the same store: every statistic family the CLI has.
#
# Usage: bench/revisions.sh -a OLD_BINARY -b NEW_BINARY [-s STORE] [-n RUNS] [-t THREADS]
#                           [-d DEVICE]
#   -a, -b     the two vczstats binaries (e.g. a build of the parent commit, and build/vczstats)
#   -s STORE   VCZ store (default ../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip)
#   -n RUNS    timed runs of each command, interleaved between the builds; median reported
#              (default 3)
#   -t THREADS passed as -t (default: the binaries' default, all cores)
#   -d DEVICE  passed as --device (default cpu)
#   -r REGION  passed as -r (default: the whole store)
#
# Commands: afdist; freq; hardy; stats (pi, theta_w, tajima_d, fst_hudson, dxy, 100 kb windows,
# two populations); sfs; fstats f2; sample-stats. Populations: the samples split in halves. Each
# command runs once per build untimed (warm page cache), then RUNS times alternating the builds.
# The two builds' outputs must be byte-identical (checked; a difference is reported). The peer,
# in the same run: `bcftools +fill-tags | bcftools +af-dist` on the store's VCF as BCF (skipped
# with a note when bcftools or the VCF is absent), against afdist.
# Prints a Markdown table: wall seconds (median) for each build, new/old, genotype calls per
# second of the new build.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
store=$repo/../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip
old="" new="" runs=3 threads="" device=cpu region=""
while getopts "a:b:s:n:t:d:r:h" opt; do
  case $opt in
    a) old=$OPTARG ;;
    b) new=$OPTARG ;;
    s) store=$OPTARG ;;
    n) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    d) device=$OPTARG ;;
    r) region=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
[[ -x $old && -x $new ]] || { echo "revisions.sh: give -a OLD and -b NEW binaries" >&2; exit 2; }
[[ -e $store ]] || { echo "revisions.sh: $store: no such store" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Populations: the samples in two halves (names from the first column of sample-stats over a
# region of a few bp).
"$new" info "$store" >"$work/info.tsv" 2>/dev/null
contig=$(awk -F'\t' '$1 == "contigs" {split($2, a, " "); print a[1]; exit}' "$work/info.tsv")
"$new" sample-stats "$store" --device cpu -t 1 -r "$contig:1-1" 2>/dev/null | awk 'NR>1{print $1}' >"$work/samples"
awk '{print $1 "\t" (NR % 2 ? "A" : "B")}' "$work/samples" >"$work/pops.tsv"
nsamples=$(wc -l <"$work/samples")

common=(--device "$device")
[[ -n $threads ]] && common+=(-t "$threads")
[[ -n $region ]] && common+=(-r "$region")
declare -A cmds=(
  [afdist]="afdist"
  [freq]="freq"
  [hardy]="hardy"
  [stats]="stats -P $work/pops.tsv --window-size 100000 --stats pi,theta_w,tajima_d,fst_hudson,dxy"
  [sfs]="sfs -P $work/pops.tsv"
  [fstats]="fstats -P $work/pops.tsv --f2 A,B"
  [sample-stats]="sample-stats"
)
order=(afdist freq hardy stats sfs fstats sample-stats)

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
timeit() {  # timeit OUTFILE cmd...: wall seconds on stdout
  local out=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$out" 2>/dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b - a}'
}
calc() { awk "BEGIN {printf \"%.6f\", $1}"; }  # calc EXPRESSION (no bc on every machine)

calls=$(awk -F'\t' '$1 == "samples" {s = $2} $1 == "variants" {v = $2} $1 == "ploidy" {p = $2}
  END {print s * v * p}' "$work/info.tsv")
[[ -n $region ]] && calls=0  # calls/s only for whole-store runs

echo "| command | old s | new s | new / old | new 10^9 calls/s | outputs |"
echo "| --- | ---: | ---: | ---: | ---: | --- |"
for name in "${order[@]}"; do
  read -r -a args <<<"${cmds[$name]}"
  sub=${args[0]}
  rest=("${args[@]:1}")
  if ! "$new" "$sub" "$store" "${rest[@]}" "${common[@]}" >"$work/new.out" 2>"$work/err"; then
    echo "| $name | | | | | new build failed: $(head -c 120 "$work/err") |"; continue
  fi
  if ! "$old" "$sub" "$store" "${rest[@]}" "${common[@]}" >"$work/old.out" 2>"$work/err"; then
    echo "| $name | | | | | old build failed: $(head -c 120 "$work/err") |"; continue
  fi
  same=identical
  cmp -s "$work/old.out" "$work/new.out" || same=DIFFERENT
  : >"$work/to" ; : >"$work/tn"
  for ((i = 0; i < runs; i++)); do
    timeit "$work/o" "$old" "$sub" "$store" "${rest[@]}" "${common[@]}" >>"$work/to"
    timeit "$work/n" "$new" "$sub" "$store" "${rest[@]}" "${common[@]}" >>"$work/tn"
  done
  to=$(median <"$work/to"); tn=$(median <"$work/tn")
  rate=$(calc "($tn > 0) ? $calls / $tn / 1000000000 : 0")
  printf '| %s | %.3f | %.3f | %.2f | %.2f | %s |\n' "$name" "$to" "$tn" \
    "$(calc "$tn / $to")" "$rate" "$same"
done

# The peer in the same run.
vcf=${store%.vcz.zip}; vcf=${vcf%.vcz}.vcf.gz
if command -v bcftools >/dev/null && [[ -e $vcf ]]; then
  targets=()
  [[ -n $region ]] && targets=(-t "$region")
  bcftools view "${targets[@]}" -Ob -o "$work/in.bcf" "$vcf" 2>/dev/null
  : >"$work/tb"
  for ((i = 0; i <= runs; i++)); do
    t0=$(date +%s.%N)
    bcftools +fill-tags -Ou "$work/in.bcf" -- -t AF 2>/dev/null | bcftools +af-dist - >/dev/null 2>&1
    t1=$(date +%s.%N)
    ((i > 0)) && awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b - a}' >>"$work/tb"
  done
  tb=$(median <"$work/tb")
  printf '| afdist: bcftools +af-dist (peer, 1 thread) | | %.3f | | %.2f | |\n' "$tb" \
    "$(calc "$calls / $tb / 1000000000")"
else
  echo "(peer skipped: bcftools or $vcf absent)"
fi
echo "samples: $nsamples; store: $store; device: $device; threads: ${threads:-all}; runs: $runs"
