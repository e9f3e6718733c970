"""Count filters (maf, geno, hwe, include/exclude of the counts) in Python run as the CLI runs
them (the library's Runner): decided inside the statistic's own pass for the statistics that
need only per-site counts (one read of the store), by a counting pass first for the others.
The CLI's filtered output is itself checked against stores that bcftools filtered
(tests/cli/filters_reference_test.cpp); here the kept sites are also found by brute force over
python3-zarr's genotypes, and the store's bytes read are counted by the kernel
(/proc/self/io)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import vczstats
from conftest import make_store, open_zarr
from test_cli_agreement import assert_same, cli_frame

FILTERS = {"maf": 0.05, "geno": 0.1, "hwe": 1e-4}
FLAGS = ["--maf", 0.05, "--geno", 0.1, "--hwe", 1e-4]


@pytest.fixture(scope="module")
def store(small_store):
    return vczstats.open(small_store)


@pytest.mark.parametrize("name,fn,options,args", [
    ("freq", vczstats.allele_frequencies, {}, []),
    ("hardy", vczstats.hardy_weinberg, {}, []),
    ("missing", vczstats.variant_missingness, {}, []),
    ("stats", vczstats.window_stats, {"statistics": ["pi", "theta_w", "tajima_d", "dxy",
                                                     "fst_hudson"], "windows": 700},
     ["--stats", "pi,theta_w,tajima_d,dxy,fst_hudson", "--window-size", 700]),
    ("stats", vczstats.window_stats, {"statistics": ["pi", "dxy"], "windows": (900, 400),
                                      "regions": "chr1:300-,chr2"},
     ["--stats", "pi,dxy", "--window-size", 900, "--window-step", 400, "-r", "chr1:300-,chr2"]),
    ("sfs", vczstats.sfs, {"joint": ("P0", "P2"), "folded": True}, ["--joint", "P0,P2",
                                                                     "--folded"]),
    ("fstats", vczstats.fstats, {"d": ("P0", "P1", "P2", "P0"), "blocks": 5},
     ["--d", "P0,P1,P2,P0", "--blocks", 5]),
    # not fused: a counting pass first, as the CLI
    ("sample-stats", vczstats.sample_stats, {}, []),
    ("afdist", vczstats.afdist, {"bins": 7}, ["--bins", 7]),
])
def test_filtered_runs_equal_the_cli(cli, store, small_pops, name, fn, options, args):
    pops, sets = small_pops
    kwargs = dict(options)
    statistics = kwargs.pop("statistics", None)
    positional = (statistics,) if statistics is not None else ()
    populations = {} if name == "afdist" else {"sample_sets": sets}
    pop_flags = [] if name == "afdist" else ["-P", pops]
    r = fn(store, *positional, filters=FILTERS, progress=False, threads=2, **populations,
           **kwargs)
    assert_same(r, cli_frame(cli, name, store.path, *pop_flags, *args, *FLAGS),
                {"chrom": "contig"} if name in ("freq", "hardy", "missing") else None)


def kept_by_brute_force(path, maf, geno):
    """(contig index, position) of the sites with MAF >= maf (1 - the most common allele's
    share of the called alleles) and missing genotypes / genotypes <= geno."""
    z = open_zarr(path)
    gt = z["call_genotype"][:].astype(np.int64)
    alleles = z["variant_allele"].shape[1]
    counts = np.stack([(gt == a).sum(axis=(1, 2)) for a in range(alleles)], axis=1)
    called = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        minor = (called - counts.max(axis=1)) / called
    missing = (gt < 0).any(axis=2).sum(axis=1) / gt.shape[1]
    keep = (called > 0) & (minor >= maf) & (missing <= geno)
    return list(zip(z["variant_contig"][:][keep].tolist(),
                    z["variant_position"][:][keep].tolist()))


def test_filtered_sites_are_those_of_a_brute_force_count(store, small_store):
    # Thresholds no site of 40 samples sits on (80 alleles x 0.13, 40 genotypes x 0.07).
    r = vczstats.allele_frequencies(store, filters={"maf": 0.13, "geno": 0.07}, progress=False)
    assert "applied in this pass" in r.run["note"]
    contigs = list(store.contigs)
    got = [(contigs.index(c), int(p)) for c, p in zip(r["contig"], r["pos"])]
    want = kept_by_brute_force(small_store, 0.13, 0.07)
    assert 0 < len(want) < store.num_variants
    assert got == want


def bytes_read(fn):
    """Bytes this process read through read/pread (the kernel's count, every thread) while fn
    ran."""
    def rchar():
        with open("/proc/self/io") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))
    before = rchar()
    fn()
    return rchar() - before


@pytest.fixture(scope="module")
def larger_store(tmp_path_factory):
    """Genotypes that outweigh the metadata read by every run, in 30 variant chunks of one
    contig (a directory store: read with pread, which /proc/self/io counts)."""
    return vczstats.open(make_store(tmp_path_factory.mktemp("larger"), "larger", samples=300,
                                    variants=3000, contigs=1, variants_chunk=100,
                                    samples_chunk=300, seed=11))


def genotype_bytes(store):
    """The stored bytes of call_genotype's chunks."""
    root = os.path.join(store.path, "call_genotype")
    return sum(os.path.getsize(os.path.join(root, f)) for f in os.listdir(root)
               if not f.startswith(".") and f != "zarr.json")


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux's /proc/self/io")
def test_fused_filters_read_the_store_once(larger_store):
    s = larger_store
    genotypes = genotype_bytes(s)
    for fn in (vczstats.allele_frequencies, vczstats.diversity):
        plain = bytes_read(lambda: fn(s, threads=2, progress=False))
        filtered = []
        filtered.append(bytes_read(lambda: filtered.append(
            fn(s, threads=2, filters=FILTERS, progress=False))))
        r, read = filtered
        assert "applied in this pass" in r.run["note"], r.run["note"]
        # One pass: the genotypes read once, as without filters, and only the chunks at either
        # end of the contig (2 of 30) counted first for the span of the kept sites, as the
        # CLI does. A counting pass first would read every genotype chunk twice.
        assert read - plain < 0.25 * genotypes, (fn.__name__, read, plain, genotypes)
    # A statistic that does not fuse them takes the counting pass first, as the CLI.
    plain = bytes_read(lambda: vczstats.sample_stats(s, threads=2, progress=False))
    read = bytes_read(lambda: vczstats.sample_stats(s, threads=2, filters=FILTERS,
                                                    progress=False))
    assert read - plain >= genotypes, (read, plain, genotypes)
