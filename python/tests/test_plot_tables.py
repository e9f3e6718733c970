"""Every table the CLI writes that has a picture, plotted by `python -m vczstats plot` from the
CLI's own file, and every Python result plotted by `vczstats.plot` (issue 32). The figures are
checked for their series (and the Python ones as PNGs with something drawn): the SVG that
matplotlib writes keeps one group per artist (`line2d_N`, `PathCollection_N`, `patch_N`,
`image_N`) under the axes' group, so the lines, point series, bar colours and images of the
plot are counted there and compared with the populations (or pairs, focal sites) the table
holds, counted from the table itself."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import vczstats  # noqa: E402
from vczstats import plot  # noqa: E402
from conftest import make_store, run_cli  # noqa: E402
from test_plot import check_png  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


def svg_series(path, axes="axes_1"):
    """Counter of the artists drawn in one axes of a matplotlib SVG: 'line' (Line2D),
    'points' (scatter PathCollection), 'image', and 'bars:<fill>' per bar colour."""
    root = ET.parse(path).getroot()
    group = next((g for g in root.iter(f"{SVG}g") if g.get("id") == axes), None)
    assert group is not None, f"{path}: no {axes}"
    found: Counter = Counter()
    for child in group:
        gid = child.get("id", "")
        if gid.startswith("line2d"):
            found["line"] += 1
        elif gid.startswith("PathCollection"):
            found["points"] += 1
        elif gid.startswith("LineCollection"):
            found["errorbars"] += 1
        elif child.tag == f"{SVG}image" or (not gid and child.find(f".//{SVG}image")
                                              is not None):  # an image in its clip group
            found["image"] += 1
        elif gid.startswith("patch"):
            p = child.find(f"{SVG}path")
            style = "" if p is None else p.get("style", "")
            fill = next((s.split(":", 1)[1].strip() for s in style.split(";")
                         if s.strip().startswith("fill:")), "")
            if fill and fill not in ("#ffffff", "none"):
                found[f"bars:{fill}"] += 1
    return found


def bar_colours(found: Counter) -> int:
    return sum(1 for k in found if k.startswith("bars:"))


@pytest.fixture(scope="module")
def phased(tmp_path_factory):
    """30 diploid samples x 400 variants on 2 contigs, every call phased, none missing; two
    populations."""
    path = make_store(tmp_path_factory.mktemp("phased"), "phased", samples=30, variants=400,
                      missing=0.0, multiallelic=0.0, phased=1.0, seed=5)
    names = [str(n) for n in vczstats.open(path).samples]
    sets = {"A": names[:14], "B": names[14:]}
    pops = tmp_path_factory.mktemp("ppops") / "pops.tsv"
    pops.write_text("".join(f"{n}\t{p}\n" for p, ns in sets.items() for n in ns))
    return path, pops, sets


def run_plot(*args):
    env = dict(os.environ, MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, "-m", "vczstats", "plot", *map(str, args)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r


def focal_site(cli, path):
    """A site of chr1 in the middle of the phased store (from the CLI's own freq table)."""
    freq = pd.read_csv(pd.io.common.StringIO(run_cli(cli, "freq", path, "-r", "chr1")),
                       sep="\t")
    return f"chr1:{int(freq['pos'].iloc[len(freq) // 2])}"


SCAN_FLAGS = {"ihs": ["--maf", 0.01, "--bins", 10, "--min-bin-sites", 2],
              "nsl": ["--maf", 0.01, "--bins", 10, "--min-bin-sites", 2,
                      "--max-extend-nsl", 50],
              "xpehh": ["--min-bin-sites", 2, "--pairs", "B,A"],
              "xpnsl": ["--min-bin-sites", 2, "--pairs", "A,B"]}


def tables(cli, small_store, small_pops, phased, tmp):
    """(name, file, plot arguments, expected series) of every plotted table type; each file is
    written by the CLI, the expected counts read from the file itself."""
    pops, _ = small_pops
    ppath, ppops, _ = phased
    out = []

    def write(name, *args, store=small_store):
        path = tmp / f"{name}.tsv"
        run_cli(cli, args[0], store, *args[1:], "-o", path)
        return path, pd.read_csv(path, sep="\t", keep_default_na=False)

    # windowed tracks: a line per population, a Manhattan series per pair
    path, t = write("diversity", "diversity", "-P", pops, "--window-size", 700)
    out.append(("diversity", path, ["windows", "--stats", "pi_per_bp"],
                {"line": t["population"].nunique()}))
    path, t = write("divergence", "divergence", "-P", pops, "--window-size", 700)
    pairs = len(t[["pop1", "pop2"]].drop_duplicates())
    out.append(("divergence", path, ["fst"], {"points": pairs}))
    path, t = write("stats", "stats", "-P", pops, "--stats", "pi,fst_hudson",
                    "--window-size", 700)
    out.append(("stats", path, ["windows", "--stats", "pi"],
                {"line": t.loc[t["statistic"] == "pi", "populations"].nunique()}))
    # per-site tables drawn at their sites, a line per population
    for command, stat in (("hardy", "f"), ("missing", "f_miss"), ("geno-counts", "missing_ct"),
                          ("freq", "obs_ct")):
        name = command.replace("-", "_")
        path, t = write(name, command, "-P", pops)
        out.append((name, path, ["windows", "--stats", stat],
                    {"line": t["population"].nunique()}))
    # per sample: a strip of points per population; f-statistics: one set of error bars
    path, t = write("sample_stats", "sample-stats", "-P", pops)
    out.append(("sample_stats", path, ["samples", "--stats", "f"],
                {"points": t["population"].nunique()}))
    path, t = write("fstats", "fstats", "-P", pops, "--f3", "P0,P1,P2", "--blocks", 50)
    out.append(("fstats", path, ["fstats"], {"errorbars": 1}))
    # spectra: bars of one colour per population; the joint spectrum as an image
    path, t = write("sfs", "sfs", "-P", pops)
    out.append(("sfs", path, ["sfs"], {"bars": t["population"].nunique()}))
    path, t = write("sfs_joint", "sfs", "-P", pops, "--joint", "P0,P2")
    out.append(("sfs_joint", path, ["sfs"], {"image": 1}))
    path, t = write("afdist", "afdist")
    out.append(("afdist", path, ["afdist"], {"bars": 1}))
    # PCA: a point series per population of the populations file
    path, t = write("pca", "pca", "-k", 3)
    labels = pd.read_csv(pops, sep="\t")
    out.append(("pca", path, ["pca", "-P", pops],
                {"points": labels.loc[labels["sample"].isin(t["sample"]), "population"]
                 .nunique()}))
    # LD: the pairs as points and their binned mean; the bins of --decay as one line
    path, t = write("ld", "ld", "-r", "chr1", "--ld-window-r2", 0)
    out.append(("ld", path, ["ld"], {"points": 1, "line": 1}))
    path, t = write("ld_decay", "ld", "--decay", "0:2000:200")
    out.append(("ld_decay", path, ["ld"], {"line": t["pop"].nunique() if "pop" in t else 1}))
    # moments.LD statistics: a line per population
    path, t = write("ld_stats", "ld-stats", "-P", ppops, "--bp-bins", "0,500,1000,2000",
                    store=ppath)
    out.append(("ld_stats", path, ["ld-stats"],
                {"line": sum(1 for c in t.columns if c.startswith("DD_")
                             and len(set(c.split("_")[1:])) == 1)}))
    # kinship: the KING pairs as points; the matrix (square, with its .id) as an image
    path, t = write("king", "king", "--table")
    out.append(("king", path, ["king"], {"points": 1}))
    square = tmp / "king.square"
    run_cli(cli, "king", small_store, "--shape", "square", "-o", square)
    out.append(("king_matrix", square, ["kinship", "-P", pops], {"image": 1}))
    square = tmp / "grm.square"
    run_cli(cli, "grm", small_store, "--shape", "square", "-o", square)
    out.append(("grm_matrix", square, ["kinship"], {"image": 1}))
    square = tmp / "distance.square"
    run_cli(cli, "distance", small_store, "--shape", "square", "-o", square)
    out.append(("distance_matrix", square, ["matrix"], {"image": 1}))
    # haplotype family, on the phased store
    path, t = write("haplotypes", "haplotypes", "-P", ppops, "--window-size", 800,
                    store=ppath)
    out.append(("haplotypes", path, ["h12"], {"line": t["population"].nunique()}))
    path, t = write("ehh", "ehh", "-P", ppops, "--focal", focal_site(cli, ppath),
                    "--ehh-window", 300, "--maf", 0.01, store=ppath)
    groups = len(t[["chrom", "focal_pos", "population"]].drop_duplicates())
    # derived and ancestral per focal site and population, and the line at the focal site
    out.append(("ehh", path, ["ehh"], {"line": 2 * groups + 1}))
    for name, flags in SCAN_FLAGS.items():
        path, t = write(name, name, "-P", ppops, *flags, store=ppath)
        if "population" in t.columns:
            series, thresholds = t["population"].nunique(), 1  # |score| above the threshold
        else:
            series, thresholds = len(t[["pop1", "pop2"]].drop_duplicates()), 2  # +/- threshold
        out.append((name, path, [name], {"points": series, "line": thresholds}))
    return out


def test_every_cli_table_plots(cli, small_store, small_pops, phased, tmp_path):
    checked = []
    for name, path, args, want in tables(cli, small_store, small_pops, phased, tmp_path):
        svg = tmp_path / f"{name}.svg"
        run_plot(args[0], path, *args[1:], "-o", svg)
        found = svg_series(svg)
        got = {k: (bar_colours(found) if k == "bars" else found[k]) for k in want}
        assert got == want, f"{name}: {dict(found)}"
        assert all(v > 0 for v in want.values()), f"{name}: nothing expected ({want})"
        checked.append(name)
    assert len(checked) == 26, checked


def test_image_formats(cli, small_store, small_pops, tmp_path):
    pops, _ = small_pops
    table = tmp_path / "d.tsv"
    run_cli(cli, "diversity", small_store, "-P", pops, "--window-size", 700, "-o", table)
    magic = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF", ".jpg": b"\xff\xd8\xff",
             ".jpeg": b"\xff\xd8\xff"}
    for ext, head in magic.items():
        out = tmp_path / f"d{ext}"
        run_plot("windows", table, "--stats", "tajima_d", "-o", out)
        assert out.read_bytes()[:len(head)] == head, ext


def test_plot_errors_name_the_problem(cli, small_store, tmp_path):
    table = tmp_path / "afdist.tsv"
    run_cli(cli, "afdist", small_store, "-o", table)
    env = dict(os.environ, MPLBACKEND="Agg")
    for kind, want in (("ihs", "ihs_std"), ("king", "kinship"), ("ehh", "focal_pos"),
                       ("windows", "genome coordinates")):
        out = tmp_path / "x.png"
        extra = ["--stats", "prob_dist"] if kind == "windows" else []
        r = subprocess.run([sys.executable, "-m", "vczstats", "plot", kind, str(table), "-o",
                            str(out), *extra], capture_output=True, text=True, env=env)
        assert r.returncode == 2 and want in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert not out.exists()


# ---- every Python result, plotted by vczstats.plot ------------------------------------------------


def test_every_python_result_plots(small_store, small_pops, phased, tmp_path):
    _, sets = small_pops
    ppath, _, psets = phased
    s = vczstats.open(small_store)
    p = vczstats.open(ppath)
    k = len(sets)
    kp = len(psets)
    figures = []

    def keep(ax):
        figures.append(ax.figure)
        return ax

    ax = keep(plot.windows(s.diversity(sample_sets=sets, windows=700, progress=False),
                           "pi_per_bp"))
    assert len(ax.lines) == k
    ax = keep(plot.windows(s.divergence(sample_sets=sets, windows=700, progress=False),
                           "hudson_fst"))
    assert len(ax.collections) == k * (k - 1) // 2
    ax = keep(plot.windows(s.window_stats(["pi"], sample_sets=sets, windows=700,
                                          progress=False), "pi"))
    assert len(ax.lines) == k
    ax = keep(plot.windows(s.hardy_weinberg(sample_sets=sets, progress=False), "f"))
    assert len(ax.lines) == k
    ax = keep(plot.sfs(s.sfs(sample_sets=sets, progress=False)))
    assert len({tuple(b.get_facecolor()) for b in ax.patches}) == k
    ax = keep(plot.sfs(s.sfs(sample_sets=sets, project=10, progress=False)))
    assert len({tuple(b.get_facecolor()) for b in ax.patches}) == k
    ax = keep(plot.sfs(s.sfs(sample_sets=sets, joint=("P0", "P1"), progress=False)))
    assert len(ax.images) == 1
    assert ax.images[0].get_array().shape == (len(sets["P1"]) * 2 + 1, len(sets["P0"]) * 2 + 1)
    ax = keep(plot.afdist(s.afdist(progress=False)))
    assert len(ax.patches) == 10
    pca = s.pca(components=3, progress=False)
    labels = [next(n for n, m in sets.items() if str(x) in m) for x in pca.samples]
    ax = keep(plot.pca(pca, labels, explained=pca.eigenvalues / pca.eigenvalues.sum()))
    assert len(ax.collections) == k and ax.get_xlabel().startswith("PC1 (")
    ax = keep(plot.ld_decay(s.ld(regions="chr1", min_r2=0.0, progress=False)))
    assert len(ax.collections) == 1 and len(ax.lines) == 1
    ax = keep(plot.ld_decay(s.ld_decay("0:2000:200", progress=False)))
    assert len(ax.lines) == 1
    ax = keep(plot.king(s.king(table=True, progress=False)))
    assert len(ax.collections) == 1
    n = len(s.samples)
    ax = keep(plot.matrix(s.king(progress=False), populations=[
        next(p_ for p_, m in sets.items() if str(x) in m) for x in s.samples]))
    assert ax.images[0].get_array().shape == (n, n) and len(ax.get_xticks()) == k
    ax = keep(plot.matrix(s.grm(progress=False)))
    assert ax.images[0].get_array().shape == (n, n)
    ax = keep(plot.matrix(s.distance(progress=False)))
    assert ax.images[0].get_array().shape == (n, n)
    ax = keep(plot.sample_stats(s.sample_stats(sample_sets=sets, progress=False), "f"))
    assert len(ax.collections) == k
    assert sum(len(c.get_offsets()) for c in ax.collections) == n
    f = s.fstats(sample_sets=sets, f3="P0,P1,P2", blocks=50, progress=False)
    ax = keep(plot.fstats(f))
    assert len(ax.get_yticks()) == len(f["estimate"]) == 1
    assert len(ax.collections) == 1  # the error bars
    two = dict(list(psets.items())[:2])
    ax = keep(plot.ld_stats(vczstats.ld_stats(p, [0, 500, 1000, 2000], sample_sets=two,
                                              progress=False)))
    assert len(ax.lines) == len(two)
    ax = keep(plot.garud_h(p.haplotypes(sample_sets=psets, windows=800, progress=False)))
    assert len(ax.lines) == kp
    freq = p.allele_frequencies(regions="chr1", progress=False)
    focal = ("chr1", int(freq["pos"][len(freq) // 2]))
    ax = keep(plot.ehh(p.ehh([focal], window=300, maf=0.01, sample_sets=psets,
                             progress=False)))
    assert len(ax.lines) == 2 * kp + 1
    for name in SCAN_FLAGS:
        kwargs = {"ihs": dict(maf=0.01, bins=10, min_bin_sites=2),
                  "nsl": dict(maf=0.01, bins=10, min_bin_sites=2, max_extend_nsl=50),
                  "xpehh": dict(min_bin_sites=2, pairs=[("B", "A")]),
                  "xpnsl": dict(min_bin_sites=2, pairs=[("A", "B")])}[name]
        r = getattr(p, name)(sample_sets=psets, progress=False, **kwargs)
        ax = keep(plot.selection_scan(r, threshold=2.0))
        series = kp if name in ("ihs", "nsl") else 1
        assert len(ax.collections) == series, name
        assert len(ax.lines) == (1 if name in ("ihs", "nsl") else 2), name
        offsets = np.concatenate([c.get_offsets()[:, 1] for c in ax.collections])
        std = r[f"{name}_std"]
        assert len(offsets) == int(np.isfinite(std).sum()) > 0, name
    for i, fig in enumerate(figures):
        fig.savefig(tmp_path / f"f{i}.png", dpi=50)
        w, h = fig.get_size_inches() * 50
        check_png(tmp_path / f"f{i}.png", int(round(w)), int(round(h)), min_colored=0.002,
                  min_colors=1)
    assert len(figures) == 24


@pytest.mark.parametrize("kind,extra,phased_store", [
    ("ihs", [], True), ("nsl", [], True), ("xpehh", ["--pairs", "A,B"], True),
    ("xpnsl", [], True), ("h12", ["--window-size", 800], True),
    ("ehh", ["--focal", None, "--max-distance", 300], True), ("king", [], False),
    ("kinship", [], False),
])
def test_new_kinds_from_a_store(cli, small_store, small_pops, phased, tmp_path, kind, extra,
                                phased_store):
    """The kinds computed from a store by the library (the CLI's numbers) draw their series."""
    store, pops = (phased[0], phased[1]) if phased_store else (small_store, small_pops[0])
    extra = [focal_site(cli, store) if v is None else v for v in extra]
    svg = tmp_path / f"{kind}.svg"
    run_plot(kind, store, "-P", pops, "--no-progress", *extra, "-o", svg)
    found = svg_series(svg)
    want = {"ihs": "points", "nsl": "points", "xpehh": "points", "xpnsl": "points",
            "h12": "line", "ehh": "line", "king": "points", "kinship": "image"}[kind]
    assert found[want] > 0, dict(found)
