#!/usr/bin/env bash
# Run HERE (the Debian development machine), before sending the tree to the GPU machine:
#  1. downloads (apt-get download, no install) the Debian packages the GPU machine's image lacks
#     for building vczstats into .debs/ (git-ignored); scripts/gpu-check.sh unpacks them there
#     into a private prefix;
#  2. makes the test stores of tests/backend/gpu_test_stores.tsv into .gpu/stores/ (git-ignored)
#     with tests/tools (random_vcf.py + vcf2vcz.py need bcftools and python3-zarr, which the GPU
#     machine lacks); the GPU end-to-end test reads them through $VCZSTATS_TEST_STORES.
# Both folders must then travel with the tree: name `.debs` and `.gpu` in the device tool's carry.
#
# What the build needs (CMakeLists.txt): headers + link-time .so of blosc, zstd, lz4, isa-l, zlib,
# bzip2; CMake packages of nlohmann_json, fmt, CLI11, GTest. The runtime libraries come too, so
# the -dev .so symlinks resolve inside the prefix. Google Benchmark is not needed (no *_bench.cpp).
# htslib is not needed: gpu-check.sh builds without `convert` (-DVCZSTATS_CONVERT=OFF), whose
# htslib would bring libcurl and its TLS stack.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  libblosc1 libblosc-dev libsnappy1v5
  libzstd1 libzstd-dev liblz4-1 liblz4-dev zlib1g zlib1g-dev libbz2-1.0 libbz2-dev
  libisal2 libisal-dev
  libfmt9 libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev
  # BLAS + LAPACK of the matrix family (CMakeLists.txt looks in the pthread variant's folders)
  libopenblas0-pthread libopenblas-pthread-dev libgfortran5
  # the peer tool of bench/popgen.sh (its binary needs only libc, libstdc++ and zlib)
  vcftools
  # the peers of bench/matrix.sh (PLINK2=$prefix/usr/bin/plink2, PLINK19=$prefix/usr/bin/plink1.9):
  # besides the image's libc, libstdc++, zlib and the BLAS above, plink2 needs libzstd and libdeflate
  plink2 plink1.9 libdeflate0
)

mkdir -p .debs
if [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq >/dev/null
fi
# apt-get download writes into the current directory and needs it writable by _apt.
sandbox=()
[ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)  # root: no _apt user switch
(cd .debs && rm -f ./*.deb && apt-get download -qq "${sandbox[@]}" "${packages[@]}")
echo "fetch-gpu-deps: $(find .debs -name '*.deb' | wc -l) packages in .debs ($(du -sh .debs | cut -f1))"

# The newest glibc symbol version the downloaded libraries need (the GPU image must have it).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in .debs/*.deb; do dpkg -x "$d" "$tmp"; done
need=$(find "$tmp" -name '*.so*' -type f -exec objdump -T {} + 2>/dev/null |
  grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 || true)
echo "fetch-gpu-deps: newest glibc symbol needed: ${need:-none}"

# Test stores for the GPU end-to-end test.
python=/usr/bin/python3
stores=.gpu/stores
mkdir -p "$stores"
while IFS=$'\t' read -r name vcf_args convert_args; do
  case "$name" in '' | '#'*) continue ;; esac
  out="$stores/$name.vcz"
  case " $convert_args " in *" --zip "*) out="$stores/$name.vcz.zip" ;; esac
  vcf="$tmp/$name.vcf.gz"
  # shellcheck disable=SC2086  # the argument columns are word lists
  "$python" tests/tools/random_vcf.py $vcf_args -o "$vcf"
  rm -rf "$out"
  # shellcheck disable=SC2086
  "$python" tests/tools/vcf2vcz.py "$vcf" "$out" $convert_args
done <tests/backend/gpu_test_stores.tsv
# and one with FORMAT GQ and DP (call_GQ, call_DP) for the genotype masks (gputest::gq_store)
"$python" tests/tools/random_vcf.py --seed 109 --samples 53 --variants 400 --contigs 2 \
  --missing 0.05 --multiallelic 0.1 --mean-spacing 10 -o "$tmp/gq_dp.vcf.gz"
"$python" tests/tools/qc_vcf.py "$tmp/gq_dp.vcf.gz" --gq-dp -o "$tmp/gq_dp.vcf"
rm -rf "$stores/gq_dp.vcz"
"$python" tests/tools/vcf2vcz.py "$tmp/gq_dp.vcf" "$stores/gq_dp.vcz" \
  --variants-chunk-size 45 --samples-chunk-size 20
echo "fetch-gpu-deps: test stores in $stores ($(du -sh "$stores" | cut -f1))"

# The VCZ stores of ../shared/data (the GPU end-to-end tests run on them too; ../shared does not
# travel): .gpu/shared-data, read through VCZSTATS_SHARED_DATA.
if [ -d ../shared/data ]; then
  dest=$PWD/.gpu/shared-data
  rm -rf "$dest"
  mkdir -p "$dest"
  (cd ../shared/data && find . -name '*.vcz*' -exec cp --parents {} "$dest/" \;)
  # and the Ag1000G VCF, for vcftools in bench/popgen.sh
  (cd ../shared/data && find . -path '*ag1000g*' -name '*.vcf.gz' -exec cp --parents {} "$dest/" \;)
  echo "fetch-gpu-deps: shared stores in .gpu/shared-data ($(du -sh "$dest" | cut -f1))"
fi
