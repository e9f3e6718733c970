"""The ld, matrix and haplotype families from Python give the numbers the CLI prints for the same
store and options; every statistic command of the CLI has a Python function with an explicit
signature; errors name the Python arguments."""

from __future__ import annotations

import inspect
import re
import subprocess

import numpy as np
import pytest

import vczstats
from conftest import make_store, run_cli
from test_cli_agreement import assert_same, cli_frame


@pytest.fixture(scope="module")
def store(small_store):
    return vczstats.open(small_store)


@pytest.fixture(scope="module")
def phased(tmp_path_factory):
    """30 diploid samples x 400 variants on 2 contigs, every call phased, none missing."""
    path = make_store(tmp_path_factory.mktemp("phased"), "phased", samples=30, variants=400,
                      missing=0.0, multiallelic=0.0, phased=1.0, seed=5)
    return vczstats.open(path)


@pytest.fixture(scope="module")
def phased_pops(phased, tmp_path_factory):
    names = [str(n) for n in phased.samples]
    sets = {"A": names[:14], "B": names[14:]}
    path = tmp_path_factory.mktemp("ppops") / "pops.tsv"
    path.write_text("".join(f"{n}\t{p}\n" for p, ns in sets.items() for n in ns))
    return path, sets


# ---- linkage ----------------------------------------------------------------------------------


@pytest.mark.parametrize("measure,flag", [("r2", "--r2"), ("dprime", "--dprime")])
def test_ld(cli, store, measure, flag):
    r = vczstats.ld(store, measure=measure, window_variants=15, window_bp=3000, min_r2=0.05,
                    progress=False)
    assert_same(r, cli_frame(cli, "ld", store.path, flag, "--ld-window", 15, "--ld-window-bp",
                             3000, "--ld-window-r2", 0.05))


def test_ld_hap_and_focal(cli, phased):
    r = vczstats.ld(phased, measure="hap", min_r2=0.0, regions="chr1", progress=False)
    assert_same(r, cli_frame(cli, "ld", phased.path, "--hap", "--ld-window-r2", 0, "-r", "chr1"))
    ids = [i for i in r["snp_a"] if i != "."][:2]
    f = vczstats.ld(phased, focal=ids, min_r2=0.0, progress=False)
    assert_same(f, cli_frame(cli, "ld", phased.path, "--ld-snps", ",".join(ids),
                             "--ld-window-r2", 0))
    assert set(ids) <= set(f["snp_a"]) | set(f["snp_b"])


def test_ld_decay_scores_and_stats(cli, store, phased):
    edges = [0, 500, 1000, 2000, 5000]
    d = vczstats.ld_decay(store, edges, progress=False)
    assert_same(d, cli_frame(cli, "ld", store.path, "--decay", ",".join(map(str, edges))))
    assert d["pairs"].sum() > 0
    assert vczstats.ld_decay(store, "0:5000:500", progress=False)["pairs"].sum() == \
        cli_frame(cli, "ld", store.path, "--decay", "0:5000:500")["pairs"].astype(int).sum()
    sc = vczstats.ld_scores(store, window_variants=5, progress=False)
    assert_same(sc, cli_frame(cli, "ld", store.path, "--ld-scores", "--ld-wind-snps", 5)
                .drop(columns=["id"]))
    st = vczstats.ld_stats(phased, edges, progress=False)
    want = cli_frame(cli, "ld-stats", phased.path, "--bp-bins", ",".join(map(str, edges)))
    assert st["stats"] == [["DD_0_0", "Dz_0_0_0", "pi2_0_0_0_0"], ["H_0_0"]]
    assert [b[0] for b in st["bins"]] == [int(x) for x in want["bin_start"]]
    for i, row in enumerate(want.itertuples()):
        np.testing.assert_allclose(
            st["sums"][i], [float(row.DD_0_0), float(row.Dz_0_0_0), float(row.pi2_0_0_0_0)],
            rtol=1e-12)
    np.testing.assert_allclose(st["sums"][-1], [float(want["H_0_0"].iloc[0])], rtol=1e-12)
    with pytest.raises(ValueError, match="bins"):
        vczstats.ld_decay(store, [10, 5])
    with pytest.raises(ValueError, match="exactly one"):
        vczstats.ld_scores(store)


@pytest.mark.parametrize("measure,flag", [("r2", "--r2"), ("hap", "--hap")])
def test_ld_decay_per_population_equals_the_cli(cli, phased, phased_pops, measure, flag):
    path, sets = phased_pops
    d = vczstats.ld_decay(phased, [0, 500, 2000], measure=measure, sample_sets=sets,
                          progress=False)
    want = cli_frame(cli, "ld", phased.path, "--decay", "0,500,2000", flag, "-P", path)
    assert list(want.columns)[0] == "pop" and set(want["pop"]) == {"A", "B"}
    assert_same(d, want)
    with pytest.raises(ValueError, match="once per population"):
        vczstats.ld_decay(phased, [0, 500], sample_sets=sets, filters={"maf": 0.1})


def test_ld_stats_of_two_populations_is_moments_layout_and_equals_the_cli(cli, phased,
                                                                        phased_pops, tmp_path):
    path, sets = phased_pops
    ordered = {"B": sets["B"], "A": sets["A"]}  # the indices follow the order given
    st = vczstats.ld_stats(phased, "0,500,2kb", sample_sets=ordered, progress=False)
    want = cli_frame(cli, "ld-stats", phased.path, "--bp-bins", "0,500,2kb", "-P", path,
                     "--pop", "B,A")
    names = list(want.columns[3:want.columns.get_loc("sites")])
    hets = list(want.columns[want.columns.get_loc("sites") + 1:])
    assert st["stats"] == [names, hets]
    assert names[:3] == ["DD_0_0", "DD_0_1", "DD_1_1"] and len(names) == 15
    assert hets == ["H_0_0", "H_0_1", "H_1_1"] and st["pops"] == ["B", "A"]
    assert [b for b in st["bins"]] == [(0, 500), (500, 2000)]
    assert list(st["pairs"]) == [int(x) for x in want["pairs"]]
    for i, row in enumerate(want.itertuples(index=False)):
        np.testing.assert_allclose(st["sums"][i], [float(getattr(row, n)) for n in names],
                                   rtol=1e-12)
    np.testing.assert_allclose(st["sums"][-1], [float(want[n].iloc[0]) for n in hets],
                               rtol=1e-12)
    assert vczstats._families._bin_edges("0:2kb:500", "x") == [0, 500, 1000, 1500, 2000]
    # bins of recombination distance on a plink .map, as the CLI's --r-bins --map
    gmap = tmp_path / "g.map"
    with open(gmap, "w") as f:
        for contig in sorted({str(c) for c in phased.contigs}):
            for k in range(200):
                f.write(f"{contig}\tm{k}\t{k * 0.01 + (k % 7) * 0.001}\t{1 + k * 500}\n")
    rb = vczstats.ld_stats(phased, r_bins=[0, 1e-5, 1e-4], genetic_map=gmap, sample_sets=ordered,
                           progress=False)
    want = cli_frame(cli, "ld-stats", phased.path, "--r-bins", "0,1e-5,1e-4", "--map", gmap,
                     "-P", path, "--pop", "B,A")
    assert rb["bins"] == [(0.0, 1e-5), (1e-5, 1e-4)]
    assert list(rb["pairs"]) == [int(x) for x in want["pairs"]] and sum(rb["pairs"]) > 0
    np.testing.assert_allclose(rb["sums"][0], [float(want[n].iloc[0]) for n in names],
                               rtol=1e-12)
    with pytest.raises(ValueError, match="genetic_map"):
        vczstats.ld_stats(phased, r_bins=[0, 1e-5])
    # unphased genotypes (--genotypes), one and two populations
    for sets, pop in ((None, []), (ordered, ["-P", path, "--pop", "B,A"])):
        gt = vczstats.ld_stats(phased, "0,500,2kb", genotypes=True, sample_sets=sets,
                               progress=False)
        want = cli_frame(cli, "ld-stats", phased.path, "--bp-bins", "0,500,2kb", "--genotypes",
                         *pop)
        names = list(want.columns[3:want.columns.get_loc("sites")])
        assert gt["stats"][0] == names and sum(gt["pairs"]) > 0
        assert list(gt["pairs"]) == [int(x) for x in want["pairs"]]
        for i, row in enumerate(want.itertuples(index=False)):
            np.testing.assert_allclose(gt["sums"][i], [float(getattr(row, n)) for n in names],
                                       rtol=1e-12)


def test_site_filters_reach_the_ld_and_matrix_families(cli, store):
    f = {"max_alleles": 2, "mac": 3, "geno": 0.2}
    flags = ["--max-alleles", 2, "--mac", 3, "--geno", 0.2]
    r = vczstats.ld(store, min_r2=0.0, filters=f, progress=False)
    assert_same(r, cli_frame(cli, "ld", store.path, "--ld-window-r2", 0, *flags))
    assert len(r) < len(vczstats.ld(store, min_r2=0.0, progress=False))
    d = vczstats.ld_decay(store, [0, 1000, 3000], filters=f, progress=False)
    assert_same(d, cli_frame(cli, "ld", store.path, "--decay", "0,1000,3000", *flags))


def test_prune(cli, store, tmp_path):
    r = vczstats.prune(store, window=20, step=3, r2=0.1, progress=False)
    assert_same(r, cli_frame(cli, "prune", store.path, "--indep-pairwise", 20, 3, 0.1))
    assert 0 < r["kept"].sum() < len(r)
    kept = vczstats.prune(store, window=20, step=3, r2=0.1, kept_only=True, progress=False)
    run_cli(cli, "prune", store.path, "--indep-pairwise", 20, 3, 0.1, "--out", tmp_path / "p")
    assert list(kept) == (tmp_path / "p.prune.in").read_text().split()
    kb = vczstats.prune(store, window=2, window_kb=True, step=1, r2=0.1, progress=False)
    assert_same(kb, cli_frame(cli, "prune", store.path, "--indep-pairwise", 2, "kb", 1, 0.1))


# ---- matrices ---------------------------------------------------------------------------------


def cli_matrix(cli, tmp_path, *args):
    out = tmp_path / "m.txt"
    run_cli(cli, *args, "--shape", "square", "-o", out)
    ids = (tmp_path / "m.txt.id").read_text().split()[1:]
    return np.loadtxt(out, ndmin=2), ids


@pytest.mark.parametrize("name,kwargs,flags", [
    ("grm", {}, []), ("grm", {"cov": True, "maf": 0.05}, ["--cov", "--maf", 0.05]),
    ("king", {}, []), ("distance", {}, []),
    ("distance", {"metric": "ibs"}, ["--metric", "ibs"]),
    ("distance", {"metric": "1-ibs", "flat_missing": True},
     ["--metric", "1-ibs", "--flat-missing"]),
])
def test_matrices(cli, store, tmp_path, name, kwargs, flags):
    m = getattr(vczstats, name)(store, samples=list(store.samples[3:30]), regions="chr1",
                                progress=False, **kwargs)
    want, ids = cli_matrix(cli, tmp_path, name, store.path, "-s", ",".join(store.samples[3:30]),
                           "-r", "chr1", *flags)
    assert list(m.samples) == ids
    np.testing.assert_array_equal(m.values, want)
    df = m.to_pandas()
    assert list(df.index) == ids and df.shape == (27, 27)


def test_matrix_extract(cli, store, tmp_path):
    keep = vczstats.prune(store, r2=0.2, kept_only=True, progress=False)
    keep = [k for k in keep if k != "."]
    (tmp_path / "keep.txt").write_text("\n".join(keep) + "\n")
    m = vczstats.grm(store, extract=keep, progress=False)
    want, _ = cli_matrix(cli, tmp_path, "grm", store.path, "--extract", tmp_path / "keep.txt")
    np.testing.assert_array_equal(m.values, want)


def test_matrix_extract_after_count_filters(cli, store, tmp_path):
    """As the CLI: the count filters first, then the ID list (an error when the filters keep
    none of its variants)."""
    freq = vczstats.allele_frequencies(store, progress=False)
    rare = [i for i, ct in zip(freq["id"], freq.column("alt_cts").lists())
            if i != "." and len(ct) == 1 and 0 < ct[0] < 3]
    common = [i for i, ct in zip(freq["id"], freq.column("alt_cts").lists())
              if i != "." and len(ct) == 1 and ct[0] >= 10]
    assert rare and common
    (tmp_path / "rare.txt").write_text("\n".join(rare) + "\n")
    with pytest.raises(ValueError, match="none of its .* variant IDs is among the selected"):
        vczstats.grm(store, extract=rare, filters={"mac": 5}, progress=False)
    with pytest.raises(AssertionError, match="none of its .* variant IDs is among the selected"):
        run_cli(cli, "grm", store.path, "--extract", tmp_path / "rare.txt", "--mac", 5)
    m = vczstats.grm(store, extract=rare + common, filters={"mac": 5}, progress=False)
    (tmp_path / "both.txt").write_text("\n".join(rare + common) + "\n")
    want, _ = cli_matrix(cli, tmp_path, "grm", store.path, "--extract", tmp_path / "both.txt",
                         "--mac", 5)
    np.testing.assert_array_equal(m.values, want)


def test_king_table(cli, store):
    r = vczstats.king(store, table=True, min_kinship=-0.1, progress=False)
    assert_same(r, cli_frame(cli, "king", store.path, "--table", "--table-filter", -0.1))


def test_pca(cli, store, tmp_path):
    p = vczstats.pca(store, components=4, loadings=True, progress=False)
    vec = tmp_path / "x.eigenvec"
    run_cli(cli, "pca", store.path, "-k", 4, "-o", vec, "--eigenvalues", tmp_path / "x.eigenval",
            "--loadings", tmp_path / "x.load")
    assert_same(p.vectors, cli_frame(cli, "pca", store.path, "-k", 4))
    vals = cli_frame(cli, "pca", store.path, "-k", 4, "--eigenvalues", "/dev/stdout", "-o",
                     tmp_path / "again")
    np.testing.assert_array_equal(p.eigenvalues,
                                  np.loadtxt(tmp_path / "x.eigenval", skiprows=1, usecols=1))
    assert len(vals) > 0
    assert_same(p.loadings, cli_frame(cli, "pca", store.path, "-k", 4, "--loadings",
                                      "/dev/stdout", "-o", tmp_path / "again2"))
    assert p.projection.shape == (len(store.samples), 4)
    pytest.importorskip("xarray")
    ds = p.to_xarray()
    assert ds["sample_pca_projection"].dims == ("samples", "components")
    np.testing.assert_array_equal(ds["sample_pca_explained_variance"], p.eigenvalues)
    assert ds["sample_pca_loading"].shape == (len(p.loadings), 4)


def test_pca_approx_and_matrix_xarray(cli, store):
    p = vczstats.pca(store, components=3, method="approx", seed=7, maf=0.05, progress=False)
    assert p.method == "approx"
    assert_same(p.vectors, cli_frame(cli, "pca", store.path, "-k", 3, "--approx", "--seed", 7,
                                     "--maf", 0.05))
    pytest.importorskip("xarray")
    k = vczstats.king(store, progress=False).to_xarray()
    assert k["stat_king_kinship"].dims == ("samples_0", "samples_1")
    assert list(k["sample_id_0"].values) == [str(s) for s in store.samples]
    np.testing.assert_array_equal(np.diag(k["stat_king_kinship"]), 0.5)


# ---- haplotypes and selection scans -----------------------------------------------------------


def test_haplotypes(cli, phased, phased_pops):
    path, sets = phased_pops
    r = vczstats.haplotypes(phased, sample_sets=sets, windows=800, progress=False)
    assert_same(r, cli_frame(cli, "haplotypes", phased.path, "-P", path, "--window-size", 800))


def test_ehh(cli, phased, phased_pops):
    path, sets = phased_pops
    pos = int(vczstats.prune(phased, r2=1.0, regions="chr1", progress=False)["pos"][40])
    r = vczstats.ehh(phased, f"chr1:{pos}", window=300, maf=0.01, sample_sets=sets,
                     progress=False)
    assert_same(r, cli_frame(cli, "ehh", phased.path, "-P", path, "--focal", f"chr1:{pos}",
                             "--ehh-window", 300, "--maf", 0.01))
    again = vczstats.ehh(phased, [("chr1", pos)], window=300, maf=0.01, sample_sets=sets,
                         progress=False)
    np.testing.assert_array_equal(again["ehh"], r["ehh"])


SCAN_OPTIONS = {
    "ihs": ({"maf": 0.01, "bins": 10, "min_bin_sites": 2},
            ["--maf", 0.01, "--bins", 10, "--min-bin-sites", 2]),
    "nsl": ({"maf": 0.01, "bins": 10, "min_bin_sites": 2, "max_extend_nsl": 50},
            ["--maf", 0.01, "--bins", 10, "--min-bin-sites", 2, "--max-extend-nsl", 50]),
    "xpehh": ({"min_bin_sites": 2, "pairs": [("B", "A")]},
              ["--min-bin-sites", 2, "--pairs", "B,A"]),
    "xpnsl": ({"min_bin_sites": 2, "cutoff": 0.1}, ["--min-bin-sites", 2, "--cutoff", 0.1]),
}


@pytest.mark.parametrize("name", list(SCAN_OPTIONS))
def test_selection_scans(cli, phased, phased_pops, tmp_path, name):
    path, sets = phased_pops
    kwargs, flags = SCAN_OPTIONS[name]
    r = getattr(vczstats, name)(phased, sample_sets=sets, windows=1000, progress=False,
                                **kwargs)
    summary = tmp_path / "w.tsv"
    assert_same(r, cli_frame(cli, name, phased.path, "-P", path, *flags, "--window-size", 1000,
                             "--windows-output", summary))
    assert np.isfinite(r[[c for c in r.columns if c.endswith("_std")][0]]).any()
    want = cli_frame(cli, name, phased.path, "-P", path, *flags, "--window-size", 1000,
                     "--windows-output", "/dev/stdout", "-o", tmp_path / "sites.tsv")
    # the CLI wrote the sites to a file and the windows to stdout
    assert_same(r.summary, want[want.columns[:len(r.summary.columns)]])


# ---- every CLI statistic has a Python function -----------------------------------------------

#: The CLI's commands that are not statistics.
NOT_STATISTICS = {"info", "convert", "simulate", "recompress"}
#: CLI command -> Python function, where the names differ.
PYTHON_NAME = {"freq": "allele_frequencies", "geno-counts": "genotype_counts",
               "hardy": "hardy_weinberg", "missing": "variant_missingness",
               "sample-stats": "sample_stats", "stats": "window_stats", "ld-stats": "ld_stats"}


def cli_commands(cli):
    text = subprocess.run([cli, "--help"], capture_output=True, text=True, check=True).stdout
    # command lines of the help: two spaces, the name, two spaces or more, its summary
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z0-9-]*)\s{2,}\S", text, re.M)]


def test_every_statistic_has_a_python_function(cli):
    commands = cli_commands(cli)
    assert "diversity" in commands and "pca" in commands and "info" in commands
    missing, loose = [], []
    for command in commands:
        if command in NOT_STATISTICS:
            continue
        fn = getattr(vczstats, PYTHON_NAME.get(command, command), None)
        if fn is None:
            missing.append(command)
            continue
        params = inspect.signature(fn).parameters.values()
        if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params):
            loose.append(command)
        # the Store method too, with the same keywords
        method = getattr(vczstats.Store, fn.__name__, None)
        assert method is not None, f"Store.{fn.__name__} is missing"
    assert not missing, f"CLI statistics without a Python function: {missing}"
    assert not loose, f"Python functions with **kwargs: {loose}"


def test_store_method_signature(store):
    sig = inspect.signature(store.pca)
    assert "components" in sig.parameters and "store" not in sig.parameters
    assert "windows" in inspect.signature(store.diversity).parameters


# ---- errors in Python terms -------------------------------------------------------------------


def test_errors_name_python_arguments(store):
    with pytest.raises(TypeError, match=r"diversity\(\) got an unexpected keyword.*sample_set"):
        vczstats.diversity(store, sample_set={"A": ["S0000"]})
    with pytest.raises(TypeError, match="unexpected keyword"):
        vczstats.grm(store, mafs=0.1)
    with pytest.raises(ValueError, match=r"^samples: 'nobody' is not a sample.*force_samples"):
        vczstats.grm(store, samples=["S0000", "nobody"], progress=False)
    with pytest.raises(ValueError, match=r"^sample_sets\['A'\]: 'nobody'"):
        vczstats.diversity(store, sample_sets={"A": ["S0000", "nobody"]}, progress=False)
    sets = {"A": list(store.samples[:10]), "B": list(store.samples[10:20])}
    with pytest.raises(ValueError, match=r"^pairs: population 'C' is not among the sample_sets"):
        vczstats.divergence(store, sample_sets=sets, pairs=[("A", "C")], progress=False)
    with pytest.raises(ValueError, match=r"^pairs: population 'C' is not among the sample_sets"):
        vczstats.xpehh(store, sample_sets=sets, pairs=[("A", "C")], progress=False)
    with pytest.raises(ValueError, match=r"give sample_sets"):
        vczstats.divergence(store, progress=False)
    with pytest.raises(ValueError, match="measure must be"):
        vczstats.ld(store, measure="r3")
    for fn in (vczstats.diversity, vczstats.grm, vczstats.ld, vczstats.haplotypes):
        try:
            fn(store, samples=["nobody"], progress=False)
        except ValueError as e:
            assert "--" not in str(e), str(e)


# ---- plots of the CLI's pca and ld tables and of the Python results ---------------------------


def test_plot_cli_pca_and_ld_tables(cli, store, small_pops, tmp_path):
    """``python -m vczstats plot pca|ld`` reads the tables ``vczstats pca|ld -o`` write (pc1..,
    bp_a/bp_b/r2), and the plot functions take the Python results."""
    from test_plot import check_png, run_module, save

    pops, _ = small_pops
    run_cli(cli, "pca", store.path, "-k", 3, "-o", tmp_path / "pcs.eigenvec")
    run_cli(cli, "ld", store.path, "--ld-window-r2", 0, "-o", tmp_path / "pairs.ld")
    for kind, table, extra in (("pca", "pcs.eigenvec", ["-P", pops]),
                               ("ld", "pairs.ld", ["--max-distance", 500])):
        out = tmp_path / f"{kind}.png"
        r = run_module("plot", kind, tmp_path / table, "-o", out, "--width", 6, "--height", 4,
                       "--dpi", 50, *extra)
        assert r.returncode == 0, r.stderr
        check_png(out, 300, 200, min_colored=0.001, min_colors=1)
    from vczstats import plot

    p = vczstats.pca(store, components=3, progress=False)
    ax = plot.pca(p, [str(s)[-1] for s in p.samples])
    assert len(ax.collections) == 10  # one series per population (the samples' last digit)
    np.testing.assert_array_equal(ax.collections[0].get_offsets()[0], p.projection[0, :2])
    save(ax, tmp_path / "pca-python.png", dpi=50)
    check_png(tmp_path / "pca-python.png", 300, 250, min_colored=0.001, min_colors=2)
    pairs = vczstats.ld(store, min_r2=0.0, progress=False)
    ax = plot.ld_decay(pairs, max_distance=500, bins=5)
    assert len(ax.lines) == 1 and len(ax.collections[0].get_offsets()) > 10


def test_fstats_takes_population_tuples(cli, store, small_pops):
    """f2=[("A", "B")] (as divergence's pairs) is the statistic f2="A,B"; several at once are
    refused naming the argument."""
    pops, sets = small_pops
    want = cli_frame(cli, "fstats", store.path, "-P", pops, "--f2", "P0,P1")
    for f2 in ([("P0", "P1")], ("P0", "P1"), "P0,P1"):
        assert_same(vczstats.fstats(store, sample_sets=sets, f2=f2, progress=False), want)
    with pytest.raises(ValueError, match="^f2: one statistic per call"):
        vczstats.fstats(store, sample_sets=sets, f2=[("P0", "P1"), ("P0", "P2")])
    with pytest.raises(ValueError, match=r"^f2: population 'P9' is not among the sample_sets"):
        vczstats.fstats(store, sample_sets=sets, f2=("P0", "P9"), progress=False)
