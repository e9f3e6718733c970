#!/usr/bin/env bash
# Compare the outputs of two builds of vczstats, byte for byte, for every statistic command on a
# fixed set of stores: the check that a refactoring changed nothing users see.
#
# Usage: scripts/compare-outputs.sh -a OLD [-b NEW] [-k]
#   -a OLD   the old binary, or a git revision (built here with CUDA off into
#            .compare/<rev>/build, reusing ccache when installed)
#   -b NEW   the new binary (default build/vczstats)
#   -k       keep the work folder (printed) to look at differing outputs
#
# Stores: three simulated by the NEW binary (deterministic seeds: diploid with missing calls in
# 3 populations, a zip, a haploid one) and the default data .data/1kg_chr20.vcz
# when scripts/make-default-data.sh has made it. Commands: every statistic command of
# `vczstats --help` with options that cut windows, regions and work units, and for ld, prune and
# the matrix family the files they write beside -o. Exit 1 when any output differs (each
# difference is listed), 0 when all are identical.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
old="" new=$repo/build/vczstats keep=0
while getopts "a:b:kh" opt; do
  case $opt in
    a) old=$OPTARG ;;
    b) new=$OPTARG ;;
    k) keep=1 ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
[[ -n $old ]] || { echo "compare-outputs.sh: give -a OLD (a binary or a git revision)" >&2; exit 2; }
[[ -x $new ]] || { echo "compare-outputs.sh: $new: not an executable" >&2; exit 2; }
if [[ ! -x $old ]]; then  # a revision: build it
  rev=$(git -C "$repo" rev-parse --short "$old")
  tree=$repo/.compare/$rev
  if [[ ! -x $tree/build/vczstats ]]; then
    rm -rf "$tree"
    git -C "$repo" worktree prune
    git -C "$repo" worktree add --detach "$tree" "$rev" >/dev/null
    launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVCZSTATS_CUDA=OFF \
      -DVCZSTATS_BENCH=OFF -DVCZSTATS_TESTS=OFF "${launcher[@]}" >/dev/null
    cmake --build "$tree/build" --target vczstats >/dev/null
  fi
  old=$tree/build/vczstats
fi
work=$(mktemp -d)
if [[ $keep == 1 ]]; then echo "work folder: $work"; else trap 'rm -rf "$work"' EXIT; fi

# The stores.
stores=()
"$new" simulate "$work/dip.vcz" --seed 7 --samples 60 --variants 3000 --pops 3 --missing 0.02 \
  --variants-chunk-size 250 --samples-chunk-size 25 --pops-file "$work/dip.pops" -t 2 2>/dev/null
stores+=(dip)
"$new" simulate "$work/zip.vcz.zip" --seed 8 --samples 30 --variants 1500 \
  --variants-chunk-size 100 -t 2 2>/dev/null
stores+=(zip)
"$new" simulate "$work/hap.vcz" --seed 9 --samples 40 --variants 800 --ploidy 1 -t 2 2>/dev/null
stores+=(hap)
path_of() {
  case $1 in
    dip) echo "$work/dip.vcz" ;;
    zip) echo "$work/zip.vcz.zip" ;;
    hap) echo "$work/hap.vcz" ;;
    1kg) echo "$repo/.data/1kg_chr20.vcz" ;;
  esac
}
[[ -d $repo/.data/1kg_chr20.vcz ]] && stores+=(1kg)

# Populations in halves for stores without a table.
pops_of() {
  local s=$1
  if [[ $s == dip ]]; then echo "$work/dip.pops"; return; fi
  if [[ $s == 1kg && -f $repo/.data/1kg_chr20.pops.tsv ]]; then
    echo "$repo/.data/1kg_chr20.pops.tsv"; return
  fi
  if [[ ! -f $work/$s.pops ]]; then
    "$new" sample-stats "$(path_of "$s")" -t 1 2>/dev/null | awk 'NR > 1 {print $1 "\t" (NR % 2 ? "A" : "B")}' >"$work/$s.pops"
  fi
  echo "$work/$s.pops"
}

commands_of() {  # one command per line; OUT/ is the output folder
  local s=$1 p
  p="-P $(pops_of "$s")"
  local pair="A,B"
  [[ $s == dip ]] && pair="pop0,pop1"
  [[ $s == 1kg ]] && pair="CEU,GBR"
  cat <<EOF
afdist --bins 11
freq $p
geno-counts $p
hardy $p
missing $p --format json
sample-stats $p
sfs $p
sfs $p --joint $pair --folded
diversity $p --window-size 20kb --window-step 10kb
divergence $p --window-variants 97
stats $p --window-size 50000 --stats pi,theta_w,tajima_d,dxy,fst_hudson,fst_wc
fstats $p --f2 $pair --blocks 7
ld --ld-window-r2 0.05 --max-unit-variants 101
ld --dprime --ld-window 5
prune --indep-pairwise 50 5 0.2 --out OUT/pr
grm --max-unit-variants 333
grm --cov --bin --shape square
king
king --table
distance --metric ibs
pca -k 3 --loadings OUT/load.tsv --eigenvalues OUT/eig.tsv
pca -k 3 --approx
EOF
  if [[ $s != hap ]]; then
    if [[ $s == 1kg ]]; then  # the samples whose calls are all phased
      p="-P $repo/.data/1kg_chr20.phased.pops.tsv"
      pair="FIN,GBR"
    fi
    echo "haplotypes $p --window-size 20kb"
    echo "ihs $p --maf 0.05"
    echo "nsl $p --maf 0.05"
    echo "xpehh $p --pairs $pair"
  fi
}

total=0 differ=0
for s in "${stores[@]}"; do
  store=$(path_of "$s")
  while IFS= read -r c; do
    total=$((total + 1))
    for side in old new; do
      d=$work/out/$side/$total
      mkdir -p "$d"
      bin=$old
      [[ $side == new ]] && bin=$new
      # shellcheck disable=SC2086
      read -r cmd rest <<<"${c//OUT\//$d/}"
      set +e
      # shellcheck disable=SC2086
      "$bin" "$cmd" "$store" $rest -t 2 -o "$d/out" >/dev/null 2>"$d/stderr"
      echo $? >"$d/exit"
      set -e
      grep -v "seconds\|/s\b\|MiB\|GiB\|wall" "$d/stderr" >"$d/stderr.kept" || true
      rm "$d/stderr"
    done
    if ! diff -r -q "$work/out/old/$total" "$work/out/new/$total" >/dev/null; then
      differ=$((differ + 1))
      echo "DIFFERS: $s: vczstats $c"
      diff -r -q "$work/out/old/$total" "$work/out/new/$total" | sed 's/^/  /' | head -5 || true
    fi
  done < <(commands_of "$s")
done
echo "$total commands on ${#stores[@]} stores: $((total - differ)) identical, $differ differ"
[[ $differ == 0 ]]
