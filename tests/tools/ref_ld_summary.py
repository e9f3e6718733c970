#!/usr/bin/python3
"""Brute-force reference of vczstats' LD summaries (docs/ld-decay.md), from the definitions,
reading a VCF as text (no numpy, no zarr, so it is independent of vczstats' readers):

  ref_ld_summary.py vcf OUT.vcf [--seed S] [--samples N] [--variants M] [--contigs C]
                    [--missing F] [--multiallelic F] [--phased]
      random VCF with LD: each contig's haplotypes are mosaics of a few founders (a switch
      between founders every ~200 bp on average), with new mutations; IDs v0, v1, ...;
      positions with gaps of 1-60 bp (and repeats); a fraction of alleles missing ('.').
  ref_ld_summary.py msvcf MS OUT.vcf --length L
      the first replicate of ms/scrm output as a phased diploid VCF (haplotypes 2i, 2i + 1 are
      sample s<i>; position ceil(x L), raised to one past the previous one when it repeats).
  ref_ld_summary.py decay VCF --bins E0,E1,... [--hap] [--ld-window N] [--window-size W]
      ld --decay: per distance bin [Ek, Ek+1) pairs, sum_r2, mean_r2 (TSV as vczstats prints).
  ref_ld_summary.py ldstats VCF (--bins E0,E1,... | --r-bins R0,R1,... --map FILE)
                    [--pops FILE [--pop-names A,B,...]] [--genotypes]
      ld-stats: per bin pairs, DD_0_0, Dz_0_0_0, pi2_0_0_0_0, sites, H_0_0 (see below); with
      --pops (lines "sample<TAB>population"), the populations named (default: all, in order of
      first appearance) and moments.LD's basis of that many populations; --r-bins: bins of
      r = |cM_b - cM_a| / 100 on a plink .map (interpolated as for ldscore).
  ref_ld_summary.py genotype-factors N00,N01,...,N22
      one population's ld-stats --genotypes factors of one genotype table (D, D(1-2p), ...,
      and the products of A, a, B, b frequencies g1..g15), a name and value a line.
  ref_ld_summary.py ldscore VCF (--wind-kb K | --wind-snps N | --wind-cm W --map FILE) [--hap]
      ld --ld-scores: per variant chrom pos id pairs l2.

r2 (default) is plink 1.9 --r2's: the squared correlation of the non-REF allele counts (0, 1,
2) over the samples with both genotypes complete (diploid, no missing allele); --hap: over the
haplotypes (allele slots) called at both, of the non-REF indicator (vcftools --hap-r2). A pair
counts when its r2 is defined (both counts vary). LD score: 1 + sum over the other variants of
the window (same contig, |pos difference| <= K * 1000 bp, at most N variants away, or
|cM difference| <= W on a plink .map interpolated linearly and extrapolated with the rate of its
first or last interval) of
r2 - (1 - r2) / (n - 2), pairs with n <= 2 left out; NaN for a variant whose allele counts do
not vary among its own calls.

ld-stats, from the definitions (Ragsdale & Gravel 2019, 2020), not from moments' closed forms:
with f1..f4 the frequencies of the haplotypes AB, Ab, aB, ab (A: REF at the first site, B: REF
at the second), D = f1 f4 - f2 f3, p = f1 + f2, q = f1 + f3, and 1 written as f1 + f2 + f3 + f4,
D^2, D (1 - 2p)(1 - 2q) and p (1 - p) q (1 - q) are homogeneous polynomials of degree 4 in the
f's; each monomial f1^k1 f2^k2 f3^k3 f4^k4 has the unbiased estimator (c1)_k1 (c2)_k2 (c3)_k3
(c4)_k4 / (n)_(k1+k2+k3+k4) from the counts c (falling factorials: sampling k haplotypes without
replacement). Sums are exact fractions. Sites: called at every haplotype (phased diploid) and
polymorphic; H = sum of 2 c_A c_a / (n (n - 1)).

Several populations: the frequencies f_{i,1..4} of each population i are variables of their own,
D_i = f_{i,1} f_{i,4} - f_{i,2} f_{i,3}, p_i = f_{i,1} + f_{i,2}, q_i = f_{i,1} + f_{i,3}, and
  DD_i_j = D_i D_j,  Dz_i_j_k = D_i (1 - 2 p_j)(1 - 2 q_k),
  pi2_i_j_k_l = 1/4 (p_i (1 - p_j) + p_j (1 - p_i)) (q_k (1 - q_l) + q_l (1 - q_k)),
  H_i_j = p_i (1 - p_j) + p_j (1 - p_i) (one site; f_{i,A}, f_{i,a}),
with moments.LD's names and order (DD_i_j, i <= j; Dz_i_j_k, j <= k; pi2_i_j_k_l, i <= j, k <= l,
(i, j) <= (k, l); H_i_j, i <= j). The samples of different populations are independent, so a
monomial's unbiased estimator is the product over the populations of each one's falling-factorial
estimator (a constant is its own). Sites: called at every haplotype of the populations and
polymorphic among them all.

--genotypes (unphased diploid genotypes, Ragsdale & Gravel 2020): per population the frequencies
g_xy of the samples with x non-REF alleles at the first site and y at the second (x, y in 0..2;
a sample counts at a pair when it has both genotypes, diploid, no missing allele), and
  D_i = (1/2) (sum_xy x y g_xy - (sum_xy x g_xy)(sum_xy y g_xy))   (half the dosage covariance),
  p_i = sum_xy (1 - x/2) g_xy,  q_i = sum_xy (1 - y/2) g_xy  (REF frequencies),
1 written as sum_xy g_xy; the same statistics of these, each monomial of the g's estimated by
(n_1)_k1 ... (n_9)_k9 / (n)_(k1+...+k9) from the pair's counts in that population. Sites:
polymorphic among the called alleles of all the populations and called at a sample of each; a
pair counts when every population has at least four samples called at both. H as above from
each population's called alleles (two a sample).
"""

import argparse
import bisect
import math
from fractions import Fraction
import random
import sys


def make_vcf(args):
    rng = random.Random(args.seed)
    n_hap = 2 * args.samples
    with open(args.out, "w") as out:
        out.write("##fileformat=VCFv4.2\n")
        for c in range(args.contigs):
            out.write(f"##contig=<ID={c + 1},length=100000000>\n")
        out.write('##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n')
        out.write("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t")
        out.write("\t".join(f"s{i}" for i in range(args.samples)) + "\n")
        index = 0
        per_contig = args.variants // args.contigs
        for c in range(args.contigs):
            founders = 6
            # founder of each haplotype, switched along the contig
            of = [rng.randrange(founders) for _ in range(n_hap)]
            alleles = [[rng.random() < 0.3 for _ in range(founders)] for _ in range(per_contig)]
            pos = 1000
            for v in range(per_contig):
                gap = rng.choice([0, 1, 2, 5, 10, 20, 30, 40, 60])
                pos += gap if v else 0
                for h in range(n_hap):
                    if rng.random() < gap / 200.0:
                        of[h] = rng.randrange(founders)
                multi = rng.random() < args.multiallelic
                nalt = 2 if multi else 1
                calls = []
                for s in range(args.samples):
                    gt = []
                    for h in (2 * s, 2 * s + 1):
                        a = 1 if alleles[v][of[h]] else 0
                        if rng.random() < 0.02:  # a new mutation
                            a = 1 - a
                        if a and multi and rng.random() < 0.5:
                            a = 2
                        gt.append("." if rng.random() < args.missing else str(a))
                    calls.append(("|" if args.phased else "/").join(gt))
                alt = "C,G" if multi else "C"
                out.write(f"{c + 1}\t{pos}\tv{index}\tA\t{alt}\t.\tPASS\t.\tGT\t")
                out.write("\t".join(calls) + "\n")
                index += 1


def ms_vcf(args):
    """The first replicate of ms output as a phased VCF (see the usage)."""
    with open(args.ms) as f:
        lines = [l.strip() for l in f]
    at = next(i for i, l in enumerate(lines) if l.startswith("segsites:"))
    sites = int(lines[at].split()[1])
    xs = [float(x) for x in lines[at + 1].split()[1:]]
    haps = []
    for l in lines[at + 2:]:
        if not l or l.startswith("//"):
            break
        haps.append(l)
    assert len(xs) == sites and len(haps) % 2 == 0
    with open(args.out, "w") as out:
        out.write("##fileformat=VCFv4.2\n##contig=<ID=1,length=%d>\n" % (args.length + sites))
        out.write('##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n')
        out.write("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t" +
                  "\t".join(f"s{i}" for i in range(len(haps) // 2)) + "\n")
        last = 0
        for k, x in enumerate(xs):
            pos = max(math.ceil(x * args.length), last + 1)
            last = pos
            gts = [f"{haps[2 * i][k]}|{haps[2 * i + 1][k]}" for i in range(len(haps) // 2)]
            out.write(f"1\t{pos}\tv{k}\tA\tT\t.\t.\t.\tGT\t" + "\t".join(gts) + "\n")


def read_samples(path):
    """The sample names of a VCF's #CHROM line."""
    with open(path) as f:
        for line in f:
            if line.startswith("#CHROM"):
                return line.rstrip("\n").split("\t")[9:]
    return []


def read_vcf(path):
    """Rows (chrom, pos, id, calls): calls a list per sample of allele lists (None: missing)."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            calls = []
            for c in fields[9:]:
                gt = c.split(":")[0].replace("|", "/").split("/")
                calls.append([None if a == "." else int(a) for a in gt])
            rows.append((fields[0], int(fields[1]), fields[2], calls))
    return rows


def values(row, hap):
    """Per unit (sample, or allele slot with --hap): the non-REF value, or None."""
    out = []
    for gt in row[3]:
        if hap:
            out.extend(None if a is None else int(a > 0) for a in gt)
        else:
            ok = len(gt) == 2 and None not in gt
            out.append(sum(int(a > 0) for a in gt) if ok else None)
    return out


def r2(x, y):
    """(n, r2) over the units with both values; r2 None when undefined."""
    n = sx = sy = sxx = syy = sxy = 0
    for a, b in zip(x, y):
        if a is None or b is None:
            continue
        n += 1
        sx += a
        sy += b
        sxx += a * a
        syy += b * b
        sxy += a * b
    vx = n * sxx - sx * sx
    vy = n * syy - sy * sy
    if vx == 0 or vy == 0:
        return n, None
    c = n * sxy - sx * sy
    return n, (c * c) / (vx * vy)  # exact integers, then one division


def decay(args):
    rows = read_vcf(args.vcf)
    edges = [int(e) for e in args.bins.split(",")]
    vals = [values(r, args.hap) for r in rows]
    groups = {}
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            if rows[j][0] != rows[i][0] or j - i > args.ld_window - 1:
                break
            d = rows[j][1] - rows[i][1]
            if d >= edges[-1]:
                break
            if d < edges[0]:
                continue
            _, v = r2(vals[i], vals[j])
            if v is None:
                continue
            k = bisect.bisect_right(edges, d) - 1
            w = args.window_size
            key = (rows[i][0], (rows[i][1] - 1) // w) if w else ("", 0)
            g = groups.setdefault(key, [[0, []] for _ in edges[:-1]])
            g[k][0] += 1
            g[k][1].append(v)
    w = args.window_size
    print(("chrom\twindow_start\twindow_end\t" if w else "")
          + "bin_start\tbin_end\tpairs\tsum_r2\tmean_r2")
    for key in sorted(groups):
        for k, (count, terms) in enumerate(groups[key]):
            s = math.fsum(terms)
            mean = repr(s / count) if count else "NA"
            lead = f"{key[0]}\t{key[1] * w + 1}\t{(key[1] + 1) * w}\t" if w else ""
            print(f"{lead}{edges[k]}\t{edges[k + 1]}\t{count}\t{s!r}\t{mean}")


def read_map(path):
    """chrom -> [(bp, cM)] of a plink .map (chrom, id, cM, bp)."""
    points = {}
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            chrom, _, cm, bp = line.split()
            points.setdefault(chrom, []).append((int(bp), float(cm)))
    return points


def genetic_position(points, pos):
    """Linear between the map's positions, the first or last interval's rate outside them."""
    k = bisect.bisect_right([p for p, _ in points], pos)
    k = min(max(k, 1), len(points) - 1)
    (x0, g0), (x1, g1) = points[k - 1], points[k]
    return g0 + (pos - x0) * (g1 - g0) / (x1 - x0)


def poly_mul(x, y):
    out = {}
    for kx, cx in x.items():
        for ky, cy in y.items():
            k = tuple(a + b for a, b in zip(kx, ky))
            out[k] = out.get(k, 0) + cx * cy
    return out


def poly_add(*terms):
    out = {}
    for sign, t in terms:
        for k, c in t.items():
            out[k] = out.get(k, 0) + sign * c
    return out


def falling(x, k):
    r = 1
    for i in range(k):
        r *= x - i
    return r


def integer_form(poly):
    """A polynomial as (scale, [(exponents, integer coefficient)]): its coefficients times scale,
    the least common multiple of their denominators (unbiased() divides once at the end)."""
    scale = math.lcm(*(Fraction(c).denominator for c in poly.values()))
    return scale, [(k, int(Fraction(c) * scale)) for k, c in poly.items()]


_sparse = {}  # unbiased()'s terms by the identity of a form's term list (kept alive here)


def unbiased(form, counts, width=4):
    """The unbiased estimator of a polynomial (integer_form()) in the haplotype frequencies:
    variables in groups of @p width per population (counts in the same order), each population
    sampled apart. A monomial's estimator is the product over the populations of
    (c_1)_k1 ... (c_w)_kw / (n)_(k1+...+kw); the numerators of the monomials with the same
    degrees per population are added as integers before their one division."""
    scale, terms = form
    fall = {}

    def ff(x, k):
        if (x, k) not in fall:
            fall[(x, k)] = falling(x, k)
        return fall[(x, k)]

    key = (id(terms), width)
    if key not in _sparse:
        # per term: its coefficient, per population the index of its monomial there, and its
        # degree per population; per population its distinct monomials (nonzero powers)
        parts = [{} for _ in range(0, len(terms[0][0]) if terms else 0, width)]
        rows = []
        for k, c in terms:
            at = []
            for g in range(len(parts)):
                m = tuple((v, kv) for v, kv in enumerate(k[g * width:(g + 1) * width]) if kv)
                at.append(parts[g].setdefault(m, len(parts[g])))
            rows.append((c, at, tuple(sum(k[g:g + width]) for g in range(0, len(k), width))))
        _sparse[key] = (terms, [list(p) for p in parts], rows)
    _, parts, rows = _sparse[key]
    # each population's monomials' numerators (c_1)_k1 ... (c_w)_kw
    nums = []
    for g, monomials in enumerate(parts):
        own = counts[g * width:(g + 1) * width]
        out = []
        for m in monomials:
            x = 1
            for v, kv in m:
                x *= ff(own[v], kv)
            out.append(x)
        nums.append(out)
    sums = {}
    for c, at, degrees in rows:
        num = c
        for g, i in enumerate(at):
            num *= nums[g][i]
        if num:
            sums[degrees] = sums.get(degrees, 0) + num
    total = Fraction(0)
    for degrees, num in sums.items():
        den = scale
        for g, kg in enumerate(degrees):
            den *= ff(sum(counts[g * width:(g + 1) * width]), kg)
        total += Fraction(num, den)
    return total


def variables(pops, width):
    """The frequency variables of @p pops populations, width per population."""
    size = pops * width
    return [[{tuple(int(j == i * width + t) for j in range(size)): 1} for t in range(width)]
            for i in range(pops)]


def basis(pops):
    """moments.LD's two-locus names and the one-locus (H) names for @p pops populations."""
    dd = [(i, j) for i in range(pops) for j in range(i, pops)]
    dz = [(i, j, k) for i in range(pops) for j in range(pops) for k in range(j, pops)]
    pi2 = [x + y for x in dd for y in dd if x <= y]
    name = lambda s, t: s + "_" + "_".join(map(str, t))
    return ([name("DD", x) for x in dd] + [name("Dz", x) for x in dz] +
            [name("pi2", x) for x in pi2], [name("H", x) for x in dd], dd, dz, pi2)


def basis_polynomials(pops, one, d, p, q):
    """moments.LD's statistics (names in basis() order) from each population's D, p and q
    (polynomials) and the constant 1 (@p one)."""
    not_p = [poly_add((1, one), (-1, x)) for x in p]
    not_q = [poly_add((1, one), (-1, x)) for x in q]
    zp = [poly_add((1, one), (-2, x)) for x in p]
    zq = [poly_add((1, one), (-2, x)) for x in q]
    names, _, dd, dz, pi2 = basis(pops)
    out = {}
    for i, j in dd:
        out[f"DD_{i}_{j}"] = poly_mul(d[i], d[j])
    for i, j, k in dz:
        out[f"Dz_{i}_{j}_{k}"] = poly_mul(d[i], poly_mul(zp[j], zq[k]))
    for i, j, k, l in pi2:
        left = poly_add((1, poly_mul(p[i], not_p[j])), (1, poly_mul(p[j], not_p[i])))
        right = poly_add((1, poly_mul(q[k], not_q[l])), (1, poly_mul(q[l], not_q[k])))
        out[f"pi2_{i}_{j}_{k}_{l}"] = {m: Fraction(c, 4) for m, c in poly_mul(left, right).items()}
    assert list(out) == names
    return out


def moments_polynomials(pops=1):
    f = variables(pops, 4)
    one = {tuple([0] * (4 * pops)): 1}
    d = [poly_add((1, poly_mul(x[0], x[3])), (-1, poly_mul(x[1], x[2]))) for x in f]
    p = [poly_add((1, x[0]), (1, x[1])) for x in f]
    q = [poly_add((1, x[0]), (1, x[2])) for x in f]
    return basis_polynomials(pops, one, d, p, q)


def het_polynomials(pops):
    f = variables(pops, 2)  # REF, non-REF
    _, hnames, dd, _, _ = basis(pops)
    return {f"H_{i}_{j}": poly_add((1, poly_mul(f[i][0], f[j][1])), (1, poly_mul(f[j][0], f[i][1])))
            for i, j in dd}


def genotype_dpq(pops):
    """1, and each population's D, p and q as polynomials in its genotype frequencies: 9
    variables per population, cell 3 x + y for x non-REF alleles at the first site and y at the
    second."""
    g = variables(pops, 9)
    one = {tuple([0] * (9 * pops)): 1}

    def lin(gi, w):
        return poly_add(*((Fraction(w(x, y)), gi[3 * x + y]) for x in range(3) for y in range(3)))

    ex = [lin(x, lambda a, b: a) for x in g]
    ey = [lin(x, lambda a, b: b) for x in g]
    exy = [lin(x, lambda a, b: a * b) for x in g]
    d = [{m: Fraction(c, 2) for m, c in poly_add((1, exy[i]), (-1, poly_mul(ex[i], ey[i]))).items()}
         for i in range(pops)]
    p = [poly_add((1, one), (Fraction(-1, 2), x)) for x in ex]
    q = [poly_add((1, one), (Fraction(-1, 2), x)) for x in ey]
    return one, d, p, q


def genotype_polynomials(pops):
    """moments_polynomials() in the genotype frequencies (genotype_dpq())."""
    return basis_polynomials(pops, *genotype_dpq(pops))


def genotype_factors(args):
    """One population's factors (the products ld-stats multiplies across populations) from a
    genotype table, each on a line: name and value."""
    counts = [int(x) for x in args.table.split(",")]
    one, (d,), (p,), (q,) = genotype_dpq(1)
    zp = poly_add((1, one), (-2, p))
    zq = poly_add((1, one), (-2, q))
    draws = [p, poly_add((1, one), (-1, p)), q, poly_add((1, one), (-1, q))]  # A, a, B, b
    out = {"d": d, "dzp": poly_mul(d, zp), "dzq": poly_mul(d, zq), "zp": zp, "zq": zq,
           "zz": poly_mul(zp, zq), "dd": poly_mul(d, d), "dz": poly_mul(d, poly_mul(zp, zq))}
    for s in range(1, 16):
        x = one
        for k in range(4):
            if s >> k & 1:
                x = poly_mul(x, draws[k])
        out[f"g{s}"] = x
    for name, poly in out.items():
        print(name, repr(float(unbiased(integer_form(poly), counts, 9))))


def population_samples(args, rows):
    """Per population (in order) the indices of its samples; one population of every sample
    without --pops."""
    return [[s // 2 for s in pop[::2]] for pop in population_slots(args, rows)]


def ldstats_genotypes(args, rows, edges, distance):
    groups = population_samples(args, rows)
    pops = len(groups)
    dos = [values(r, False) for r in rows]  # per sample the non-REF count, or None
    used = []
    for x in dos:
        called = [[x[s] for s in grp if x[s] is not None] for grp in groups]
        alleles = [v for c in called for v in c]
        total = 2 * len(alleles)
        used.append(all(called) and 0 < sum(alleles) < total)
    polys = {name: integer_form(p) for name, p in genotype_polynomials(pops).items()}
    hets = {name: integer_form(p) for name, p in het_polynomials(pops).items()}
    names = list(polys)
    seen = [{} for _ in edges[:-1]]
    bins = [[0] + [Fraction(0)] * len(names) for _ in edges[:-1]]
    for i in range(len(rows)):
        if not used[i]:
            continue
        for j in range(i + 1, len(rows)):
            if rows[j][0] != rows[i][0] or distance(i, j) >= edges[-1]:
                break
            d = distance(i, j)
            if not used[j] or d < edges[0]:
                continue
            counts = [0] * (9 * pops)
            for g, grp in enumerate(groups):
                for s in grp:
                    x, y = dos[i][s], dos[j][s]
                    if x is not None and y is not None:
                        counts[9 * g + 3 * x + y] += 1
            if any(sum(counts[9 * g:9 * g + 9]) < 4 for g in range(pops)):
                continue
            k = bisect.bisect_right(edges, d) - 1
            bins[k][0] += 1
            key = tuple(counts)
            seen[k][key] = seen[k].get(key, 0) + 1
    for b, pairs in zip(bins, seen):
        for key, times in pairs.items():
            for k, name in enumerate(names):
                b[k + 1] += times * unbiased(polys[name], list(key), 9)
    h = {name: Fraction(0) for name in hets}
    sites = 0
    for x, ok in zip(dos, used):
        if not ok:
            continue
        sites += 1
        counts = []
        for grp in groups:
            called = [x[s] for s in grp if x[s] is not None]
            counts += [2 * len(called) - sum(called), sum(called)]
        for name in hets:
            h[name] += unbiased(hets[name], counts, 2)
    print("bin_start\tbin_end\tpairs\t" + "\t".join(names) + "\tsites\t" + "\t".join(hets))
    for k, b in enumerate(bins):
        cells = [edges[k], edges[k + 1], b[0]] + [repr(float(x)) for x in b[1:]]
        cells += [sites] + [repr(float(v)) for v in h.values()]
        print("\t".join(str(c) for c in cells))


def population_slots(args, rows):
    """Per population (in order) the haplotype slots of its samples; one population of every
    slot without --pops."""
    if not args.pops:
        return [list(range(2 * len(rows[0][3])))] if rows else [[]]
    samples = read_samples(args.vcf)
    of = {}
    order = []
    with open(args.pops) as f:
        for line in f:
            if line.strip():
                sample, pop = line.split()[:2]
                of[sample] = pop
                if pop not in order:
                    order.append(pop)
    names = args.pop_names.split(",") if args.pop_names else order
    return [[2 * i + k for i, s in enumerate(samples) if of.get(s) == name for k in (0, 1)]
            for name in names]


def ldstats(args):
    rows = read_vcf(args.vcf)
    if args.r_bins:
        edges = [float(e) for e in args.r_bins.split(",")]
        gmap = read_map(args.map)
        gpos = [genetic_position(gmap[r[0]], r[1]) for r in rows]
        distance = lambda i, j: abs(gpos[j] - gpos[i]) / 100
    else:
        edges = [int(e) for e in args.bins.split(",")]
        distance = lambda i, j: rows[j][1] - rows[i][1]
    if args.genotypes:
        ldstats_genotypes(args, rows, edges, distance)
        return
    slots = population_slots(args, rows)
    pops = len(slots)
    haps = []
    for r in rows:
        h = values(r, True)
        h = [h[s] for pop in slots for s in pop]
        complete = all(len(r[3][s // 2]) == 2 for pop in slots for s in pop) and None not in h
        haps.append(h if complete and 0 < sum(h) < len(h) else None)
    polys = {name: integer_form(p) for name, p in moments_polynomials(pops).items()}
    hets = {name: integer_form(p) for name, p in het_polynomials(pops).items()}
    names = list(polys)
    bounds = [0]
    for pop in slots:
        bounds.append(bounds[-1] + len(pop))
    seen = [{} for _ in edges[:-1]]  # per bin: counts -> pairs
    bins = [[0] + [Fraction(0)] * len(names) for _ in edges[:-1]]
    for i in range(len(rows)):
        if haps[i] is None:
            continue
        for j in range(i + 1, len(rows)):
            if rows[j][0] != rows[i][0] or distance(i, j) >= edges[-1]:
                break
            d = distance(i, j)
            if haps[j] is None or d < edges[0]:
                continue
            # per population AB, Ab, aB, ab with A, B the REF alleles (value 0)
            counts = [0] * (4 * pops)
            for g in range(pops):
                for x, y in zip(haps[i][bounds[g]:bounds[g + 1]], haps[j][bounds[g]:bounds[g + 1]]):
                    counts[4 * g + 2 * x + y] += 1
            bins[bisect.bisect_right(edges, d) - 1][0] += 1
            key = tuple(counts)  # pairs with the same counts have the same values: sum once
            k = bisect.bisect_right(edges, d) - 1
            seen[k][key] = seen[k].get(key, 0) + 1
    for b, pairs in zip(bins, seen):
        for key, times in pairs.items():
            for k, name in enumerate(names):
                b[k + 1] += times * unbiased(polys[name], list(key))
    sites = [h for h in haps if h is not None]
    h = {name: Fraction(0) for name in hets}
    for x in sites:
        counts = []
        for g in range(pops):
            part = x[bounds[g]:bounds[g + 1]]
            counts += [len(part) - sum(part), sum(part)]
        for name in hets:
            h[name] += unbiased(hets[name], counts, 2)
    print("bin_start\tbin_end\tpairs\t" + "\t".join(names) + "\tsites\t" + "\t".join(hets))
    for k, b in enumerate(bins):
        cells = [edges[k], edges[k + 1], b[0]] + [repr(float(x)) for x in b[1:]]
        cells += [len(sites)] + [repr(float(v)) for v in h.values()]
        print("\t".join(str(c) for c in cells))


def ldscore(args):
    rows = read_vcf(args.vcf)
    vals = [values(r, args.hap) for r in rows]
    cm = None
    if args.wind_cm is not None:
        points = read_map(args.map)
        cm = [genetic_position(points[r[0]], r[1]) for r in rows]
    print("chrom\tpos\tid\tpairs\tl2")
    for i, row in enumerate(rows):
        own = [v for v in vals[i] if v is not None]
        varies = len(set(own)) > 1
        terms, pairs = [1.0], 0
        for j in range(len(rows)):
            if j == i or rows[j][0] != row[0]:
                continue
            if args.wind_snps is not None and abs(j - i) > args.wind_snps:
                continue
            if args.wind_kb is not None and abs(rows[j][1] - row[1]) > args.wind_kb * 1000:
                continue
            if cm is not None and abs(cm[j] - cm[i]) > args.wind_cm:
                continue
            n, v = r2(vals[i], vals[j])
            if v is None or n <= 2:
                continue
            terms.append(v - (1 - v) / (n - 2))
            pairs += 1
        l2 = repr(math.fsum(terms)) if varies else "NA"
        print(f"{row[0]}\t{row[1]}\t{row[2]}\t{pairs}\t{l2}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("vcf")
    v.add_argument("out")
    v.add_argument("--seed", type=int, default=1)
    v.add_argument("--samples", type=int, default=40)
    v.add_argument("--variants", type=int, default=600)
    v.add_argument("--contigs", type=int, default=2)
    v.add_argument("--missing", type=float, default=0.03)
    v.add_argument("--multiallelic", type=float, default=0.05)
    v.add_argument("--phased", action="store_true")
    ms = sub.add_parser("msvcf")
    ms.add_argument("ms")
    ms.add_argument("out")
    ms.add_argument("--length", type=int, required=True)
    d = sub.add_parser("decay")
    d.add_argument("vcf")
    d.add_argument("--bins", required=True)
    d.add_argument("--hap", action="store_true")
    d.add_argument("--ld-window", type=int, default=sys.maxsize)
    d.add_argument("--window-size", type=int, default=0)
    m = sub.add_parser("ldstats")
    m.add_argument("vcf")
    m.add_argument("--bins")
    m.add_argument("--r-bins")
    m.add_argument("--map")
    m.add_argument("--pops")
    m.add_argument("--pop-names")
    m.add_argument("--genotypes", action="store_true")
    t = sub.add_parser("genotype-factors")
    t.add_argument("table", help="n_00,n_01,...,n_22 (cell 3 x + y)")
    s = sub.add_parser("ldscore")
    s.add_argument("vcf")
    s.add_argument("--hap", action="store_true")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--wind-kb", type=float)
    g.add_argument("--wind-snps", type=int)
    g.add_argument("--wind-cm", type=float)
    s.add_argument("--map")
    args = p.parse_args(argv)
    {"vcf": make_vcf, "msvcf": ms_vcf, "decay": decay, "ldscore": ldscore, "ldstats": ldstats,
     "genotype-factors": genotype_factors}[args.cmd](args)


if __name__ == "__main__":
    main()
