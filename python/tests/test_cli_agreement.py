"""Every statistic function gives the numbers the CLI prints for the same store and options
(same column names, same values to the last printed digit, NA as NaN)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import vczstats
from conftest import run_cli


def cli_frame(cli, *args) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(run_cli(cli, *args)), sep="\t", comment="#", dtype=str,
                       keep_default_na=False)


def number(text: str) -> float:
    return float("nan") if text == "NA" else float(text)


def assert_same(result: vczstats.Result, cli: pd.DataFrame, rename=None):
    """Every CLI column equals the result's column of the same name (or rename[name])."""
    rename = rename or {}
    assert len(result) == len(cli), (len(result), len(cli))
    assert len(cli) > 0
    for name in cli.columns:
        ours = rename.get(name, name)
        assert ours in result, f"{ours} missing from {result.columns}"
        theirs = cli[name].tolist()
        kind = result.column(ours).kind if ours in result._columns else "text"
        if kind in ("label", "text"):
            assert [str(x) for x in result[ours]] == theirs, name
        elif kind in ("int_list", "float_list"):
            for row, text in zip(result.column(ours).lists(), theirs):
                want = [number(t) for t in text.split(",")] if text else []
                np.testing.assert_array_equal(row.astype(float), want, err_msg=name)
        else:
            want = np.array([number(t) for t in theirs])
            got = result[ours].astype(float)
            if result.column(ours).single_precision:
                got, want = got.astype(np.float32), want.astype(np.float32)
            np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.fixture(scope="module")
def store(small_store):
    return vczstats.open(small_store)


@pytest.mark.parametrize("method", ["bcftools", "zarr-afdist"])
def test_afdist(cli, store, method):
    r = vczstats.afdist(store, bins=7, method=method, threads=2, progress=False)
    assert_same(r, cli_frame(cli, "afdist", store.path, "--bins", 7, "--method", method))
    assert r["prob_dist"].sum() > 0


@pytest.mark.parametrize("kind,fn", [
    ("freq", vczstats.allele_frequencies), ("geno-counts", vczstats.genotype_counts),
    ("hardy", vczstats.hardy_weinberg), ("missing", vczstats.variant_missingness)])
def test_site_tables(cli, store, small_pops, kind, fn):
    pops, sets = small_pops
    r = fn(store, sample_sets=sets, regions="chr1:1-1500,chr2", progress=False)
    assert_same(r, cli_frame(cli, kind, store.path, "-P", pops, "-r", "chr1:1-1500,chr2"),
                {"chrom": "contig"})
    # the same populations given as a file, a {sample: population} mapping and a DataFrame
    for other in (str(pops), {s: p for p, names in sets.items() for s in names},
                  pd.read_csv(pops, sep="\t")):
        again = fn(store, sample_sets=other, regions="chr1:1-1500,chr2", progress=False)
        assert_same(again, cli_frame(cli, kind, store.path, "-P", pops, "-r", "chr1:1-1500,chr2"),
                    {"chrom": "contig"})


def test_sample_stats(cli, store, small_pops):
    pops, sets = small_pops
    r = vczstats.sample_stats(store, sample_sets=sets, progress=False)
    assert_same(r, cli_frame(cli, "sample-stats", store.path, "-P", pops))


@pytest.mark.parametrize("windows,args", [
    (None, []),
    (1500, ["--window-size", 1500]),
    ((2000, 700), ["--window-size", 2000, "--window-step", 700]),
    (vczstats.windows_by_variant(25), ["--window-variants", 25]),
])
def test_diversity(cli, store, small_pops, windows, args):
    pops, sets = small_pops
    r = vczstats.diversity(store, sample_sets=sets, windows=windows, progress=False)
    assert_same(r, cli_frame(cli, "diversity", store.path, "-P", pops, *args))
    assert r.windows.shape[1] == 3


def test_diversity_breakpoints(cli, store, tmp_path):
    """tskit-style breakpoints give the windows of the CLI's --windows-file."""
    bed = tmp_path / "w.tsv"
    bed.write_text("chr1\t1\t999\nchr1\t1000\t2499\nchr2\t5\t4000\n")  # CHROM BEG END, 1-based
    w = vczstats.windows_from_breakpoints({"chr1": [1, 1000, 2500], "chr2": [5, 4001]})
    r = vczstats.diversity(store, windows=w, samples=list(range(0, 40, 2)), progress=False)
    cli_df = cli_frame(cli, "diversity", store.path, "--windows-file", bed,
                       "-s", ",".join(store.samples[0:40:2]))
    assert_same(r, cli_df)
    assert list(r["start"]) == [1, 1000, 5]


def test_divergence(cli, store, small_pops):
    pops, sets = small_pops
    r = vczstats.divergence(store, sample_sets=sets, windows=2000, pairs=[("P0", "P2")],
                            progress=False)
    assert_same(r, cli_frame(cli, "divergence", store.path, "-P", pops, "--window-size", 2000,
                             "--pairs", "P0,P2"))
    r = vczstats.divergence(store, sample_sets=sets, regions="chr1:200-2000", progress=False)
    assert_same(r, cli_frame(cli, "divergence", store.path, "-P", pops, "-r", "chr1:200-2000"))


def test_window_stats(cli, store, small_pops):
    pops, sets = small_pops
    stats = ["pi", "theta_w", "tajima_d", "dxy", "fst_hudson", "pbs"]
    r = vczstats.window_stats(store, stats, sample_sets=sets, windows=3000,
                              pbs=("P1", "P0", "P2"), progress=False)
    assert_same(r, cli_frame(cli, "stats", store.path, "-P", pops, "--window-size", 3000,
                             "--stats", ",".join(stats), "--pbs", "P1,P0,P2"))
    assert set(vczstats.scan_statistics()) >= set(stats)


@pytest.mark.parametrize("options,args", [
    ({}, []), ({"folded": True, "scaled": True}, ["--folded", "--scaled"]),
    ({"joint": ("P0", "P1")}, ["--joint", "P0,P1"]),
    ({"joint": "P0,P2", "folded": True}, ["--joint", "P0,P2", "--folded"]),
    ({"project": 4, "folded": True}, ["--project", 4, "--folded"]),
    ({"project": {"P0": 3, "P2": 4}, "joint": ("P2", "P0")}, ["--project", "P0=3,P2=4",
                                                               "--joint", "P2,P0"]),
    ({"project": 4, "project_preview": True}, ["--project", 4, "--project-preview"]),
])
def test_sfs(cli, store, small_pops, options, args):
    pops, sets = small_pops
    r = vczstats.sfs(store, sample_sets=sets, progress=False, **options)
    assert_same(r, cli_frame(cli, "sfs", store.path, "-P", pops, *args))


@pytest.mark.parametrize("folded", [False, True])
def test_sfs_array_is_the_fs_file(cli, store, small_pops, folded):
    """sfs_array's values, mask and populations are those of `sfs --format fs`."""
    pops, sets = small_pops
    a, names = vczstats.sfs_array(store, project={"P1": 3, "P0": 4}, joint=("P1", "P0"),
                                  folded=folded, sample_sets=sets, progress=False)
    text = run_cli(cli, "sfs", store.path, "-P", pops, "--project", "P1=3,P0=4", "--joint",
                   "P1,P0", "--format", "fs", *(["--folded"] if folded else []))
    header, values, mask = [line for line in text.splitlines() if not line.startswith("#")]
    words = header.split()
    assert words[:3] == ["4", "5", "folded" if folded else "unfolded"]
    assert header.split('"')[1::2] == names == ["P1", "P0"]
    assert a.shape == (4, 5)
    np.testing.assert_allclose(a.data.ravel(), [float(v) for v in values.split()], rtol=1e-12)
    assert a.mask.ravel().astype(int).tolist() == [int(m) for m in mask.split()]


@pytest.mark.parametrize("options,args", [
    ({"f2": ("P0", "P1")}, ["--f2", "P0,P1"]),
    ({"f3": "P2,P0,P1", "blocks": 50}, ["--f3", "P2,P0,P1", "--blocks", 50]),
    ({"d": ("P0", "P1", "P2", "P0")}, ["--d", "P0,P1,P2,P0"]),
])
def test_fstats(cli, store, small_pops, options, args):
    pops, sets = small_pops
    r = vczstats.fstats(store, sample_sets=sets, progress=False, **options)
    assert_same(r, cli_frame(cli, "fstats", store.path, "-P", pops, *args))


def test_results_do_not_depend_on_threads_or_chunking(store, small_pops):
    _, sets = small_pops
    a = vczstats.diversity(store, sample_sets=sets, windows=1000, threads=1, progress=False)
    b = vczstats.diversity(store, sample_sets=sets, windows=1000, threads=3, prefetch=1,
                           max_unit_variants=7, progress=False)
    # The project's invariance rule: integers identical, floats within 1e-12 relative (sums are
    # exact within a work unit, and units differ here).
    for name in a.columns:
        x, y = np.asarray(a[name]), np.asarray(b[name])
        if x.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=0, equal_nan=True)
        else:
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("filters,args", [
    ({"maf": 0.05, "geno": 0.1}, ["--maf", 0.05, "--geno", 0.1]),
    ({"max_alleles": 2, "hwe": 1e-3, "hwe_midp": True},
     ["--max-alleles", 2, "--hwe", 1e-3, "--hwe-midp"]),
    ({"snps_only": True, "mac": 2}, ["--snps-only", "--mac", 2]),
    ({"include": 'TYPE="snp" && MAF>0.1'}, ["-i", 'TYPE="snp" && MAF>0.1']),
    ({"exclude": "AC<3 || N_ALT>1", "max_alleles": 3}, ["-e", "AC<3 || N_ALT>1",
                                                       "--max-alleles", 3])])
def test_site_filters(cli, store, small_pops, filters, args):
    pops, sets = small_pops
    r = vczstats.allele_frequencies(store, sample_sets=sets, filters=filters, progress=False)
    assert_same(r, cli_frame(cli, "freq", store.path, "-P", pops, *args), {"chrom": "contig"})
    d = vczstats.diversity(store, sample_sets=sets, windows=500, filters=filters, progress=False)
    assert_same(d, cli_frame(cli, "diversity", store.path, "-P", pops, "--window-size", 500,
                             *args))
    unfiltered = vczstats.allele_frequencies(store, sample_sets=sets, progress=False)
    assert 0 < len(r) < len(unfiltered)
    with pytest.raises(Exception, match="unknown filter"):
        vczstats.allele_frequencies(store, filters={"mf": 0.1}, progress=False)
    with pytest.raises(Exception, match="give one of them, not both"):
        vczstats.allele_frequencies(store, filters={"include": "AC>1", "exclude": "AC<1"},
                                    progress=False)
    with pytest.raises(Exception, match=r"-i 'AC>>1': position 4: unexpected '>'"):
        vczstats.allele_frequencies(store, filters={"include": "AC>>1"}, progress=False)
