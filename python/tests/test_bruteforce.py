"""Statistics against numpy brute force written from the definitions (tests/tools/POPGEN.md),
over genotypes read by python3-zarr: loops over sites and populations, pairs of haplotypes
counted directly."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import vczstats
from conftest import open_zarr


@pytest.fixture(scope="module")
def data(small_store, small_pops):
    z = open_zarr(small_store)
    _, sets = small_pops
    names = list(z["sample_id"][:])
    members = {p: [names.index(s) for s in ss] for p, ss in sets.items()}
    alleles = z["variant_allele"][:]
    return {
        "gt": z["call_genotype"][:].astype(np.int64),
        "pos": z["variant_position"][:].astype(np.int64),
        "contig": z["variant_contig"][:].astype(np.int64),
        "contigs": list(z["contig_id"][:]),
        "n_alleles": np.array([sum(1 for a in row if a) for row in alleles]),
        "members": members,
        "sets": sets,
        "store": vczstats.open(small_store),
    }


def haplotypes(gt_site, members):
    """Called alleles of the members at one site (missing -1 and fill -2 left out)."""
    h = gt_site[members].ravel()
    return h[h >= 0]


def pi_of(h):
    n = len(h)
    if n < 2:
        return math.nan
    differing = sum(1 for a, b in itertools.combinations(h, 2) if a != b)
    return differing / (n * (n - 1) / 2)


def dxy_of(h1, h2):
    if len(h1) == 0 or len(h2) == 0:
        return math.nan
    return float((h1[:, None] != h2[None, :]).sum()) / (len(h1) * len(h2))


def test_allele_counts(data):
    r = vczstats.allele_frequencies(data["store"], sample_sets=data["sets"], progress=False)
    pops = list(data["sets"])
    assert len(r) == len(data["pos"]) * len(pops)
    alt_cts = r.column("alt_cts").lists()
    for i, (v, p) in enumerate(zip(r["variant"], r["population"])):
        h = haplotypes(data["gt"][v], data["members"][p])
        k = data["n_alleles"][v]
        assert r["obs_ct"][i] == len(h)
        assert list(alt_cts[i]) == [int((h == a).sum()) for a in range(1, max(k, 2))]
        assert r["pos"][i] == data["pos"][v]


def genotype_class(call):
    call = [a for a in call if a != -2]
    if any(a == -1 for a in call):
        return "missing"
    if all(a == 0 for a in call):
        return "hom_ref"
    if 0 in call:
        return "het_ref"
    return "hom_alt" if len(set(call)) == 1 else "het_alt"


def test_genotype_counts_and_missingness(data):
    g = vczstats.genotype_counts(data["store"], sample_sets=data["sets"], progress=False)
    m = vczstats.variant_missingness(data["store"], sample_sets=data["sets"], progress=False)
    for i, (v, p) in enumerate(zip(g["variant"], g["population"])):
        classes = [genotype_class(list(data["gt"][v, s])) for s in data["members"][p]]
        count = {c: classes.count(c) for c in ("hom_ref", "het_ref", "hom_alt", "het_alt",
                                                "missing")}
        assert g["hom_ref_ct"][i] == count["hom_ref"]
        assert g["het_ref_alt_ct"][i] == count["het_ref"]
        assert g["hom_alt_ct"][i] == count["hom_alt"]
        assert g["het_alt_ct"][i] == count["het_alt"]
        assert g["two_alt_geno_ct"][i] == count["hom_alt"] + count["het_alt"]
        assert g["missing_ct"][i] == count["missing"]
        assert m["missing_ct"][i] == count["missing"]
        assert m["obs_ct"][i] == len(classes)
        assert m["f_miss"][i] == pytest.approx(count["missing"] / len(classes))


def harmonic(n, power=1):
    return sum(1.0 / i ** power for i in range(1, n))


def tajima_d(n, S, pi_sum):
    if S == 0 or n < 2:
        return math.nan
    a1, a2 = harmonic(n), harmonic(n, 2)
    b1, b2 = (n + 1) / (3 * (n - 1)), 2 * (n * n + n + 3) / (9 * n * (n - 1))
    c1, c2 = b1 - 1 / a1, b2 - (n + 2) / (a1 * n) + a2 / a1 ** 2
    e1, e2 = c1 / a1, c2 / (a1 ** 2 + a2)
    return (pi_sum - S / a1) / math.sqrt(e1 * S + e2 * S * (S - 1))


def test_diversity_windows(data):
    size = 1000
    r = vczstats.diversity(data["store"], sample_sets=data["sets"], windows=size, progress=False)
    checked = 0
    for i in range(len(r)):
        c = data["contigs"].index(r["chrom"][i])
        start, end, p = r["start"][i], r["end"][i], r["population"][i]
        on_contig = data["pos"][data["contig"] == c]
        # scikit-allel's windows: from the contig's first site, the last one ends at its last
        assert (start - on_contig.min()) % size == 0
        if end == on_contig.max():
            assert start + size >= end and end - start + 1 <= size + 1
        else:
            assert end - start + 1 == size
        sites = np.flatnonzero((data["contig"] == c) & (data["pos"] >= start) &
                               (data["pos"] <= end))
        if len(sites) == 0:  # an empty window: counts 0, values NA
            assert r["n_sites"][i] == 0 and r["n_seg"][i] == 0
            assert math.isnan(r["pi_sum"][i]) and math.isnan(r["pi_per_bp"][i])
            continue
        hs = [haplotypes(data["gt"][v], data["members"][p]) for v in sites]
        pis = [pi_of(h) for h in hs]
        seg = [len(h) >= 2 and len(set(h.tolist())) >= 2 for h in hs]
        pi_sum = sum(x for x in pis if not math.isnan(x))
        S = sum(seg)
        theta = sum(1 / harmonic(len(h)) for h, s in zip(hs, seg) if s)
        n_max = max((len(h) for h in hs), default=0)
        assert r["n_sites"][i] == len(sites)
        assert r["n_seg"][i] == S
        assert r["n_max"][i] == n_max
        assert r["pi_sum"][i] == pytest.approx(pi_sum, rel=1e-9, abs=1e-12)
        assert r["pi_per_bp"][i] == pytest.approx(pi_sum / (end - start + 1), rel=1e-9,
                                                  abs=1e-15)
        assert r["theta_w"][i] == pytest.approx(theta, rel=1e-9, abs=1e-12)
        want = tajima_d(n_max, S, pi_sum)
        if math.isnan(want):
            assert math.isnan(r["tajima_d"][i])
        else:
            assert r["tajima_d"][i] == pytest.approx(want, rel=1e-9, abs=1e-12)
        checked += S > 0
    assert checked > 5


def test_diversity_per_bp_over_the_data(data):
    """Without windows, pi per bp divides by the span of the data (first to last site)."""
    r = vczstats.diversity(data["store"], sample_sets=data["sets"], progress=False)
    wide = vczstats.diversity(data["store"], sample_sets=data["sets"], progress=False,
                              windows=vczstats.Windows(span="contig"))
    for i in range(len(r)):
        c = data["contigs"].index(r["chrom"][i])
        sites = np.flatnonzero(data["contig"] == c)
        first, last = data["pos"][sites].min(), data["pos"][sites].max()
        assert (r["start"][i], r["end"][i]) == (first, last)
        pis = [pi_of(haplotypes(data["gt"][v], data["members"][r["population"][i]]))
               for v in sites]
        pi_sum = sum(x for x in pis if not math.isnan(x))
        assert r["pi_per_bp"][i] == pytest.approx(pi_sum / (last - first + 1), rel=1e-9)
        assert wide["start"][i] == 1 and wide["end"][i] >= last
        assert wide["pi_per_bp"][i] == pytest.approx(pi_sum / wide["end"][i], rel=1e-9)


def test_divergence_per_contig(data):
    r = vczstats.divergence(data["store"], sample_sets=data["sets"], progress=False)
    for i in range(len(r)):
        c = data["contigs"].index(r["chrom"][i])
        m1, m2 = data["members"][r["pop1"][i]], data["members"][r["pop2"][i]]
        dxy = num = den = 0.0
        for v in np.flatnonzero(data["contig"] == c):
            h1, h2 = haplotypes(data["gt"][v], m1), haplotypes(data["gt"][v], m2)
            d = dxy_of(h1, h2)
            if not math.isnan(d):
                dxy += d
            if len(h1) >= 2 and len(h2) >= 2:
                num += d - (pi_of(h1) + pi_of(h2)) / 2
                den += d
        assert r["dxy_sum"][i] == pytest.approx(dxy, rel=1e-9)
        assert r["hudson_fst"][i] == pytest.approx(num / den, rel=1e-9, abs=1e-12)
    ds = r.to_xarray()
    fst = ds.stat_Fst.sel(cohorts_0="P0", cohorts_1="P1").values
    assert np.array_equal(fst, ds.stat_Fst.sel(cohorts_0="P1", cohorts_1="P0").values)


def test_sfs_unfolded(data):
    r = vczstats.sfs(data["store"], sample_sets=data["sets"], progress=False)
    for p, members in data["members"].items():
        n = 2 * len(members)
        want = np.zeros(n + 1, dtype=np.int64)
        for v in range(len(data["pos"])):
            g = data["gt"][v][members]
            if data["n_alleles"][v] != 2 or (g < 0).any():
                continue
            want[int((g != 0).sum())] += 1
        rows = (r["population"] == p) & (r["n"] == n)
        got = np.zeros(n + 1, dtype=np.int64)
        got[r["derived"][rows]] = r["count"][rows]
        np.testing.assert_array_equal(got, want)
        assert want.sum() > 0


def test_afdist_zarr_definition(data):
    """The VCF Zarr publication's zarr_afdist, written out with numpy."""
    bins = 10
    r = vczstats.afdist(data["store"], bins=bins, method="zarr-afdist", progress=False)
    gt = data["gt"]
    ref_count = (gt == 0).sum(axis=(1, 2))
    n = gt.shape[1]
    af = 1 - ref_count / (2 * n)
    het = (gt[:, :, 0] != gt[:, :, 1]).sum(axis=1)
    hom_alt = ((gt[:, :, 0] == gt[:, :, 1]) & (gt[:, :, 0] != 0)).sum(axis=1)
    edges = np.linspace(0, 1, bins + 1)
    edges[-1] += 0.0125
    want = np.zeros(bins, dtype=np.int64)
    np.add.at(want, np.digitize(2 * af * (1 - af), edges) - 1, het)
    np.add.at(want, np.digitize(af * af, edges) - 1, hom_alt)
    np.testing.assert_array_equal(r["prob_dist"], want)


def test_sample_missingness(data):
    r = vczstats.sample_stats(data["store"], sample_sets=data["sets"], progress=False)
    names = list(data["store"].samples)
    for i, s in enumerate(r["sample"]):
        g = data["gt"][:, names.index(s)]
        assert r["missing_ct"][i] == int((g == -1).any(axis=1).sum())
        assert r["obs_ct"][i] == int((g != -2).any(axis=1).sum())
