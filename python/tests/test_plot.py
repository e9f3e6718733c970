"""Plots rendered headlessly (Agg): every function, from results and from the CLI's TSVs, and
`python -m vczstats plot`; images checked for size and for drawn content."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import vczstats  # noqa: E402
from vczstats import plot  # noqa: E402
from conftest import run_cli  # noqa: E402


def check_png(path, width, height, min_colored=0.01, min_colors=2):
    """The image has the asked size in pixels and something drawn in colour."""
    img = mpimg.imread(path)
    assert img.shape[0] == height and img.shape[1] == width, img.shape
    rgb = img[..., :3]
    colored = (rgb.max(axis=2) - rgb.min(axis=2)) > 0.15  # not white, grey or black
    assert colored.mean() > min_colored, colored.mean()
    colors = {tuple(c) for c in np.round(rgb[colored] * 8).astype(int)}
    assert len(colors) >= min_colors


def save(ax_or_fig, path, dpi=100):
    fig = getattr(ax_or_fig, "figure", ax_or_fig)
    fig.savefig(path, dpi=dpi)
    return fig


@pytest.fixture(scope="module")
def results(small_store, small_pops):
    _, sets = small_pops
    s = vczstats.open(small_store)
    return {
        "diversity": s.diversity(sample_sets=sets, windows=500, progress=False),
        "divergence": s.divergence(sample_sets=sets, windows=500, progress=False),
        "scan": s.window_stats(["pi", "fst_hudson"], sample_sets=sets, windows=500,
                               progress=False),
        "sfs": s.sfs(sample_sets=sets, progress=False),
        "afdist": s.afdist(progress=False),
        "store": s,
        "sets": sets,
    }


def test_sfs(results, tmp_path):
    fig = save(plot.sfs(results["sfs"]), tmp_path / "sfs.png")
    w, h = fig.get_size_inches() * 100
    check_png(tmp_path / "sfs.png", int(round(w)), int(round(h)), min_colors=3)  # 3 pops
    ax = plot.sfs(results["sfs"], normalize=True, log=True)
    assert ax.get_yscale() == "log" and len(ax.patches) > 10


def test_windows_lines_and_manhattan(results, tmp_path):
    ax = plot.windows(results["diversity"], "pi_per_bp")
    assert len(ax.lines) == 3  # one per population
    assert ax.get_xlabel() == "contig"  # two contigs laid end to end
    assert [t.get_text() for t in ax.get_xticklabels()] == ["chr1", "chr2"]
    ax = plot.windows(results["divergence"], "hudson_fst")
    assert len(ax.collections) == 3  # Manhattan points, one series per pair
    ax = plot.windows(results["scan"], "fst_hudson", style="line")
    assert len(ax.lines) == 3
    with pytest.raises(ValueError, match="not a column"):
        plot.windows(results["diversity"], "nope")
    fig = plot.tracks([(results["diversity"], "pi_per_bp"), (results["diversity"], "tajima_d"),
                       (results["divergence"], "hudson_fst")], figsize=(8, 6), title="scan")
    fig.savefig(tmp_path / "tracks.png", dpi=100)
    check_png(tmp_path / "tracks.png", 800, 600, min_colors=3)
    fig.savefig(tmp_path / "tracks.svg")
    root = ET.parse(tmp_path / "tracks.svg").getroot()
    assert sum(1 for e in root.iter() if e.tag.endswith("path")) > 50


def test_afdist_pca_ld(results, tmp_path):
    ax = plot.afdist(results["afdist"])
    assert len(ax.patches) == 10
    save(ax, tmp_path / "afdist.png")
    check_png(tmp_path / "afdist.png", 600, 400, min_colors=1)

    coords = np.random.default_rng(1).normal(size=(40, 3))
    pops = [f"P{i % 3}" for i in range(40)]
    ax = plot.pca(coords, pops, explained=[0.2, 0.1, 0.05])
    assert len(ax.collections) == 3 and ax.get_xlabel() == "PC1 (20.0%)"
    frame = pd.DataFrame({"PC1": coords[:, 0], "PC2": coords[:, 1], "population": pops})
    assert len(plot.pca(frame).collections) == 3

    d = np.arange(1, 5001, 10.0)
    ax = plot.ld_decay(d, np.exp(-d / 1000), bins=10)
    assert len(ax.lines) == 1
    x, y = ax.lines[0].get_data()
    assert np.all(np.diff(y) < 0)  # mean r² falls with distance
    plink = pd.DataFrame({"BP_A": np.zeros(500), "BP_B": d, "R2": np.exp(-d / 1000)})
    np.testing.assert_allclose(plot.ld_decay(plink, bins=10).lines[0].get_data()[1], y)
    # ld --decay's bins: one line per population, windows pooled by adding pairs and sums
    bins = pd.DataFrame({"pop": ["A", "A", "A", "A", "B", "B"],
                         "window_start": [1, 1, 1001, 1001, 1, 1],
                         "bin_start": [0, 100, 0, 100, 0, 100],
                         "bin_end": [100, 200, 100, 200, 100, 200],
                         "pairs": [2, 1, 2, 0, 4, 2], "sum_r2": [1.0, 0.2, 0.6, 0.0, 2.0, 0.3]})
    ax = plot.ld_decay(bins)
    assert [line.get_label() for line in ax.lines] == ["A", "B"]
    np.testing.assert_allclose(ax.lines[0].get_data()[0], [0.05, 0.15])
    np.testing.assert_allclose(ax.lines[0].get_data()[1], [0.4, 0.2])
    np.testing.assert_allclose(ax.lines[1].get_data()[1], [0.5, 0.15])


def run_module(*args):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "vczstats", *map(str, args)],
                          capture_output=True, text=True, env=env)


@pytest.mark.parametrize("kind,extra", [
    ("windows", ["--window-size", 500, "--stats", "pi_per_bp,tajima_d,hudson_fst"]),
    ("fst", ["--window-size", 1000]),
    ("sfs", ["--folded"]),
    ("afdist", ["--bins", 20]),
    ("pca", []),
    ("ld", ["-r", "chr1", "--max-distance", 500]),
])
def test_module_from_store(small_store, small_pops, tmp_path, kind, extra):
    pops, _ = small_pops
    out = tmp_path / f"{kind}.png"
    r = run_module("plot", kind, small_store, "-P", pops, "-o", out, "--width", 6,
                   "--height", 4, "--dpi", 50, "--no-progress", *extra)
    assert r.returncode == 0, r.stderr
    check_png(out, 300, 200, min_colored=0.001, min_colors=1)


def test_module_from_cli_tsv(cli, small_store, small_pops, tmp_path):
    pops, _ = small_pops
    for cmd, extra in (("diversity", ["--window-size", 700]),
                       ("divergence", ["--window-size", 700])):
        (tmp_path / f"{cmd}.tsv").write_text(run_cli(cli, cmd, small_store, "-P", pops, *extra))
    (tmp_path / "sfs.tsv").write_text(run_cli(cli, "sfs", small_store, "-P", pops))
    (tmp_path / "afdist.tsv").write_text(run_cli(cli, "afdist", small_store))
    svg = tmp_path / "scan.svg"
    r = run_module("plot", "windows", tmp_path / "diversity.tsv", tmp_path / "divergence.tsv",
                   "--stats", "pi_per_bp,hudson_fst", "-o", svg)
    assert r.returncode == 0, r.stderr
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg") and sum(1 for e in root.iter() if e.tag.endswith("path")) > 20
    for kind in ("sfs", "afdist"):
        out = tmp_path / f"{kind}.png"
        r = run_module("plot", kind, tmp_path / f"{kind}.tsv", "-o", out, "--dpi", 50)
        assert r.returncode == 0, r.stderr
        check_png(out, 350, 225, min_colored=0.005, min_colors=1)
    eigen = tmp_path / "pcs.eigenvec"
    pd.DataFrame({"#IID": [f"s{i}" for i in range(10)], "PC1": np.arange(10.0),
                  "PC2": np.arange(10.0) ** 2}).to_csv(eigen, sep="\t", index=False)
    r = run_module("plot", "pca", eigen, "-o", tmp_path / "pca.png")
    assert r.returncode == 0, r.stderr


def test_module_errors(small_store, tmp_path):
    r = run_module("plot", "windows", small_store, "--stats", "nope", "-o", tmp_path / "x.png",
                   "--no-progress")
    assert r.returncode != 0 and "nope" in r.stderr
    assert not (tmp_path / "x.png").exists()
    r = run_module("plot", "sfs", tmp_path / "absent.vcz", "-o", tmp_path / "x.png")
    assert r.returncode == 1 and "no such file" in r.stderr
    r = run_module("plot", "sfs", small_store, "-o", tmp_path / "x.gif")
    assert r.returncode == 2
