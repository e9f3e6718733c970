#!/usr/bin/env bash
# Benchmark the sample-by-sample matrices (king, grm, distance, pca) and the variant-pair
# statistics (ld, prune) against plink2 and plink 1.9 on the same data, in one run.
#
# Usage: bench/matrix.sh [--synthetic S,V | --simulate S,V | --store PATH] [-t THREADS]
#                        [-d DEVICES] [-n RUNS] [-c COMMANDS] [-w WINDOW]
#   --synthetic S,V  the data: a store of S samples x V variants and its VCF, made by
#               bench/make_synthetic_store.py (needs numpy; cached under .data/bench/; default
#               2000,20000), and plink2's .pgen and plink 1.9's .bed of that VCF (made once, not
#               timed)
#   --simulate S,V   the data: `vczstats simulate --samples S --variants V --seed 1 --missing
#               0.002` (chunks of 10000 variants x 1000 samples; cached under .data/bench/);
#               plink's .bed from it by bench/vcz_to_bed (the same calls: REF against the other
#               alleles, a call with a missing allele missing) and plink2's .pgen from that .bed.
#               Needs neither numpy nor htslib (the GPU machine).
#   --store PATH     an existing diploid store, given to plink as --simulate's is (the .bed and
#               .pgen are cached under .data/bench/ and remade when the store is newer); every
#               variant on plink's chromosome 1 (as vczstats, plink then uses all of them, e.g.
#               for KING, which plink2 skips on X)
#   -t THREADS  threads of every tool (vczstats -t, plink --threads; default: all cores)
#   -d DEVICES  comma-separated vczstats --device values, each timed (default cpu)
#   -n RUNS     timed runs of vczstats per device and command; the median is reported (default 3);
#               the peers run once
#   -c COMMANDS comma-separated subset of king,grm,distance,pca,ld,prune (default
#               king,grm,distance,pca)
#   -w WINDOW   ld's window in variants (--ld-window; default 1000)
#   VCZSTATS, PLINK2, PLINK19, PYTHON, VCZ_TO_BED: the programs (default build/vczstats, plink2,
#   plink1.9, python3 with numpy, bench/vcz_to_bed of vczstats' build folder)
#
# Pairs timed (same output, plink's binary square matrix or PCA, written to a scratch folder):
#   king     vczstats king --bin --shape square      plink2 --make-king square bin
#   grm      vczstats grm --bin --shape square       plink2 --make-rel square bin
#   distance vczstats distance --bin --shape square  plink1.9 --distance square bin
#   pca      vczstats pca -k 10                      plink2 --pca 10 (approx above 5000 samples,
#            both tools)
#   ld       vczstats ld --ld-window W --ld-window-kb 100000 --ld-window-r2 0.2
#            plink1.9 --r2 --ld-window W --ld-window-kb 100000 --ld-window-r2 0.2 (same pairs;
#            text tables)
#   prune    vczstats prune --indep-pairwise 500 50 0.2 --out
#            plink1.9 --indep-pairwise 500 50 0.2
# vczstats reads the store from disk (VCZ, decode included); plink reads its own .pgen/.bed.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
synthetic=2000,20000
data=synthetic
store_arg=
threads=$(nproc)
devices=cpu
runs=3
commands=king,grm,distance,pca
window=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --synthetic) synthetic=$2; data=synthetic; shift ;;
    --simulate) synthetic=$2; data=simulate; shift ;;
    --store) store_arg=$2; data=store; shift ;;
    -t) threads=$2; shift ;;
    -d) devices=$2; shift ;;
    -n) runs=$2; shift ;;
    -c) commands=$2; shift ;;
    -w) window=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/matrix.sh [--synthetic S,V | --simulate S,V | --store PATH] [-t THREADS] [-d DEVICES] [-n RUNS] [-c COMMANDS] [-w WINDOW]" >&2; exit 2 ;;
  esac
  shift
done
vczstats=${VCZSTATS:-$repo/build/vczstats}
plink2=${PLINK2:-plink2}
plink19=${PLINK19:-plink1.9}
for p in "$plink2" "$plink19"; do
  command -v "$p" >/dev/null || { echo "matrix.sh: $p not found (scripts/setup.sh)" >&2; exit 1; }
done
[ -x "$vczstats" ] || { echo "matrix.sh: $vczstats not found" >&2; exit 1; }

calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
now() { date +%s.%N; }
timeit() {
  local s
  s=$(now)
  "$@" >/dev/null 2>&1 || { echo "matrix.sh: failed: $*" >&2; exit 1; }
  calc "$(now) - $s"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

cache=$repo/.data/bench
mkdir -p "$cache"
vcz_to_bed=${VCZ_TO_BED:-$(dirname "$vczstats")/bench/vcz_to_bed}
# plink's .bed (vcz_to_bed) and .pgen (plink2, from that .bed) of store $1 as $2.{bed,pgen}.
plink_from_store() {
  local s
  s=$(now)
  [ -x "$vcz_to_bed" ] || { echo "matrix.sh: $vcz_to_bed not found (build the bench targets)" >&2; exit 1; }
  "$vcz_to_bed" "$1" "$2" -t "$threads" --contig 1  # plink: no chrX rules
  echo "vcz_to_bed: $(calc "$(now) - $s") s" >&2
  "$plink2" --bfile "$2" --allow-extra-chr --threads "$threads" --silent --make-pgen --out "$2"
}
case "$data" in
  synthetic)
    S=${synthetic%,*}
    V=${synthetic#*,}
    store=$cache/synthetic_${S}x${V}.vcz
    vcf=$cache/synthetic_${S}x${V}.vcf.gz
    if [ ! -e "$store" ] || [ ! -e "$vcf" ]; then
      "${PYTHON:-python3}" "$repo/bench/make_synthetic_store.py" --samples "$S" --variants "$V" \
        --variants-chunk-size 10000 --samples-chunk-size 1000 "$store" --vcf "$vcf" -f
    fi
    plinkdata=$cache/synthetic_${S}x${V}.plink
    if [ ! -e "$plinkdata.bed" ] || [ ! -e "$plinkdata.pgen" ]; then
      "$plink2" --vcf "$vcf" --vcf-half-call m --max-alleles 2 --threads "$threads" --silent \
        --make-pgen --out "$plinkdata"
      "$plink2" --pfile "$plinkdata" --threads "$threads" --silent --make-bed --out "$plinkdata"
    fi
    what=synthetic ;;
  simulate)
    S=${synthetic%,*}
    V=${synthetic#*,}
    store=$cache/simulate_${S}x${V}.vcz
    plinkdata=$cache/simulate_${S}x${V}.plink
    if [ ! -e "$store" ]; then
      "$vczstats" simulate --samples "$S" --variants "$V" --seed 1 --missing 0.002 \
        --variants-chunk-size 10000 --samples-chunk-size 1000 -t "$threads" -f "$store.tmp"
      mv "$store.tmp" "$store"
    fi
    if [ ! -e "$plinkdata.pgen" ] || [ "$store" -nt "$plinkdata.pgen" ]; then
      plink_from_store "$store" "$plinkdata"
    fi
    what="vczstats simulate --seed 1" ;;
  store)
    store=$store_arg
    [ -e "$store" ] || { echo "matrix.sh: $store not found" >&2; exit 1; }
    plinkdata=$cache/store_$(basename "$store")_$(realpath "$store" | cksum | cut -d' ' -f1).plink
    if [ ! -e "$plinkdata.pgen" ] || [ "$store" -nt "$plinkdata.pgen" ]; then
      plink_from_store "$store" "$plinkdata"
    fi
    S=$(wc -l <"$plinkdata.fam")
    V=$(wc -l <"$plinkdata.bim")
    what=$store ;;
esac

out=$(mktemp -d "$cache/matrix.XXXXXX")
trap 'rm -rf "$out"' EXIT
approx=()
papprox=""
if [ "$S" -gt 5000 ]; then approx=(--approx); papprox=" approx"; fi

echo "matrices: $S samples x $V variants ($what), $threads threads for every tool"
echo
printf '| command | peer | peer s | %s |\n|---|---|---:|%s\n' \
  "$(for d in ${devices//,/ }; do printf 'vczstats %s s (speed-up) | ' "$d"; done | sed 's/ | $//')" \
  "$(for _ in ${devices//,/ }; do printf -- '---:|'; done)"
for c in ${commands//,/ }; do
  case "$c" in
    king) ours=(king --bin --shape square); peer=("$plink2" --pfile "$plinkdata" --make-king square bin --allow-extra-chr)
      pname="plink2 --make-king" ;;
    grm) ours=(grm --bin --shape square); peer=("$plink2" --pfile "$plinkdata" --make-rel square bin --allow-extra-chr)
      pname="plink2 --make-rel" ;;
    distance) ours=(distance --bin --shape square)
      peer=("$plink19" --bfile "$plinkdata" --distance square bin --allow-extra-chr); pname="plink1.9 --distance" ;;
    pca) ours=(pca -k 10 "${approx[@]}"); peer=("$plink2" --pfile "$plinkdata" --pca 10$papprox --allow-extra-chr)
      pname="plink2 --pca 10$papprox" ;;
    ld) ours=(ld --ld-window "$window" --ld-window-kb 100000 --ld-window-r2 0.2)
      peer=("$plink19" --bfile "$plinkdata" --r2 --ld-window "$window" --ld-window-kb 100000
        --ld-window-r2 0.2 --allow-extra-chr)
      pname="plink1.9 --r2 --ld-window $window" ;;
    prune) ours=(prune --indep-pairwise 500 50 0.2 --out "$out/ours")
      peer=("$plink19" --bfile "$plinkdata" --indep-pairwise 500 50 0.2 --allow-extra-chr)
      pname="plink1.9 --indep-pairwise 500 50 0.2" ;;
    *) echo "matrix.sh: unknown command $c" >&2; exit 2 ;;
  esac
  tp=$(cd "$out" && timeit "${peer[@]}" --threads "$threads" --out "$out/peer")
  echo "matrix.sh: $c: $pname $tp s" >&2  # progress (a run cut short keeps what it measured)
  row="| $c | $pname | $(printf '%.2f' "$tp") |"
  for d in ${devices//,/ }; do
    cmd=("$vczstats" "${ours[@]}" "$store" --device "$d" -t "$threads" -o "$out/ours")
    "${cmd[@]}" >/dev/null 2>&1  # warm the page cache (and the GPU)
    times=()
    for _ in $(seq "$runs"); do times+=("$(timeit "${cmd[@]}")"); done
    m=$(median "${times[@]}")
    echo "matrix.sh: $c: vczstats --device $d runs ${times[*]} s" >&2
    row+=" $(printf '%.2f (%.1fx)' "$m" "$(calc "$tp / $m")") |"
  done
  echo "$row"
done
