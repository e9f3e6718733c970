#!/usr/bin/env python3
"""Brute-force reference of vczstats' sample-by-sample matrices, written from the definitions
in POPGEN.md ("Sample-by-sample matrices") as loops over pairs of samples, reading the VCF text
(not a store). Outputs the whole square matrix (tab-separated, one row per sample, samples in
VCF order), the KING table, or PCA eigenvalues and eigenvectors.

  ref_matrix.py VCF grm [--cov] [--maf X]
  ref_matrix.py VCF king | king-table [--maf X]
  ref_matrix.py VCF distance --metric allele-ct|ibs|1-ibs [--flat-missing] [--maf X]
  ref_matrix.py VCF pca -k K [--maf X]      (eigenvalues line, then one row per sample)
"""

import argparse
import gzip
import math
import sys

import numpy as np

EPS = 2.0 ** -44
MISSING = -1


def genotypes(path, samples=None):
    """Per variant, per sample: the number of non-REF alleles of a diploid call with both alleles
    called, else MISSING (missing alleles, haploid or other ploidies)."""
    opener = gzip.open if path.endswith(".gz") else open
    names, rows = None, []
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith("##"):
                continue
            fields = line.rstrip("\n").split("\t")
            if line.startswith("#"):
                names = fields[9:]
                keep = list(range(len(names))) if samples is None else [names.index(s) for s in samples]
                names = [names[k] for k in keep]
                continue
            gts = [fields[9 + k].split(":")[0] for k in keep]
            row = []
            for gt in gts:
                alleles = gt.replace("|", "/").split("/")
                if len(alleles) != 2 or "." in alleles:
                    row.append(MISSING)
                else:
                    row.append(sum(1 for a in alleles if a != "0"))
            rows.append(row)
    return names, np.array(rows, dtype=np.int64).reshape(len(rows), len(names))


def alt_freq(g):
    called = g[g != MISSING]
    return called.sum() / (2.0 * len(called)) if len(called) else float("nan")


def kept(G, maf):
    out = []
    for row in G:
        f = alt_freq(row)
        if maf > 0:
            if math.isnan(f) or min(f, 1 - f) < maf * (1 - EPS):
                continue
        out.append(row)
    return np.array(out, dtype=np.int64).reshape(len(out), G.shape[1])


def grm(G, cov):
    m, n = G.shape
    X = np.zeros((m, n))
    for v in range(m):
        f = alt_freq(G[v])
        if math.isnan(f):
            continue
        for i in range(n):
            if G[v, i] == MISSING:
                continue
            if cov:
                X[v, i] = G[v, i] - 2 * f
            else:
                var = 2 * f * (1 - f)
                X[v, i] = (G[v, i] - 2 * f) / math.sqrt(var) if var > EPS else 0.0
    called = G != MISSING
    A = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            both = called[:, i] & called[:, j]
            A[i, j] = A[j, i] = (X[both, i] * X[both, j]).sum() / both.sum()
    return A


def king_counts(G, i, j):
    both = (G[:, i] != MISSING) & (G[:, j] != MISSING)
    a, b = G[both, i], G[both, j]
    hethet = int(((a == 1) & (b == 1)).sum())
    ibs0 = int((((a == 0) & (b == 2)) | ((a == 2) & (b == 0))).sum())
    het_i_hom_j = int(((a == 1) & (b != 1)).sum())
    hom_i_het_j = int(((a != 1) & (b == 1)).sum())
    return int(both.sum()), hethet, ibs0, het_i_hom_j, hom_i_het_j


def kinship(hethet, ibs0, h1, h2):
    smaller = hethet + min(h1, h2)
    num = 4.0 * ibs0 + h1 + h2
    if smaller == 0:
        return float("nan") if num == 0 else float("-inf")
    return 0.5 - num / (4.0 * smaller)


def king(G):
    n = G.shape[1]
    K = np.full((n, n), 0.5)
    for i in range(n):
        for j in range(i):
            _, hh, i0, h1, h2 = king_counts(G, i, j)
            K[i, j] = K[j, i] = kinship(hh, i0, h1, h2)
    return K


def distance(G, metric, flat):
    m, n = G.shape
    called = G != MISSING
    u = np.zeros(m)
    for v in range(m):
        f = alt_freq(G[v])
        # plink 1.9: f(1-f)(f^2-f+1), and 1 for a monomorphic variant
        u[v] = f * (1 - f) * (f * f - f + 1) if 0 < f < 1 else 1.0
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(i):
            both = called[:, i] & called[:, j]
            d = np.abs(G[both, i] - G[both, j]).sum()
            d = d * m / both.sum() if flat else d * u.sum() / u[both].sum()
            D[i, j] = D[j, i] = d
    if metric == "ibs":
        return 1 - D / (2.0 * m)
    if metric == "1-ibs":
        return D / (2.0 * m)
    return D


def write_matrix(A):
    for row in A:
        print("\t".join(repr(float(x)) for x in row))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("vcf")
    p.add_argument("stat", choices=["grm", "king", "king-table", "distance", "pca"])
    p.add_argument("--maf", type=float, default=0.0)
    p.add_argument("--cov", action="store_true")
    p.add_argument("--metric", default="allele-ct")
    p.add_argument("--flat-missing", action="store_true")
    p.add_argument("-k", type=int, default=4)
    p.add_argument("--samples", help="comma-separated subset, in VCF order")
    a = p.parse_args()
    names, G = genotypes(a.vcf, a.samples.split(",") if a.samples else None)
    G = kept(G, a.maf)
    if a.stat == "grm":
        write_matrix(grm(G, a.cov))
    elif a.stat == "king":
        write_matrix(king(G))
    elif a.stat == "king-table":
        print("sample1\tsample2\tnsnp\thethet\tibs0\tkinship")
        for i in range(len(names)):
            for j in range(i):
                nsnp, hh, i0, h1, h2 = king_counts(G, i, j)
                print(f"{names[i]}\t{names[j]}\t{nsnp}\t{hh / nsnp!r}\t{i0 / nsnp!r}\t{kinship(hh, i0, h1, h2)!r}")
    elif a.stat == "distance":
        write_matrix(distance(G, a.metric, a.flat_missing))
    else:
        values, vectors = np.linalg.eigh(grm(G, False))
        order = np.argsort(values)[::-1][: a.k]
        print("\t".join(repr(float(values[c])) for c in order))
        write_matrix(vectors[:, order])


if __name__ == "__main__":
    sys.exit(main())
