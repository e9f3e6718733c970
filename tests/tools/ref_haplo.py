#!/usr/bin/python3
"""Brute-force reference of the haplotype and selection statistics (POPGEN.md §11).

Reads a VCF Zarr store with Debian's python3-zarr (an independent reader) and prints TSV.
EHH is evaluated from its pairwise definition: for every pair of haplotypes, the number of
consecutive usable sites, ending at the focal site, on which the two carry the same allele
(a shared-suffix length, updated site by site over the whole contig as scikit-allel's
ihh01_scan does); EHH over k steps is the fraction of pairs whose shared length reaches
k + 1. The integration loop is a literal transcription of selscan 2.0's calc_ihs / calc_nsl /
calc_xpihh (POPGEN.md §11.3). `--method groups` counts identical haplotypes instead (group
sizes of the haplotypes' allele tuples, recomputed at every step), so the two can be checked
against each other (test_haplo_ref.py).

  ref_haplo.py ihs    STORE [common] [selection options] [--windows-out FILE windows]
  ref_haplo.py nsl    STORE [common] [selection options] [--windows-out FILE windows]
  ref_haplo.py xpehh  STORE -P FILE --pair A,B [common] [selection options] [...]
  ref_haplo.py xpnsl  STORE -P FILE --pair A,B [common] [selection options] [...]
  ref_haplo.py garud  STORE [common] [windows]
  ref_haplo.py ehh    STORE --focal CHR:POS [--ehh-window BP] [common] [--maf F]

Common options: -s/--samples, -P/--pops FILE (sample, population), -r/--regions
chr[:beg-end],... (record overlap), --ancestral ref|aa, --map FILE (plink .map: chrom, id,
cM, bp). Selection options as the vczstats commands: --maf, --cutoff, --gap-scale, --max-gap,
--max-extend, --max-extend-nsl, --trunc-ok, --bins, --min-bin-sites, --crit.
Windows: --window-size W [--window-step S] or --window-variants N (ref_popgen.py's grouping).

Undefined values print as 'nan'.
"""

import argparse
import bisect
import math
import os
import sys
from collections import OrderedDict
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_popgen import Window, group_windows, parse_regions  # noqa: E402


# ------------------------------------------------------------------------- input

def open_store(path):
    import zarr
    store = zarr.ZipStore(path, mode="r") if path.endswith(".zip") else zarr.DirectoryStore(path)
    return zarr.open_group(store, mode="r")


def read_filled(g, name):
    """A 1-D array, its absent chunks read as 0 when it has no fill value (python3-zarr then
    leaves them uninitialised; some stores omit all-zero chunks, e.g. Ag1000G's variant_contig)."""
    a = g[name]
    values = a[:]
    if a.fill_value is None and a.nchunks_initialized < a.nchunks:
        step = a.chunks[0]
        present = set(a.store.listdir(a.path))
        for i in range(a.nchunks):
            if str(i) not in present:
                values[i * step:(i + 1) * step] = 0
    return values


def read_pops(path, samples):
    """OrderedDict population -> [index into samples] (header line and unknown samples ignored)."""
    index = {s: i for i, s in enumerate(samples)}
    pops = OrderedDict()
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 2 or line.startswith("#") or parts[0] not in index:
                continue
            pops.setdefault(parts[1], []).append(index[parts[0]])
    return pops


class GeneticMap:
    """plink .map rows (chrom, id, cM, bp); linear interpolation, extrapolated with the rate of
    the first or last interval."""

    def __init__(self, path):
        self.by_contig = {}
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 4 or line.startswith("#"):
                    continue
                self.by_contig.setdefault(parts[0], []).append((int(parts[3]), float(parts[2])))
        for pts in self.by_contig.values():
            pts.sort()

    def at(self, chrom, pos):
        pts = self.by_contig.get(chrom)
        if not pts or len(pts) < 2:
            raise SystemExit(f"ref_haplo: the map has fewer than two positions on {chrom}")
        bps = [p for p, _ in pts]
        i = bisect.bisect_right(bps, pos)
        i = min(max(i, 1), len(pts) - 1)
        (x0, y0), (x1, y1) = pts[i - 1], pts[i]
        if x1 == x0:
            return y0
        return y0 + (pos - x0) * (y1 - y0) / (x1 - x0)


class Data:
    """The selected sites of a store: contig, position, alleles, genetic position, and the
    haplotypes (sample-major, ploidy slots in order) of the selected samples."""

    def __init__(self, args):
        g = open_store(args.store)
        samples = [str(s) for s in g["sample_id"][:]]
        self.contig_ids = [str(c) for c in g["contig_id"][:]]
        self.contig_length = OrderedDict()
        if "contig_length" in g:
            for c, n in zip(self.contig_ids, g["contig_length"][:]):
                self.contig_length[c] = int(n)
        contig = read_filled(g, "variant_contig")
        pos = g["variant_position"][:].astype(np.int64)
        alleles = g["variant_allele"][:] if "variant_allele" in g else None
        aa = g["variant_AA"][:] if "variant_AA" in g else None
        self.regions = parse_regions(args.regions) if args.regions else None
        rows, region_of = [], []
        for v in range(len(pos)):
            chrom = self.contig_ids[contig[v]]
            if self.regions is None:
                rows.append(v)
                region_of.append(0)
                continue
            ref_len = max(len(str(alleles[v][0])), 1) if alleles is not None else 1
            for k, (c, beg, end) in enumerate(self.regions):
                hi = end if end is not None else float("inf")
                if c == chrom and pos[v] <= hi and pos[v] + ref_len - 1 >= beg:
                    rows.append(v)
                    region_of.append(k)
                    break
        rows = np.array(rows, dtype=np.int64)
        self.variant = rows
        self.region = np.array(region_of, dtype=np.int64)
        self.chrom = [self.contig_ids[contig[v]] for v in rows]
        self.pos = pos[rows]
        self.alleles = [[str(a) for a in alleles[v] if str(a) != ""] for v in rows] if alleles is not None else None
        self.aa = [str(aa[v]).upper() for v in rows] if aa is not None else None
        if args.samples:
            wanted = set(args.samples.split(","))
            chosen = [i for i, s in enumerate(samples) if s in wanted]
        else:
            chosen = [i for i, s in enumerate(samples) if s != ""]
        self.samples = [samples[i] for i in chosen]
        gt = g["call_genotype"].get_orthogonal_selection((rows, np.array(chosen, dtype=np.int64), slice(None)))
        phased = g["call_genotype_phased"].get_orthogonal_selection((rows, np.array(chosen, dtype=np.int64)))
        called = (gt >= 0).sum(axis=2) >= 2
        if np.any(called & ~phased):
            v, s = np.argwhere(called & ~phased)[0]
            raise SystemExit(f"ref_haplo: unphased call of {self.samples[s]} at {self.chrom[v]}:{self.pos[v]}")
        self.ploidy = gt.shape[2]
        self.gt = gt.reshape(gt.shape[0], -1)  # rows x (samples * ploidy)
        self.pops = read_pops(args.pops, self.samples) if args.pops else OrderedDict(all=list(range(len(self.samples))))
        self.gmap = GeneticMap(args.map) if getattr(args, "map", None) else None
        self.gpos = np.array([self.gmap.at(c, p) for c, p in zip(self.chrom, self.pos)]) \
            if self.gmap else self.pos.astype(np.float64)

    def haps(self, members):
        cols = [s * self.ploidy + j for s in members for j in range(self.ploidy)]
        return self.gt[:, cols].astype(np.int64)

    def ancestral(self, i, mode):
        if mode == "ref":
            return 0
        if self.aa is None or self.alleles is None:
            return None
        al = [a.upper() for a in self.alleles[i]]
        return al.index(self.aa[i]) if self.aa[i] in al else None


def usable_rows(H):
    """Per row: usable (every haplotype called, at most two alleles), allele a, allele b (a < b;
    a == b when monomorphic) and the 0/1 matrix of 'carries b'."""
    complete = np.all(H >= 0, axis=1)
    lo = np.where(complete, H.min(axis=1), 0)
    hi = np.where(complete, H.max(axis=1), 0)
    two = np.array([len(np.unique(r)) <= 2 for r in H])
    ok = complete & two
    bits = (H == hi[:, None]) & (hi != lo)[:, None]
    return ok, lo, hi, bits.astype(np.int8)


def contig_runs(chrom):
    """[start, end) row ranges of consecutive rows on one contig."""
    runs, start = [], 0
    for i in range(1, len(chrom) + 1):
        if i == len(chrom) or chrom[i] != chrom[start]:
            runs.append((start, i))
            start = i
    return runs


# ----------------------------------------------------------- pairwise shared lengths

def choose2(n):
    return n * (n - 1) / 2


class Pairs:
    """All pairs i < j of n haplotypes."""

    def __init__(self, n):
        self.i, self.j = np.triu_indices(n, 1)


def shared_lengths(bits, pairs, rows):
    """For each row r of `rows` (in that order), the number of consecutive rows ending at r
    (rows before it in the same order) on which each pair carries the same allele."""
    ssl = np.zeros(len(pairs.i), dtype=np.int64)
    out = {}
    for r in rows:
        eq = bits[r][pairs.i] == bits[r][pairs.j]
        ssl = np.where(eq, ssl + 1, 0)
        out[r] = ssl
    return out


def group_pairs(bits, rows_from_focal, members):
    """--method groups: for k = 0..len-1, the number of pairs of `members` whose haplotypes
    are identical on rows_from_focal[0..k] (sizes of groups of identical allele tuples)."""
    out = []
    key = {m: () for m in members}
    for r in rows_from_focal:
        for m in members:
            key[m] = key[m] + (int(bits[r][m]),)
        counts = {}
        for m in members:
            counts[key[m]] = counts.get(key[m], 0) + 1
        out.append(sum(c * (c - 1) // 2 for c in counts.values()))
    return out


# ------------------------------------------------------------------ the walks

def step_distance(pos, gpos, k, unit, p):
    """selscan's distance between the k-th and (k+1)-th site of a walk: the genetic (or unit)
    distance, scaled by gap_scale / gap when the physical gap exceeds gap_scale."""
    gap = abs(int(pos[k + 1]) - int(pos[k]))
    scale = min(1.0, p.gap_scale / gap) if gap > 0 else 1.0
    return scale * (1.0 if unit else abs(gpos[k + 1] - gpos[k]))


def extended(pos, k, unit, p):
    """Whether the walk has reached --max-extend (bp) or --max-extend-nsl (sites) at step k."""
    if unit:
        return p.max_extend_nsl > 0 and k >= p.max_extend_nsl
    return p.max_extend > 0 and abs(int(pos[k]) - int(pos[0])) >= p.max_extend


def walk_alleles(pairs_at, norm, pos, gpos, K, p, unit):
    """iHS / nSL in one direction (selscan 2.0 calc_ihs, calc_nsl). pairs_at(k) -> pairs of
    class 0 and 1 identical over the focal and the next k sites; K sites are available.
    Returns (ihh per class, status)."""
    cutoff = 0.0 if unit else p.cutoff
    ehh, ihh, k = [1.0, 1.0], [0.0, 0.0], 0
    while ehh[0] > cutoff or ehh[1] > cutoff:
        if k == K:
            return ihh, ("ok" if p.trunc_ok else "edge")
        if abs(int(pos[k + 1]) - int(pos[k])) > p.max_gap:
            return ihh, "gap"
        d = step_distance(pos, gpos, k, unit, p)
        k += 1
        pr = pairs_at(k)
        for c in (0, 1):
            if ehh[c] > cutoff:
                new = pr[c] / norm[c]
                ihh[c] += 0.5 * d * (ehh[c] + new)
                ehh[c] = new
        if extended(pos, k, unit, p):
            break
    return ihh, "ok"


def walk_pops(pairs_at, norm, pos, gpos, K, p, unit):
    """XP-EHH / XP-nSL in one direction (selscan calc_xpihh): pairs_at(k) -> pairs of pop A,
    pop B and pooled identical over the focal and the next k sites."""
    pr = pairs_at(0)
    ehh = [pr[0] / norm[0], pr[1] / norm[1]]
    pooled = pr[2] / norm[2]
    ihh, k = [0.0, 0.0], 0
    while pooled > p.cutoff:
        if k == K:
            return ihh, ("ok" if p.trunc_ok else "edge")
        if abs(int(pos[k + 1]) - int(pos[k])) > p.max_gap:
            return ihh, "gap"
        d = step_distance(pos, gpos, k, unit, p)
        k += 1
        pr = pairs_at(k)
        for c in (0, 1):
            new = pr[c] / norm[c]
            ihh[c] += 0.5 * d * (ehh[c] + new)
            ehh[c] = new
        pooled = pr[2] / norm[2]
        if extended(pos, k, unit, p):
            break
    return ihh, "ok"


def suffix_pairs(ssl, mask):
    """f(k) = number of pairs in mask with shared length >= k + 1."""
    counts = np.bincount(ssl[mask])
    tail = np.cumsum(counts[::-1])[::-1]  # tail[l] = #pairs with length >= l

    def at(k):
        return int(tail[k + 1]) if k + 1 < len(tail) else 0
    return at


# --------------------------------------------------------------- the statistics

def fmt(x):
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return repr(float(x))


def write_row(out, values):
    out.write("\t".join(v if isinstance(v, str) else fmt(v) for v in values) + "\n")


def selection_scores(data, H_list, names, args, kind):
    """Unstandardised scores of one haplotype set. kind: ihs, nsl, xpehh, xpnsl. H_list: one
    matrix (ihs, nsl) or two (xp: pop A, pop B). Returns rows (dict per focal site)."""
    unit = kind in ("nsl", "xpnsl")
    xp = kind.startswith("xp")
    H = np.concatenate(H_list, axis=1)
    n = H.shape[1]
    n_a = H_list[0].shape[1]
    ok, lo, hi, bits = usable_rows(H)
    freq_b = bits.sum(axis=1) / n
    if xp:
        keep = ok & (lo != hi)
    else:
        keep = ok & (freq_b >= args.maf) & (1 - freq_b >= args.maf)
    pairs = Pairs(n)
    in_a = pairs.j < n_a  # i < j
    in_b = pairs.i >= n_a
    results = []
    for (c0, c1) in contig_runs(data.chrom):
        rows = [r for r in range(c0, c1) if keep[r]]
        if not rows:
            continue
        pos = data.pos[rows]
        gpos = data.gpos[rows]
        fwd = shared_lengths(bits, pairs, rows)
        bwd = shared_lengths(bits, pairs, rows[::-1])
        for fi, r in enumerate(rows):
            row = dict(chrom=data.chrom[r], pos=int(data.pos[r]), variant=int(data.variant[r]))
            b = bits[r]
            if xp:
                row["freq1"] = float(b[:n_a].sum()) / n_a
                row["freq2"] = float(b[n_a:].sum()) / (n - n_a)
                same = b[pairs.i] == b[pairs.j]
                masks = [same & in_a, same & in_b, same]
                norm = [choose2(n_a), choose2(n - n_a), choose2(n)]
                if min(norm) == 0:
                    continue
            else:
                anc = data.ancestral(r, args.ancestral)
                if anc is None or anc not in (lo[r], hi[r]):
                    continue
                derived_bit = 1 if anc == lo[r] else 0
                count = [int((b == 0).sum()), int((b == 1).sum())]
                if min(count) < 2:
                    continue
                masks = [(b[pairs.i] == c) & (b[pairs.j] == c) for c in (0, 1)]
                norm = [choose2(count[0]), choose2(count[1])]
            sides = []
            status = "ok"
            for ssl, idx in ((fwd[r], list(range(fi, -1, -1))), (bwd[r], list(range(fi, len(rows))))):
                if args.method == "groups":
                    walk_rows = [rows[i] for i in idx]
                    if xp:
                        gs = [group_pairs(bits, walk_rows, list(range(n_a))),
                              group_pairs(bits, walk_rows, list(range(n_a, n))),
                              group_pairs(bits, walk_rows, list(range(n)))]
                    else:
                        gs = [group_pairs(bits, walk_rows, list(np.flatnonzero(b == c))) for c in (0, 1)]
                    fns = [(lambda g: (lambda k: g[k]))(g) for g in gs]
                else:
                    fns = [suffix_pairs(ssl, m) for m in masks]

                def pairs_at(k, fns=fns):
                    return [f(k) for f in fns]
                wpos = pos[idx]
                wg = gpos[idx]
                walk = walk_pops if xp else walk_alleles
                ihh, st = walk(pairs_at, norm, wpos, wg, len(idx) - 1, args, unit)
                if st != "ok":
                    status = st
                sides.append(ihh)
            if status != "ok":
                continue
            left, right = sides
            if xp:
                i1, i2 = left[0] + right[0], left[1] + right[1]
                if i1 == 0 or i2 == 0:
                    continue
                row.update(ihh1=i1, ihh2=i2, score=math.log10(i1 / i2))
            else:
                d, a = derived_bit, 1 - derived_bit
                i1, i0 = left[d] + right[d], left[a] + right[a]
                if i1 == 0 or i0 == 0:
                    continue
                row.update(freq=float((b == derived_bit).sum()) / n, ihh1=i1, ihh0=i0,
                           score=math.log10(i1 / i0), ihh1_left=left[d], ihh1_right=right[d],
                           ihh0_left=left[a], ihh0_right=right[a])
            results.append(row)
    return results


def standardise(rows, freq_key, bins, min_sites):
    """selscan norm: mean and sample variance of the scores in each frequency bin (bin b holds
    freq < (b + 1) / bins, the first such b); NaN for bins with fewer than min_sites scores."""
    step = 1.0 / bins
    thresholds = [0.0 + (b + 1) * step for b in range(bins)]

    def bin_of(f):
        for b, t in enumerate(thresholds):
            if f < t:
                return b
        return None
    groups = {}
    for r in rows:
        b = bin_of(r[freq_key]) if freq_key else 0
        r["_bin"] = b
        if b is not None:
            groups.setdefault(b, []).append(r["score"])
    stats = {}
    for b, xs in groups.items():
        m = sum(xs) / len(xs)
        var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1) if len(xs) > 1 else math.nan
        stats[b] = (len(xs), m, var)
    for r in rows:
        b = r.pop("_bin")
        if b is None or stats[b][0] < min_sites:
            r["std"] = math.nan
        else:
            _, m, var = stats[b]
            r["std"] = (r["score"] - m) / math.sqrt(var)


def window_summary(data, rows, args, out, label_cols):
    """Per window over the sites with a standardised score: n_scores, fractions >= crit,
    <= -crit and |score| >= crit, max and min."""
    scored = [r for r in rows if not math.isnan(r["std"])]
    sites = SimpleNamespace(regions=data.regions, contig_length=data.contig_length)

    def records():
        for r in scored:
            k = 0
            if data.regions:
                for k, (c, beg, end) in enumerate(data.regions):
                    if c == r["chrom"] and beg <= r["pos"] <= (end if end is not None else float("inf")):
                        break
            yield k, SimpleNamespace(chrom=r["chrom"], pos=r["pos"], std=r["std"])
    sites.records = records
    write_row(out, ["chrom", "start", "end"] + label_cols[0] +
              ["n_scores", "frac_gt", "frac_lt", "frac_crit", "max_score", "min_score"])
    # The windows span the selected sites (data span), not only the scored ones.
    spans = {}
    for i in range(len(data.pos)):
        key, p = (int(data.region[i]), data.chrom[i]), int(data.pos[i])
        lo, hi = spans.get(key, (p, p))
        spans[key] = (min(lo, p), max(hi, p))
    for w in group_windows(sites, args, spans):
        xs = [rec.std for rec in w.records]
        n = len(xs)
        if n == 0:
            vals = [0, math.nan, math.nan, math.nan, math.nan, math.nan]
        else:
            vals = [n, sum(x >= args.crit for x in xs) / n, sum(x <= -args.crit for x in xs) / n,
                    sum(abs(x) >= args.crit for x in xs) / n, max(xs), min(xs)]
        write_row(out, [w.chrom, w.start, w.end] + label_cols[1] + vals)


def cmd_selection(data, args, out, kind):
    xp = kind.startswith("xp")
    if xp:
        a, b = args.pair.split(",")
        sets = [(f"{a}\t{b}", [data.haps(data.pops[a]), data.haps(data.pops[b])], (a, b))]
        s1, s2 = ("ihh1", "ihh2") if kind == "xpehh" else ("sl1", "sl2")
        write_row(out, ["chrom", "pos", "pop1", "pop2", "freq1", "freq2", s1, s2, kind, kind + "_std"])
    else:
        sets = [(name, [data.haps(m)], (name,)) for name, m in data.pops.items()]
        s1, s0 = ("ihh1", "ihh0") if kind == "ihs" else ("sl1", "sl0")
        write_row(out, ["chrom", "pos", "population", "freq", s1, s0, kind, kind + "_std",
                        s1 + "_left", s1 + "_right", s0 + "_left", s0 + "_right"])
    summaries = []
    for _, Hs, labels in sets:
        rows = selection_scores(data, Hs, labels, args, kind)
        standardise(rows, None if xp else "freq", 1 if xp else args.bins, args.min_bin_sites)
        for r in rows:
            if xp:
                write_row(out, [r["chrom"], r["pos"], labels[0], labels[1], r["freq1"], r["freq2"],
                                r["ihh1"], r["ihh2"], r["score"], r["std"]])
            else:
                write_row(out, [r["chrom"], r["pos"], labels[0], r["freq"], r["ihh1"], r["ihh0"],
                                r["score"], r["std"], r["ihh1_left"], r["ihh1_right"],
                                r["ihh0_left"], r["ihh0_right"]])
        summaries.append((labels, rows))
    if args.windows_out:
        with open(args.windows_out, "w") as w:
            first = True
            for labels, rows in summaries:
                cols = (["pop1", "pop2"] if xp else ["population"], list(labels))
                import io
                buf = io.StringIO()
                window_summary(data, rows, args, buf, cols)
                text = buf.getvalue().splitlines(True)
                w.writelines(text if first else text[1:])
                first = False


def cmd_garud(data, args, out):
    write_row(out, ["chrom", "start", "end", "population", "n_sites", "n_used", "n_haplotypes",
                    "n_distinct", "hap_diversity", "h1", "h12", "h123", "h2_h1"])
    sites = SimpleNamespace(regions=data.regions, contig_length=data.contig_length)

    def records():
        for i in range(len(data.pos)):
            yield int(data.region[i]), SimpleNamespace(chrom=data.chrom[i], pos=int(data.pos[i]), row=i)
    sites.records = records
    windows = group_windows(sites, args)
    for name, members in data.pops.items():
        H = data.haps(members)
        ok, _, _, bits = usable_rows(H)
        n = H.shape[1]
        for w in windows:
            used = [rec.row for rec in w.records if ok[rec.row]]
            if not used:
                # POPGEN.md §11: no usable sites: n_distinct 0, the rest undefined.
                write_row(out, [w.chrom, w.start, w.end, name, len(w.records), 0, n, 0] + [math.nan] * 5)
                continue
            _, counts = np.unique(bits[used].T, axis=0, return_counts=True)
            f = np.sort(counts)[::-1] / n
            h1 = float(np.sum(f ** 2))
            h12 = float(np.sum(f[:2])) ** 2 + float(np.sum(f[2:] ** 2))
            h123 = float(np.sum(f[:3])) ** 2 + float(np.sum(f[3:] ** 2))
            write_row(out, [w.chrom, w.start, w.end, name, len(w.records), len(used), n, len(counts),
                            n / (n - 1) * (1 - h1) if n > 1 else math.nan, h1, h12, h123,
                            (h1 - f[0] ** 2) / h1])


def cmd_ehh(data, args, out):
    """EHH of the derived and ancestral carriers and of all haplotypes at every usable site
    within --ehh-window bp of the focal site (no cutoff), left side first."""
    chrom, p = args.focal.rsplit(":", 1)
    p = int(p)
    write_row(out, ["chrom", "focal_pos", "population", "pos", "distance", "variants", "gdistance",
                    "ehh_derived", "ehh_ancestral", "ehh"])
    for name, members in data.pops.items():
        H = data.haps(members)
        n = H.shape[1]
        ok, lo, hi, bits = usable_rows(H)
        freq = bits.sum(axis=1) / n
        keep = ok & (freq >= args.maf) & (1 - freq >= args.maf)
        rows = [r for r in range(len(data.pos)) if keep[r] and data.chrom[r] == chrom]
        focal = [r for r in rows if data.pos[r] == p]
        if not focal:
            continue
        f = focal[0]
        anc = data.ancestral(f, args.ancestral)
        if anc is None or anc not in (lo[f], hi[f]):
            continue
        d = 1 if anc == lo[f] else 0
        fi = rows.index(f)
        carriers = [list(np.flatnonzero(bits[f] == d)), list(np.flatnonzero(bits[f] != d))]
        for sign, side in ((-1, range(fi, -1, -1)), (1, range(fi, len(rows)))):
            walk_rows = []
            for i in side:
                if abs(int(data.pos[rows[i]]) - p) > args.ehh_window:
                    break
                walk_rows.append(rows[i])
            gd = group_pairs(bits, walk_rows, carriers[0])
            ga = group_pairs(bits, walk_rows, carriers[1])
            gall = group_pairs(bits, walk_rows, list(range(n)))
            order = range(len(walk_rows) - 1, -1, -1) if sign == -1 else range(1, len(walk_rows))
            for k in order:
                r = walk_rows[k]
                write_row(out, [chrom, p, name, int(data.pos[r]), int(data.pos[r]) - p, sign * k,
                                float(data.gpos[r] - data.gpos[f]) if data.gmap else math.nan,
                                gd[k] / choose2(len(carriers[0])) if len(carriers[0]) > 1 else math.nan,
                                ga[k] / choose2(len(carriers[1])) if len(carriers[1]) > 1 else math.nan,
                                gall[k] / choose2(n)])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["ihs", "nsl", "xpehh", "xpnsl", "garud", "ehh"])
    ap.add_argument("store")
    ap.add_argument("-s", "--samples")
    ap.add_argument("-P", "--pops")
    ap.add_argument("-r", "--regions")
    ap.add_argument("--ancestral", default="ref", choices=["ref", "aa"])
    ap.add_argument("--map")
    ap.add_argument("--method", default="pairs", choices=["pairs", "groups"])
    ap.add_argument("--maf", type=float, default=0.05)
    ap.add_argument("--cutoff", type=float, default=0.05)
    ap.add_argument("--gap-scale", type=float, default=20000)
    ap.add_argument("--max-gap", type=float, default=200000)
    ap.add_argument("--max-extend", type=float, default=1000000)
    ap.add_argument("--max-extend-nsl", type=int, default=100)
    ap.add_argument("--trunc-ok", action="store_true")
    ap.add_argument("--bins", type=int, default=100)
    ap.add_argument("--min-bin-sites", type=int, default=20)
    ap.add_argument("--crit", type=float, default=2.0)
    ap.add_argument("--pair")
    ap.add_argument("--windows-out")
    ap.add_argument("--window-size", type=int)
    ap.add_argument("--window-step", type=int)
    ap.add_argument("--window-variants", type=int)
    ap.add_argument("--focal")
    ap.add_argument("--ehh-window", type=int, default=100000)
    ap.add_argument("-o", "--output")
    args = ap.parse_args(argv)
    data = Data(args)
    out = open(args.output, "w") if args.output else sys.stdout
    if args.command in ("ihs", "nsl", "xpehh", "xpnsl"):
        cmd_selection(data, args, out, args.command)
    elif args.command == "garud":
        cmd_garud(data, args, out)
    else:
        cmd_ehh(data, args, out)
    if args.output:
        out.close()


if __name__ == "__main__":
    main()
