"""Every table the CLI writes is read by ``pandas.read_csv(path, sep="\\t")`` as it is: the
header is the first line, the columns are the header's names, numeric columns get numeric
dtypes; run metadata goes to ``--log`` (and ``-v``), not into the table. A population named
``NA`` stays the label "NA" through :func:`vczstats.read_table`."""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pandas as pd
import pytest

import vczstats
from conftest import TOOLS, TOOLS_PYTHON, run_cli


@pytest.fixture(scope="module")
def na_pops(small_store, tmp_path_factory):
    """Two populations, one of them called NA (as the 1000 Genomes super-population)."""
    import zarr

    names = list(zarr.open(str(small_store), mode="r")["sample_id"][:])
    path = tmp_path_factory.mktemp("napops") / "pops.tsv"
    with open(path, "w") as f:
        f.write("sample\tpopulation\n")
        for i, n in enumerate(names):
            f.write(f"{n}\t{'NA' if i % 2 else 'AF'}\n")
    return path


@pytest.fixture(scope="module")
def phased_store(tmp_path_factory):
    """40 samples, every call phased (the haplotype commands need phased calls)."""
    tmp = tmp_path_factory.mktemp("phased")
    vcf, out = tmp / "p.vcf", tmp / "p.vcz"
    subprocess.run([TOOLS_PYTHON, str(TOOLS / "random_vcf.py"), "--seed", "5", "--samples", "40",
                    "--variants", "600", "--contigs", "2", "--phased", "1", "-o", str(vcf)],
                   check=True)
    subprocess.run([TOOLS_PYTHON, str(TOOLS / "vcf2vcz.py"), str(vcf), str(out)], check=True,
                   capture_output=True)
    return out


def _number(text: str) -> bool:
    if text in ("NA", "inf", "-inf"):
        return True
    try:
        float(text)
        return True
    except ValueError:
        return False


def _commands(store, phased, pops):
    s, h = str(store), str(phased)
    p = ["-P", str(pops)]
    return {
        "afdist": ["afdist", s],
        "freq": ["freq", s, *p],
        "geno-counts": ["geno-counts", s, *p],
        "hardy": ["hardy", s, *p],
        "missing": ["missing", s, *p],
        "diversity": ["diversity", s, *p, "--window-size", "1000"],
        "divergence": ["divergence", s, *p, "--window-size", "2000"],
        "stats": ["stats", s, *p, "--window-size", "1500", "--stats", "pi,tajima_d,dxy"],
        "sfs": ["sfs", s, *p],
        "fstats": ["fstats", s, *p, "--f2", "AF,NA"],
        "sample-stats": ["sample-stats", s],
        "haplotypes": ["haplotypes", h, *p, "--window-size", "2000"],
        "ihs": ["ihs", h, *p, "--maf", "0"],
        "xpehh": ["xpehh", h, *p],
        "ld": ["ld", s, "-r", "chr1"],
        "prune": ["prune", s, "--indep-pairwise", "20", "5", "0.5"],
        "king --table": ["king", s, "--table"],
        "pca": ["pca", s, "-k", "3"],
    }


def test_every_table_reads_with_plain_read_csv(cli, small_store, phased_store, na_pops, tmp_path):
    checked = 0
    commands = _commands(small_store, phased_store, na_pops)
    for name, args in commands.items():
        out = tmp_path / (name.replace(" ", "_") + ".tsv")
        log = tmp_path / (name.replace(" ", "_") + ".log")
        r = subprocess.run([cli, *args, "-o", str(out), "--log", str(log), "--no-progress"],
                           capture_output=True, text=True)
        assert r.returncode == 0, (name, r.stderr)
        lines = out.read_text().splitlines()
        assert lines, name
        header = lines[0].split("\t")
        assert not lines[0].startswith("#"), (name, lines[0])
        assert all(h and h.strip() == h for h in header), (name, header)
        table = pd.read_csv(out, sep="\t")
        assert list(table.columns) == header, name
        assert len(table) == len(lines) - 1, name
        text = pd.read_csv(out, sep="\t", dtype=str, keep_default_na=False)
        for column in header:
            values = text[column].tolist()
            if values and all(_number(v) for v in values) and column != "population":
                assert pd.api.types.is_numeric_dtype(table[column]), (name, column,
                                                                      table[column].dtype)
        ours = vczstats.read_table(out)
        assert list(ours.columns) == header, name
        for column in ("population", "pop1", "pop2", "populations"):
            if column in ours.columns:
                assert ours[column].map(type).eq(str).all(), (name, column)
                assert not ours[column].isna().any(), (name, column)
        checked += 1
    assert checked == len(commands)


def test_pca_loadings_are_a_plain_table(cli, small_store, tmp_path):
    """--loadings writes a table (header first) and its eigenvalues beside it, which --project
    reads back."""
    wts, vec = tmp_path / "pcs.wts", tmp_path / "pcs.tsv"
    run_cli(cli, "pca", small_store, "-k", "3", "--loadings", wts, "-o", vec)
    table = pd.read_csv(wts, sep="\t")
    assert list(table.columns[:6]) == ["chrom", "pos", "id", "ref", "alt", "alt_freq"]
    assert list(table.columns[6:]) == ["pc1", "pc2", "pc3"]
    ev = pd.read_csv(str(wts) + ".eigenval", sep="\t")
    assert list(ev.columns) == ["pc", "eigenvalue"] and len(ev) == 3
    projected = tmp_path / "proj.tsv"
    run_cli(cli, "pca", small_store, "--project", wts, "-o", projected)
    assert len(pd.read_csv(projected, sep="\t")) == len(pd.read_csv(vec, sep="\t"))


def test_population_na_stays_a_label(cli, small_store, na_pops, tmp_path):
    out = tmp_path / "d.tsv"
    run_cli(cli, "diversity", small_store, "-P", na_pops, "--window-size", "2000", "-o", out)
    t = vczstats.read_table(out)
    assert set(t["population"]) == {"AF", "NA"}
    assert pd.api.types.is_numeric_dtype(t["pi_per_bp"])
    assert t["n_sites"].dtype.kind == "i"
    # Numeric NA is still missing: a window without sites (if any) or Tajima's D with S = 0.
    raw = pd.read_csv(out, sep="\t", dtype=str, keep_default_na=False)
    for column in ("pi_per_bp", "tajima_d"):
        na = (raw[column] == "NA").to_numpy()
        assert np.array_equal(np.isnan(t[column].to_numpy()), na), column
    # Divergence between AF and NA: both names stay labels.
    out = tmp_path / "f.tsv"
    run_cli(cli, "divergence", small_store, "-P", na_pops, "-o", out)
    f = vczstats.read_table(out)
    assert list(f["pop1"]) == ["AF", "AF"] and list(f["pop2"]) == ["NA", "NA"]
    assert not math.isnan(f["hudson_fst"][0])


def test_notes_go_to_log_and_verbose_not_the_table(cli, small_store, tmp_path):
    out, log = tmp_path / "d.tsv", tmp_path / "d.log"
    run_cli(cli, "diversity", small_store, "-o", out, "--log", log)
    assert out.read_text().startswith("chrom\tstart\tend\tpopulation\t")
    assert "windows: start and end are 1-based" in log.read_text()
    r = subprocess.run([cli, "diversity", str(small_store), "-v", "--no-progress"],
                       capture_output=True, text=True)
    assert r.returncode == 0
    assert r.stdout.startswith("chrom\t")
    assert "vczstats: note: windows:" in r.stderr
