"""Small-store inputs of the PCA and LD-decay plots, computed with numpy over
:meth:`Store.materialize` (alternate-allele dosages in memory). They serve ``python -m vczstats
plot pca|ld STORE`` until the matrix family (GRM, PCA, LD on the library's packed genotypes)
lands in the library; for large stores use those, or plink2, and plot their tables."""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np


def _dosages(store: Any, regions: Any, samples: Any, max_variants: int, min_maf: float):
    """(dosage matrix variants × samples as float with NaN for missing, positions, contigs,
    sample names): diploid calls, sites with minor allele frequency >= min_maf, at most
    max_variants of them evenly spaced."""
    chunk = store.materialize(regions, samples)
    d = chunk.alt_dosage().astype(np.float64)
    d[d < 0] = np.nan
    with np.errstate(invalid="ignore"):
        p = np.nanmean(d, axis=1) / 2
    maf = np.minimum(p, 1 - p)
    keep = np.flatnonzero(np.isfinite(maf) & (maf >= min_maf) & (maf > 0))
    if len(keep) > max_variants:
        keep = keep[np.linspace(0, len(keep) - 1, max_variants).round().astype(np.int64)]
    return d[keep], chunk.positions[keep], chunk.contig[keep], chunk.samples


def pca(store: Any, *, regions: Any = None, samples: Any = None, components: int = 10,
        max_variants: int = 20_000, min_maf: float = 0.01) -> Tuple[np.ndarray, np.ndarray, list]:
    """Principal components of samples from standardised dosages (Patterson, Price & Reich
    2006: centred by 2p and divided by sqrt(2p(1-p)); missing dosages set to the mean).
    Returns (samples × components coordinates, explained variance fractions, sample names)."""
    d, _, _, names = _dosages(store, regions, samples, max_variants, min_maf)
    if d.shape[0] < 2:
        raise ValueError("pca: fewer than two sites pass the allele-frequency filter")
    p = np.nanmean(d, axis=1, keepdims=True) / 2
    z = (d - 2 * p) / np.sqrt(2 * p * (1 - p))
    z[np.isnan(z)] = 0.0
    u, s, _vt = np.linalg.svd(z.T, full_matrices=False)  # samples × variants
    k = min(components, len(s))
    var = s ** 2
    return u[:, :k] * s[:k], var[:k] / var.sum(), list(names)


def ld_pairs(store: Any, *, regions: Any = None, samples: Any = None,
             max_distance: int = 100_000, max_variants: int = 5_000,
             min_maf: float = 0.05) -> Tuple[np.ndarray, np.ndarray]:
    """r² (squared Pearson correlation of dosages, missing set to the site mean) of every pair of
    sites on one contig at most max_distance bp apart. Returns (distance, r2)."""
    d, pos, contig, _ = _dosages(store, regions, samples, max_variants, min_maf)
    mean = np.nanmean(d, axis=1, keepdims=True)
    d = np.where(np.isnan(d), mean, d) - mean
    norm = np.sqrt((d * d).sum(axis=1))
    ok = norm > 0
    d, pos, contig, norm = d[ok], pos[ok], contig[ok], norm[ok]
    z = d / norm[:, None]
    dist, r2 = [], []
    for c in np.unique(contig):  # positions increase within a contig
        zc, pc = z[contig == c], pos[contig == c]
        for i in range(len(zc)):
            j = np.searchsorted(pc, pc[i] + max_distance, side="right")
            if j > i + 1:
                r = zc[i + 1:j] @ zc[i]
                dist.append(pc[i + 1:j] - pc[i])
                r2.append(r * r)
    if not dist:
        return np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(dist), np.concatenate(r2)
