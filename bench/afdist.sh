#!/usr/bin/env bash
# Benchmark `vczstats afdist` against bcftools and the Python/numba zarr_afdist.
#
# Usage: bench/afdist.sh [-s STORE] [-v VCF] [-n RUNS] [-t THREADS]
#   -s STORE    VCZ store, directory or .zip
#               (default ../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip)
#   -v VCF      the same data as VCF/BCF, for bcftools (default: the store's
#               name with .vcz.zip / .vcz replaced by .vcf.gz)
#   -n RUNS     timed runs of each command; the median is reported (default 3)
#   -t THREADS  passed to vczstats as -t (default: vczstats' own default)
#   VCZSTATS=path  the vczstats binary (default build/vczstats); skipped if absent
#
# In one run it:
#   1. converts the VCF to BCF once (cached under .data/bench/, git-ignored),
#      so bcftools is timed on its fastest input format;
#   2. times `bcftools +fill-tags -Ou BCF -- -t AF | bcftools +af-dist`,
#      `tests/tools/ref_afdist.py zarr STORE` (python3-zarr reads the zip store
#      directly: it reads zip members efficiently, so no unzipping), and
#      `vczstats afdist STORE`; each command runs once untimed first (warm page
#      cache, numba's compiled cache), then RUNS times;
#   3. reports wall seconds (median), genotype calls per second (variants x
#      samples x ploidy, from the store's call_genotype shape), decoded GB/s
#      (one byte per call) and each tool's time relative to vczstats;
#   4. checks that `vczstats afdist --method bcftools` gives bcftools' counts
#      and `--method zarr-afdist` gives ref_afdist.py's, warning if not;
#   5. prints a Markdown table to paste into the README.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
store=$repo/../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip
vcf=""
runs=3
threads=""
while getopts "s:v:n:t:h" opt; do
  case $opt in
    s) store=$OPTARG ;;
    v) vcf=$OPTARG ;;
    n) runs=$OPTARG ;;
    t) threads=$OPTARG ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/afdist.sh [-s STORE] [-v VCF] [-n RUNS] [-t THREADS]" >&2; exit 2 ;;
  esac
done
if [ -z "$vcf" ]; then
  vcf=$(echo "$store" | sed -E 's/\.vcz(\.zip)?$/.vcf.gz/')
fi
vczstats=${VCZSTATS:-$repo/build/vczstats}
python=/usr/bin/python3
for f in "$store" "$vcf"; do
  [ -e "$f" ] || { echo "afdist.sh: $f not found" >&2; exit 1; }
done
store=$(cd "$(dirname "$store")" && pwd)/$(basename "$store")
vcf=$(cd "$(dirname "$vcf")" && pwd)/$(basename "$vcf")

cache=$repo/.data/bench
mkdir -p "$cache"
out=$(mktemp -d "$cache/run.XXXXXX")
trap 'rm -rf "$out"' EXIT

# 1. BCF once, cached by name and VCF modification time
bcf=$cache/$(basename "$vcf" | sed -E 's/\.(vcf\.gz|vcf|bcf)$//').bcf
if [ ! -s "$bcf" ] || [ "$vcf" -nt "$bcf" ]; then
  echo "afdist.sh: converting $vcf to BCF (cached as $bcf)" >&2
  bcftools view --no-version -Ob -o "$bcf.tmp" "$vcf"
  mv "$bcf.tmp" "$bcf"
fi

read -r nvar nsmp nploidy < <("$python" - "$store" <<'EOF'
import sys, zarr
path = sys.argv[1]
store = zarr.ZipStore(path, mode="r") if path.endswith(".zip") else zarr.DirectoryStore(path)
print(*zarr.open_group(store, mode="r")["call_genotype"].shape)
EOF
)
calls=$((nvar * nsmp * nploidy))

# time_cmd NAME OUTFILE CMD...: one untimed warm-up, then $runs timed runs;
# prints the median wall seconds; stdout of the last run goes to OUTFILE.
time_cmd() {
  local name=$1 outfile=$2; shift 2
  local times=() t0 t1 i
  "$@" >"$outfile" 2>"$out/$name.err" || { echo "afdist.sh: $name failed:" >&2; cat "$out/$name.err" >&2; return 1; }
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    "$@" >"$outfile" 2>"$out/$name.err"
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{ t[NR] = $1 } END {
    m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2; printf "%.3f\n", m / 1e6 }'
}

# prob_dist column of a TSV with a header line
counts() { awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "prob_dist") c = i; next } { print $c }' "$1"; }

bcftools_pipeline() { bcftools +fill-tags -Ou "$bcf" -- -t AF | bcftools +af-dist; }
bcftools_table() { bcftools_pipeline | awk -F'\t' 'BEGIN { print "start\tstop\tprob_dist" } $1 == "PROB_DIST" { print $2 "\t" $3 "\t" $4 }'; }

names=() labels=() secs=()
echo "afdist.sh: $nvar variants x $nsmp samples x ploidy $nploidy = $calls calls; $runs runs each" >&2

t=$(time_cmd bcftools "$out/bcftools.tsv" bcftools_table)
names+=(bcftools); labels+=("bcftools +fill-tags \\| +af-dist (BCF)"); secs+=("$t")
echo "afdist.sh: bcftools        ${t}s" >&2

t=$(time_cmd ref_afdist "$out/ref_afdist.tsv" "$python" "$repo/tests/tools/ref_afdist.py" zarr "$store")
names+=(ref_afdist); labels+=("zarr_afdist, Python/numba (ref_afdist.py)"); secs+=("$t")
echo "afdist.sh: ref_afdist.py   ${t}s" >&2

have_vczstats=0
thread_args=()
[ -n "$threads" ] && thread_args=(-t "$threads")
if [ -x "$vczstats" ]; then
  have_vczstats=1
  t=$(time_cmd vczstats "$out/vczstats.tsv" "$vczstats" afdist "$store" "${thread_args[@]}")
  names+=(vczstats); labels+=("vczstats afdist${threads:+ -t $threads}"); secs+=("$t")
  echo "afdist.sh: vczstats        ${t}s" >&2
  # 4. agreement of the counts
  for pair in "bcftools:bcftools" "zarr-afdist:ref_afdist"; do
    method=${pair%%:*} ref=${pair##*:}
    if ! "$vczstats" afdist "$store" --method "$method" "${thread_args[@]}" >"$out/check.$method.tsv" 2>"$out/check.err"; then
      echo "WARNING: vczstats afdist --method $method failed: $(head -1 "$out/check.err")"
    elif ! diff -q <(counts "$out/check.$method.tsv") <(counts "$out/$ref.tsv") >/dev/null; then
      echo "WARNING: vczstats afdist --method $method counts differ from $ref:"
      paste <(counts "$out/check.$method.tsv") <(counts "$out/$ref.tsv") | sed 's/^/  vczstats\t/'
    else
      echo "check: vczstats --method $method counts equal those of $ref"
    fi
  done
else
  echo "afdist.sh: $vczstats not found (set VCZSTATS=...); timing bcftools and ref_afdist.py only" >&2
fi
if ! diff -q <(counts "$out/bcftools.tsv") <(counts "$out/ref_afdist.tsv") >/dev/null; then
  echo "note: bcftools and zarr_afdist counts differ on this store (expected with missing data, multi-allelic or non-diploid calls)"
fi

# 5. the table
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
vcz_t=""
[ $have_vczstats -eq 1 ] && vcz_t=${secs[${#secs[@]} - 1]}
echo
echo "afdist on $(basename "$store"): $nvar variants × $nsmp samples × ploidy $nploidy ($calls genotype calls);"
echo "$(nproc) cores, $cpu; $(date -u +%Y-%m-%d); median of $runs runs after one warm-up."
echo
echo "| tool | wall s | Mcalls/s | decoded GB/s | time / vczstats |"
echo "| --- | ---: | ---: | ---: | ---: |"
for i in "${!names[@]}"; do
  awk -v label="${labels[$i]}" -v t="${secs[$i]}" -v calls="$calls" -v ref="$vcz_t" 'BEGIN {
    ratio = (ref != "" && ref > 0) ? sprintf("%.1f×", t / ref) : "–"
    printf "| %s | %.3f | %.1f | %.3f | %s |\n", label, t, calls / t / 1e6, calls / t / 1e9, ratio }'
done
