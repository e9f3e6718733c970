#!/usr/bin/python3
"""Self-tests of the Python test tools (random_vcf.py, vcf2vcz.py, ref_afdist.py).

Checks each tool against something independent of it: vcf2vcz.py against a
plain-text reading of the VCF and against the bio2zarr stores in
../shared/data/vcztools; ref_afdist.py's numba loop against a vectorised numpy
evaluation of the same definition and against hand-computed values; the
bcftools helper against hand-computed values of bcftools' rules.

Run with pytest, or directly: `/usr/bin/python3 tests/tools/test_tools.py`
(prints 'N passed, N failed'; tests needing ../shared/data are skipped
without it).
"""

import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np
import zarr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_vcz  # noqa: E402
import ref_afdist  # noqa: E402

SHARED = os.path.join(HERE, "..", "..", "..", "shared", "data")
PY = "/usr/bin/python3"


class Skip(Exception):
    pass


def tool(name, *args, **kwargs):
    return subprocess.run([PY, os.path.join(HERE, name), *map(str, args)], check=True,
                          capture_output=True, **kwargs)


def tmpdir():
    return tempfile.mkdtemp(prefix="test_tools-")


def shared(*parts):
    path = os.path.join(SHARED, *parts)
    if not os.path.exists(path):
        raise Skip(f"{path} is absent")
    return path


def check_store_against_vcf(vcf, store):
    """Compare a store with a plain-text reading of the (bgzipped) VCF."""
    z = compare_vcz.open_store(store)
    gt, phased, mask = z["call_genotype"][:], z["call_genotype_phased"][:], z["call_genotype_mask"][:]
    contig_id, contig = z["contig_id"][:], z["variant_contig"][:]
    position, length = z["variant_position"][:], z["variant_length"][:]
    alleles, vid, vid_mask = z["variant_allele"][:], z["variant_id"][:], z["variant_id_mask"][:]
    ploidy = gt.shape[2]
    i = 0
    with gzip.open(vcf, "rt") as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            assert contig_id[contig[i]] == fields[0]
            assert position[i] == int(fields[1])
            assert vid[i] == fields[2] and vid_mask[i] == (fields[2] == ".")
            expected = [fields[3]] + ([] if fields[4] == "." else fields[4].split(","))
            row = list(alleles[i])
            assert row[: len(expected)] == expected and set(row[len(expected):]) <= {""}
            assert length[i] == len(fields[3])
            for s, call in enumerate(fields[9:]):
                parts = call.replace("|", "/").split("/")
                want = [-1 if a == "." else int(a) for a in parts] + [-2] * (ploidy - len(parts))
                assert list(gt[i, s]) == want, (i, s, call, gt[i, s])
                assert phased[i, s] == (len(parts) == 1 or call[len(parts[0])] == "|"), (i, s, call)
            i += 1
    assert i == gt.shape[0]
    assert np.array_equal(mask, gt < 0)


def numpy_afdist(store, num_bins=10, samples=None, variant_range=None):
    """The zarr_afdist definition evaluated with whole-array numpy operations."""
    root = compare_vcz.open_store(store)
    G = root["call_genotype"][:]
    if samples:
        ids = list(root["sample_id"][:])
        G = G[:, [ids.index(s) for s in samples]]
    if variant_range:
        G = G[variant_range[0]: variant_range[1]]
    n = G.shape[1]
    a, b = G[:, :, 0], G[:, :, 1]
    het = (a != b).sum(1)
    hom_alt = ((a == b) & (a != 0)).sum(1)
    x = (2 * n - (G == 0).sum((1, 2))) / (2 * n)
    bins = np.linspace(0, 1, num_bins + 1)
    bins[-1] += 0.0125
    counts = np.zeros(num_bins + 2)
    np.add.at(counts, np.digitize(2 * x * (1 - x), bins), het)
    np.add.at(counts, np.digitize(x * x, bins), hom_alt)
    return [int(c) for c in counts[1: num_bins + 1]]


def tsv_counts(text):
    lines = text.decode().splitlines() if isinstance(text, bytes) else text.splitlines()
    assert lines[0] == "start\tstop\tprob_dist"
    return [int(line.split("\t")[2]) for line in lines[1:]]


RANDOM_ARGS = ["--samples", 7, "--variants", 300, "--contigs", 3, "--missing", 0.05,
               "--multiallelic", 0.1, "--alt-dot", 0.05, "--phased", 0.5]


# ------------------------------------------------------------------ random_vcf

def test_random_vcf_is_deterministic_and_valid():
    a = tool("random_vcf.py", "--seed", 4, *RANDOM_ARGS, "--mixed-ploidy", 0.2).stdout
    b = tool("random_vcf.py", "--seed", 4, *RANDOM_ARGS, "--mixed-ploidy", 0.2).stdout
    c = tool("random_vcf.py", "--seed", 5, *RANDOM_ARGS, "--mixed-ploidy", 0.2).stdout
    assert a == b and a != c
    d = tmpdir()
    path = os.path.join(d, "r.vcf.gz")
    tool("random_vcf.py", "--seed", 4, *RANDOM_ARGS, "-o", path)
    assert os.path.exists(path + ".tbi")
    records = subprocess.run(["bcftools", "view", "-H", path], check=True, capture_output=True).stdout
    assert records.count(b"\n") == 300
    for contig in ("chr1", "chr2", "chr3"):
        pos = subprocess.run(["bcftools", "query", "-r", contig, "-f", "%POS\n", path], check=True,
                             capture_output=True).stdout.split()
        pos = [int(p) for p in pos]
        assert pos == sorted(set(pos)) and len(pos) == 100


# --------------------------------------------------------------------- vcf2vcz

def test_vcf2vcz_matches_vcf_text():
    d = tmpdir()
    cases = [
        (["--ploidy", 1], []),
        (["--mixed-ploidy", 0.3], ["--variants-chunk-size", 7, "--samples-chunk-size", 3]),
        (["--ploidy", 3], ["--zip", "--dimension-separator", "/", "--compressor", "lz4"]),
        (["--mixed-ploidy", 0.1], ["--omit-empty-chunks", "--genotype-dtype", "int16",
                                   "--compressor", "zstd", "--variants-chunk-size", 50]),
        ([], ["--compressor", "none", "--zip", "--variants-chunk-size", 1]),
        ([], ["--compressor", "zlib", "--genotype-dtype", "int32"]),
    ]
    for k, (gen_args, conv_args) in enumerate(cases):
        vcf = os.path.join(d, f"c{k}.vcf.gz")
        tool("random_vcf.py", "--seed", k, *RANDOM_ARGS, *gen_args, "-o", vcf)
        store = os.path.join(d, f"c{k}.vcz" + (".zip" if "--zip" in conv_args else ""))
        tool("vcf2vcz.py", vcf, store, *conv_args)
        check_store_against_vcf(vcf, store)


def test_vcf2vcz_restarts_when_ploidy_grows():
    d = tmpdir()
    text = tool("random_vcf.py", "--seed", 9, "--samples", 4, "--variants", 30).stdout.decode()
    lines = text.splitlines(keepends=True)
    first = next(i for i, l in enumerate(lines) if not l.startswith("#"))
    fields = lines[first + 24].split("\t")
    fields[9] = "0/1/1"
    lines[first + 24] = "\t".join(fields)
    vcf = os.path.join(d, "p.vcf.gz")
    subprocess.run(["bgzip", "-c"], input="".join(lines).encode(), stdout=open(vcf, "wb"), check=True)
    store = os.path.join(d, "p.vcz")
    result = tool("vcf2vcz.py", vcf, store, "--variants-chunk-size", 10)
    assert b"restarting" in result.stderr
    assert zarr.open(store, mode="r")["call_genotype"].shape == (30, 4, 3)
    check_store_against_vcf(vcf, store)


# bio2zarr 0.2.0 fixtures whose derived arrays do not match their VCFs (checked
# by hand): call_genotype_mask / variant_id_mask / call_genotype_phased of
# stores written with different chunk sizes per array, and stores whose
# genotype chunks are all absent with a null fill value.
FIXTURE_DEFECTS = {
    "sample": "variant_id_mask,call_genotype_mask",
    "1kg_2020_chrM": "call_genotype,call_genotype_phased,call_genotype_mask",
    "chr22": "call_genotype_phased",
    "msprime_diploid": "variant_id_mask,call_genotype_mask",
    "sample-split-alleles": "call_genotype_mask",
    "field_type_combos": "",
}


def test_vcf2vcz_matches_bio2zarr_fixtures():
    d = tmpdir()
    for name, skip in FIXTURE_DEFECTS.items():
        theirs = shared("vcztools", f"{name}.vcz.zip")
        root = compare_vcz.open_store(theirs)
        chunks = root["call_genotype"].chunks if "call_genotype" in root else (100, 1000)
        mine = os.path.join(d, f"{name}.vcz")
        tool("vcf2vcz.py", shared("vcztools", f"{name}.vcf.gz"), mine,
             "--variants-chunk-size", chunks[0], "--samples-chunk-size", chunks[1])
        result = subprocess.run([PY, os.path.join(HERE, "compare_vcz.py"), mine, theirs,
                                 "--skip", skip], capture_output=True)
        assert result.returncode == 0, (name, result.stdout.decode())


# ------------------------------------------------------------------ ref_afdist

def test_zarr_afdist_hand_computed():
    # sample.vcf variants 2..6, samples NA00001 and NA00003, 4 bins (see docstring rules):
    # v2 1/1 hom_alt af .5 -> pAA .25; v4 het + hom_alt af 1; v6 0/1 het and ./. hom_alt af .75
    store = shared("vcztools", "sample.vcz.zip")
    out = tool("ref_afdist.py", "zarr", store, "--variant-range", "2:7",
               "-s", "NA00001,NA00003", "--num-bins", 4).stdout.decode()
    assert out.splitlines() == ["start\tstop\tprob_dist", "0.0\t0.25\t1", "0.25\t0.5\t2",
                                "0.5\t0.75\t1", "0.75\t1.0125\t1"]


def test_zarr_afdist_matches_numpy():
    d = tmpdir()
    stores = []
    for k, extra in enumerate([[], ["--variants-chunk-size", 13, "--samples-chunk-size", 3]]):
        vcf = os.path.join(d, f"a{k}.vcf.gz")
        tool("random_vcf.py", "--seed", 20 + k, *RANDOM_ARGS, "--mixed-ploidy", 0.2, "-o", vcf)
        stores.append(os.path.join(d, f"a{k}.vcz"))
        tool("vcf2vcz.py", vcf, stores[-1], *extra)
    for store in stores:
        assert tsv_counts(tool("ref_afdist.py", "zarr", store).stdout) == numpy_afdist(store)
        samples = ["S0001", "S0004", "S0005"]
        out = tool("ref_afdist.py", "zarr", store, "-s", ",".join(samples),
                   "--variant-range", "17:250", "--num-bins", 7).stdout
        assert tsv_counts(out) == numpy_afdist(store, 7, samples, (17, 250))


def test_bcftools_afdist_rules():
    d = tmpdir()
    header = ("##fileformat=VCFv4.2\n##contig=<ID=1,length=1000>\n"
              '##FORMAT=<ID=GT,Number=1,Type=String,Description="GT">\n'
              "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tA\tB\tC\tD\n")
    cases = {
        # AF of ALT 1 only; 1/2 has dosage 1 (RA), 2/2 dosage 0 (skipped): AF .25 -> pRA .375
        "A\tT,G\t.\t.\t.\tGT\t1/2\t2/2\t0/1\t0/0": [0, 0, 0, 2, 0, 0, 0, 0, 0, 0],
        # calls with a missing allele and haploid calls in a diploid file are skipped;
        # they still count in AF (3 ALT of 6 called alleles) -> pRA .5
        "A\tT\t.\t.\t.\tGT\t1/.\t0/1\t1\t0/0": [0, 0, 0, 0, 0, 1, 0, 0, 0, 0],
        # af = 1: pAA = 1 lands in the last printed bin
        "A\tT\t.\t.\t.\tGT\t1/1\t1/1\t1/1\t1/1": [0] * 9 + [4],
        # ALT '.': no AF, site skipped
        "A\t.\t.\t.\t.\tGT\t0/0\t0/0\t0/0\t0/0": [0] * 10,
    }
    for k, (record, want) in enumerate(cases.items()):
        vcf = os.path.join(d, f"b{k}.vcf")
        with open(vcf, "w") as f:
            f.write(header + "1\t10\t.\t" + record + "\n")
        assert tsv_counts(tool("ref_afdist.py", "bcftools", vcf).stdout) == want, record


def test_bcftools_afdist_equals_zarr_afdist_without_missing_data():
    # diploid, biallelic, no missing calls: both definitions agree (50 samples keep
    # every pRA/pAA away from the bin edges where float32 and float64 could differ)
    d = tmpdir()
    vcf = os.path.join(d, "e.vcf.gz")
    tool("random_vcf.py", "--seed", 7, "--samples", 50, "--variants", 2000, "--contigs", 2,
         "--alt-dot", 0.05, "-o", vcf)
    store = os.path.join(d, "e.vcz")
    tool("vcf2vcz.py", vcf, store)
    assert tsv_counts(tool("ref_afdist.py", "bcftools", vcf).stdout) == \
        tsv_counts(tool("ref_afdist.py", "zarr", store).stdout)
    # regions and samples: all of chr1 is variants 0..999
    samples = "S0003,S0010,S0020,S0049"
    by_region = tool("ref_afdist.py", "bcftools", vcf, "-r", "chr1", "-s", samples, "--bins", 4).stdout
    by_range = tool("ref_afdist.py", "zarr", store, "--variant-range", "0:1000", "-s", samples,
                    "--num-bins", 4).stdout
    assert tsv_counts(by_region) == tsv_counts(by_range)
    assert by_region.decode().splitlines()[2] == "0.250000\t0.500000\t" + str(tsv_counts(by_region)[1])


def main():
    tests = [(k, v) for k, v in sorted(globals().items()) if k.startswith("test_") and callable(v)]
    passed = failed = skipped = 0
    for name, fn in tests:
        try:
            fn()
            passed += 1
            print(f"PASS {name}")
        except Skip as e:
            skipped += 1
            print(f"SKIP {name}: {e}")
        except Exception as e:  # report and go on
            failed += 1
            detail = e.stderr.decode()[-500:] if isinstance(e, subprocess.CalledProcessError) else ""
            print(f"FAIL {name}: {type(e).__name__}: {e} {detail}")
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
