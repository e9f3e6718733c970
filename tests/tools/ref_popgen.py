#!/usr/bin/python3
"""Brute-force reference implementations of population-genetics statistics.

Reads a VCF (plain or gzip/bgzip; parsed here, no htslib) and prints TSV.
The definitions are written as loops over pairs of haplotypes wherever a
pairwise definition exists (--method pairs, the default); --method counts
evaluates the same quantities with the textbook allele-count formulas, so the
two can be checked against each other. tests/tools/POPGEN.md gives every
definition; this file is its executable form.

  ref_popgen.py counts     VCF [common options]
  ref_popgen.py diversity  VCF [common] [--per-site] [windows]
  ref_popgen.py divergence VCF [common] [--pairs A,B;C,D] [--pbs A,B,C] [--per-site] [windows]
  ref_popgen.py sfs        VCF [common] [--folded] [--joint A,B]
  ref_popgen.py fstats     VCF [common] --f2 A,B | --f3 C,A,B | --d A,B,C,D [--blocks N] [--per-site]
  ref_popgen.py windows    VCF --stat diversity|divergence [common] windows
  ref_popgen.py hwe        VCF [common] [--midp]
  ref_popgen.py het        VCF [common] [--small-sample]

Common options: -s/--samples A,B (subset), -P/--pops FILE (sample, population;
header line optional; samples not listed are ignored; populations in order of
first appearance), -r/--regions chr[:beg[-end]],... (1-based inclusive),
--regions-overlap record|pos (default record: a record whose REF span
POS..POS+len(REF)-1 overlaps the region, as bcftools -r), --ancestral ref|aa
(the ancestral allele for unfolded statistics: REF, or INFO/AA when it names
one of the record's alleles), --method pairs|counts, --vcftools-compat
(reproduce vcftools 0.1.16 quirks, see POPGEN.md).

Windows: --window-size W [--window-step S] [--window-span data|contig] (bp windows
[start, start+W-1] from the first record, the region start, or 1 with contig; the last
ends at the span's end) or --window-variants N (N consecutive records). Without windows,
one row per region (or per contig).

Undefined values print as 'nan'.
"""

import argparse
import gzip
import math
import sys
from collections import OrderedDict

import numba
import numpy as np

MISSING = -1


# ------------------------------------------------------------------ VCF input

class Record:
    """One VCF record restricted to the selected samples.

    calls[k] is a tuple with the alleles of selected sample k as written
    (length = that call's ploidy; '.' is MISSING). Fill (a call shorter than
    the file's ploidy) is simply absent from the tuple.
    """
    __slots__ = ("chrom", "pos", "ref", "alts", "calls", "aa")

    def __init__(self, chrom, pos, ref, alts, calls, aa):
        self.chrom, self.pos, self.ref, self.alts, self.calls, self.aa = chrom, pos, ref, alts, calls, aa

    @property
    def n_alleles(self):
        return 1 + len(self.alts)

    @property
    def end(self):
        return self.pos + max(len(self.ref), 1) - 1


def open_text(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt")
    return open(path, "rt")


def parse_regions(text):
    """'chr', 'chr:pos', 'chr:beg-end', 'chr:beg-' -> [(chrom, beg, end|None)]."""
    out = []
    for item in filter(None, text.split(",")):
        if ":" not in item:
            out.append((item, 1, None))
            continue
        chrom, span = item.rsplit(":", 1)
        span = span.replace(",", "")
        if "-" in span:
            beg, end = span.split("-", 1)
            out.append((chrom, int(beg), int(end) if end else None))
        else:
            out.append((chrom, int(span), int(span)))
    return out


def parse_gt(text):
    gt = text.split(":", 1)[0]
    if gt in (".", ""):
        return (MISSING,)
    return tuple(MISSING if a == "." else int(a) for a in gt.replace("|", "/").split("/"))


class Vcf:
    """Header (samples, contig lengths) and the selected records of a VCF."""

    def __init__(self, path, samples=None, regions=None, overlap="record", half_call="keep"):
        self.path, self.regions, self.overlap, self.half_call = path, regions, overlap, half_call
        self.contig_length = OrderedDict()
        f = open_text(path)
        for line in f:
            if line.startswith("##contig=<"):
                fields = dict(kv.split("=", 1) for kv in line.strip()[10:-1].split(",") if "=" in kv)
                if "ID" in fields:
                    self.contig_length[fields["ID"]] = int(fields["length"]) if "length" in fields else None
            elif line.startswith("#CHROM"):
                self.all_samples = line.rstrip("\n").split("\t")[9:]
                break
        f.close()
        if samples:
            lookup = {s: i for i, s in enumerate(self.all_samples)}
            unknown = [s for s in samples if s not in lookup]
            if unknown:
                raise SystemExit(f"ref_popgen: samples not in the VCF: {','.join(unknown)}")
            self.samples = [s for s in self.all_samples if s in set(samples)]
        else:
            self.samples = list(self.all_samples)
        self.columns = [self.all_samples.index(s) + 9 for s in self.samples]

    def region_of(self, chrom, pos, end):
        """Index of the first region selecting the record, or None."""
        if not self.regions:
            return 0
        for k, (c, beg, stop) in enumerate(self.regions):
            if c != chrom:
                continue
            hi = stop if stop is not None else float("inf")
            if self.overlap == "pos":
                if beg <= pos <= hi:
                    return k
            elif pos <= hi and end >= beg:
                return k
        return None

    def records(self):
        """Yield (region index, Record) in file order."""
        f = open_text(self.path)
        cols = self.columns
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            chrom, pos, ref = fields[0], int(fields[1]), fields[3]
            k = self.region_of(chrom, pos, pos + max(len(ref), 1) - 1)
            if k is None:
                continue
            alts = [] if fields[4] == "." else fields[4].split(",")
            fmt = fields[8].split(":")
            if fmt[0] != "GT":
                raise SystemExit(f"ref_popgen: {chrom}:{pos}: FORMAT does not start with GT")
            calls = [parse_gt(fields[c]) for c in cols]
            if self.half_call == "missing":  # plink2 --vcf-half-call m: '0/.' becomes './.'
                calls = [(MISSING,) * len(c) if MISSING in c else c for c in calls]
            aa = None
            for kv in fields[7].split(";"):
                if kv.startswith("AA="):
                    aa = kv[3:].split("|")[0].upper()
            yield k, Record(chrom, pos, ref, alts, calls, aa)
        f.close()


def read_pops(path, samples):
    """Population table: OrderedDict name -> [index into samples]."""
    index = {s: i for i, s in enumerate(samples)}
    pops = OrderedDict()
    with open(path) as f:
        for lineno, line in enumerate(f):
            parts = line.split()
            if len(parts) < 2:
                continue
            sample, pop = parts[0], parts[1]
            if sample not in index:
                if lineno == 0:
                    continue  # header line (or an unselected sample: ignored either way)
                continue
            pops.setdefault(pop, []).append(index[sample])
    return pops


# ------------------------------------------------ per-site per-population data

def haplotypes(rec, members):
    """Called alleles of the population at this record (missing and fill excluded)."""
    return np.array([a for s in members for a in rec.calls[s] if a != MISSING], dtype=np.int64)


def allele_counts(haps, n_alleles):
    counts = [0] * n_alleles
    for a in haps:
        counts[a] += 1
    return counts


def genotype_class(call):
    if any(a == MISSING for a in call):
        return "missing"
    if all(a == 0 for a in call):
        return "hom_ref"
    if 0 in call:
        return "het_ref"
    if len(set(call)) == 1:
        return "hom_alt"
    return "het_alt"


@numba.njit(cache=True)
def differing_pairs_within(h):
    """Number of unordered pairs i < j of haplotypes carrying different alleles."""
    d = 0
    for i in range(h.shape[0]):
        for j in range(i + 1, h.shape[0]):
            if h[i] != h[j]:
                d += 1
    return d


@numba.njit(cache=True)
def differing_pairs_between(h1, h2):
    """Number of pairs (one haplotype of each population) carrying different alleles."""
    d = 0
    for i in range(h1.shape[0]):
        for j in range(h2.shape[0]):
            if h1[i] != h2[j]:
                d += 1
    return d


def pi_within(haps, n_alleles, method):
    """Mean pairwise difference among the n called haplotypes; nan when n < 2."""
    n = len(haps)
    if n < 2:
        return math.nan
    if method == "pairs":
        return differing_pairs_within(haps) / (n * (n - 1) / 2)
    p = np.array(allele_counts(haps, n_alleles)) / n
    return n / (n - 1) * (1.0 - float(np.sum(p * p)))


def pi_between(h1, h2, n_alleles, method):
    """Mean difference over pairs with one haplotype from each population."""
    if len(h1) == 0 or len(h2) == 0:
        return math.nan
    if method == "pairs":
        return differing_pairs_between(h1, h2) / (len(h1) * len(h2))
    p1 = np.array(allele_counts(h1, n_alleles)) / len(h1)
    p2 = np.array(allele_counts(h2, n_alleles)) / len(h2)
    return 1.0 - float(np.sum(p1 * p2))


def is_fully_diploid(rec, members):
    return all(len(rec.calls[s]) == 2 for s in members)


def harmonic(n, power=1):
    return sum(1.0 / i ** power for i in range(1, n))


def ancestral_index(rec, mode):
    """Index of the ancestral allele, or None when unknown."""
    if mode == "ref":
        return 0
    alleles = [rec.ref.upper()] + [a.upper() for a in rec.alts]
    if rec.aa is None or rec.aa not in alleles:
        return None
    return alleles.index(rec.aa)


def fmt(x):
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return repr(float(x))


def empty_na(window, values):
    """A window without records: its counts (ints) stay 0, every other value is nan."""
    if window.records:
        return values
    return [v if isinstance(v, (int, np.integer)) else math.nan for v in values]


def write_row(out, values):
    out.write("\t".join(v if isinstance(v, str) else fmt(v) for v in values) + "\n")


# -------------------------------------------------------------------- windows

class Window:
    __slots__ = ("chrom", "start", "end", "records")

    def __init__(self, chrom, start, end):
        self.chrom, self.start, self.end, self.records = chrom, start, end, []

    @property
    def length(self):
        return self.end - self.start + 1


def group_windows(vcf, args, spans=None):
    """Split the selected records into windows (or one group per region / contig).

    Returns a list of Window with their records. bp windows tile the group's span
    (region, else contig) from its start; windows without records are listed too. spans:
    {(region index, chrom): (first, last)} when the data span is that of other records (a
    summary over some of the selected sites spans all of them).
    """
    by_group = OrderedDict()  # (region index, chrom) -> [records]
    for k, rec in vcf.records():
        by_group.setdefault((k, rec.chrom), []).append(rec)
    if getattr(args, "whole", False):  # one group: every selected record
        w = Window("*", 1, 0)
        for (k, chrom), recs in by_group.items():
            if vcf.regions:
                _, beg, end = vcf.regions[k]
                end = end if end is not None else (vcf.contig_length.get(chrom) or max(r.pos for r in recs))
            else:
                beg, end = 1, vcf.contig_length.get(chrom) or max(r.pos for r in recs)
            w.end += end - beg + 1
            w.records.extend(recs)
        return [w]
    windows = []
    span = getattr(args, "window_span", None) or "data"
    for (k, chrom), recs in by_group.items():
        # The span [beg, end] a group covers. data (default): its first to its last record
        # (a region's own bounds where it gives them; a region without coordinates starts at
        # its first record). contig: the region, else [1, contig length] (header), else up to
        # the last record (then end is not known).
        known_end = True
        first, last = min(r.pos for r in recs), max(r.pos for r in recs)
        if spans is not None and (k, chrom) in spans:
            first, last = spans[k, chrom]
        if vcf.regions:
            _, beg, end = vcf.regions[k]
            if end is None:
                if span == "data":
                    beg = first if beg == 1 else beg
                    end = max(last, beg)
                else:
                    end = vcf.contig_length.get(chrom)
        elif span == "data":
            beg, end = first, last
        else:
            beg, end = 1, vcf.contig_length.get(chrom)
        if end is None:
            end, known_end = last, False
        if getattr(args, "window_variants", None):
            n = args.window_variants
            for i in range(0, len(recs), n):
                w = Window(chrom, recs[i].pos, recs[min(i + n, len(recs)) - 1].pos)
                w.records = recs[i:i + n]
                windows.append(w)
        elif getattr(args, "window_size", None):
            size = args.window_size
            step = args.window_step or size
            # scikit-allel's position_windows: windows [b, b+size-1] for b = beg, beg+step, ...;
            # with a known end the first window with b + size >= end is the last and ends at end.
            start = beg
            group = []
            while start <= end:
                if known_end and start + size >= end:
                    group.append(Window(chrom, start, end))
                    break
                group.append(Window(chrom, start, start + size - 1))
                start += step
            for rec in recs:
                pos = max(rec.pos, beg)  # a record overlapping the region start counts in its first window
                for w in group:
                    if w.start <= pos <= w.end:
                        w.records.append(rec)
            windows.extend(group)
        else:
            w = Window(chrom, beg, end)
            w.records = recs
            windows.append(w)
    return windows


# ------------------------------------------------------------------- counts

def cmd_counts(vcf, pops, args, out):
    write_row(out, ["chrom", "pos", "pop", "n_called_alleles", "n_alleles", "allele_counts",
                    "hom_ref", "het_ref", "hom_alt", "het_alt", "missing"])
    for _, rec in vcf.records():
        for name, members in pops.items():
            haps = haplotypes(rec, members)
            classes = dict.fromkeys(["hom_ref", "het_ref", "hom_alt", "het_alt", "missing"], 0)
            for s in members:
                classes[genotype_class(rec.calls[s])] += 1
            write_row(out, [rec.chrom, rec.pos, name, len(haps), rec.n_alleles,
                            ",".join(map(str, allele_counts(haps, rec.n_alleles)))] + list(classes.values()))


# ---------------------------------------------------------------- diversity

def zeng_var_h(n, S):
    """Var(theta_pi - theta_L) under the standard neutral model (Zeng et al. 2006, eq. 11)."""
    a = harmonic(n)
    b = harmonic(n, 2)
    bn1 = b + 1.0 / n ** 2
    theta = S / a
    theta2 = S * (S - 1) / (a * a + b)
    return ((n - 2) / (6 * (n - 1)) * theta
            + (18 * n * n * (3 * n + 2) * bn1 - (88 * n ** 3 + 9 * n * n - 13 * n + 6))
            / (9 * n * (n - 1) ** 2) * theta2)


def zeng_var_e(n, S):
    """Var(theta_L - theta_W) under the standard neutral model (Zeng et al. 2006, eq. 14)."""
    a = harmonic(n)
    b = harmonic(n, 2)
    theta = S / a
    theta2 = S * (S - 1) / (a * a + b)
    return ((n / (2 * (n - 1)) - 1 / a) * theta
            + (b / (a * a) + 2 * (n / (n - 1)) ** 2 * b - 2 * (n * b - n + 1) / ((n - 1) * a)
               - (3 * n + 1) / (n - 1)) * theta2)


def tajima_d_value(n, S, pi_sum):
    """Tajima (1989) D for S segregating sites among n sequences; nan if S == 0 or n < 2."""
    if S == 0 or n < 2:
        return math.nan
    a1, a2 = harmonic(n), harmonic(n, 2)
    b1 = (n + 1) / (3 * (n - 1))
    b2 = 2 * (n * n + n + 3) / (9 * n * (n - 1))
    c1 = b1 - 1 / a1
    c2 = b2 - (n + 2) / (a1 * n) + a2 / (a1 * a1)
    e1, e2 = c1 / a1, c2 / (a1 * a1 + a2)
    var = e1 * S + e2 * S * (S - 1)
    return (pi_sum - S / a1) / math.sqrt(var) if var > 0 else math.nan


def diversity_window(recs, members, args):
    """All diversity statistics of one population over a list of records."""
    r = dict(n_sites=len(recs), n_seg=0, pi_sum=0.0, theta_w=0.0, n_max=0, singletons=0,
             n_unfolded=0, s_unfolded=0, theta_pi_u=0.0, theta_h=0.0, theta_l=0.0, n_max_u=0)
    for rec in recs:
        haps = haplotypes(rec, members)
        n = len(haps)
        r["n_max"] = max(r["n_max"], n)
        if n < 2:
            continue
        r["pi_sum"] += pi_within(haps, rec.n_alleles, args.method)
        counts = allele_counts(haps, rec.n_alleles)
        if sum(c > 0 for c in counts) >= 2:
            r["n_seg"] += 1
            r["theta_w"] += 1.0 / harmonic(n)
            if 1 in counts:
                r["singletons"] += 1
        anc = ancestral_index(rec, args.ancestral)
        if anc is None:
            continue
        derived = [a for a in range(rec.n_alleles) if a != anc and counts[a] > 0]
        if len(derived) > 1:
            continue  # more than one derived allele: not in the unfolded statistics
        i = counts[derived[0]] if derived else 0
        r["n_unfolded"] += 1
        r["n_max_u"] = max(r["n_max_u"], n)
        if 0 < i < n:
            r["s_unfolded"] += 1
            r["theta_pi_u"] += 2.0 * i * (n - i) / (n * (n - 1))
            r["theta_h"] += 2.0 * i * i / (n * (n - 1))
            r["theta_l"] += i / (n - 1)
    r["tajima_d"] = tajima_d_value(r["n_max"], r["n_seg"], r["pi_sum"])
    r["fay_wu_h"] = r["theta_pi_u"] - r["theta_h"]
    n, S = r["n_max_u"], r["s_unfolded"]
    if S > 0 and n >= 3:
        var_h = zeng_var_h(n, S)
        var_e = zeng_var_e(n, S)
        r["fay_wu_h_norm"] = (r["theta_pi_u"] - r["theta_l"]) / math.sqrt(var_h) if var_h > 0 else math.nan
        r["zeng_e"] = (r["theta_l"] - S / harmonic(n)) / math.sqrt(var_e) if var_e > 0 else math.nan
    else:
        r["fay_wu_h_norm"] = r["zeng_e"] = math.nan
    return r


DIVERSITY_COLUMNS = ["n_sites", "n_seg", "pi_sum", "pi_per_bp", "theta_w", "theta_w_per_bp", "n_max",
                     "tajima_d", "singletons", "n_unfolded", "s_unfolded", "theta_pi_u", "theta_h", "theta_l",
                     "fay_wu_h", "fay_wu_h_norm", "zeng_e"]


def cmd_diversity(vcf, pops, args, out):
    if args.per_site:
        write_row(out, ["chrom", "pos", "pop", "n", "pi", "segregating"])
        for _, rec in vcf.records():
            for name, members in pops.items():
                if args.vcftools_compat and not is_fully_diploid(rec, range(len(vcf.samples))):
                    continue  # vcftools --site-pi: only sites where every kept sample is diploid
                haps = haplotypes(rec, members)
                seg = int(len(set(haps.tolist())) >= 2)
                write_row(out, [rec.chrom, rec.pos, name, len(haps), pi_within(haps, rec.n_alleles, args.method), seg])
        return
    if args.vcftools_compat:
        return vcftools_window_pi(vcf, pops, args, out)
    write_row(out, ["chrom", "start", "end", "pop"] + DIVERSITY_COLUMNS)
    for w in group_windows(vcf, args):
        for name, members in pops.items():
            r = diversity_window(w.records, members, args)
            r["pi_per_bp"] = r["pi_sum"] / w.length
            r["theta_w_per_bp"] = r["theta_w"] / w.length
            write_row(out, [w.chrom, w.start, w.end, name] + empty_na(w, [r[c] for c in DIVERSITY_COLUMNS]))


def vcftools_window_pi(vcf, pops, args, out):
    """vcftools --window-pi W --window-pi-step S (or --site-pi summed), per population.

    Bins s = 0, 1, ... cover [s*S+1, s*S+W]; only sites where every selected sample is
    diploid and that have at least one differing pair are binned; pi = sum of ordered
    differing pairs / (sum of ordered pairs at those sites + (W - their number) *
    N(N-1)) with N = twice the number of samples in the population; only bins with a
    site that is not all-REF are printed. With --tajima-d: vcftools --TajimaD W.
    """
    if args.tajima_d_compat:
        return vcftools_tajima_d(vcf, pops, args, out)
    size = args.window_size
    step = args.window_step if args.window_step and args.window_step <= size else size
    write_row(out, ["chrom", "bin_start", "bin_end", "pop", "n_variants", "pi"])
    for name, members in pops.items():
        bins = OrderedDict()
        for _, rec in vcf.records():
            if not is_fully_diploid(rec, range(len(vcf.samples))):
                continue
            haps = haplotypes(rec, members)
            n = len(haps)
            counts = allele_counts(haps, rec.n_alleles)
            mismatches = sum(c * (n - c) for c in counts)
            if mismatches == 0:
                continue
            first = max(0, math.ceil((rec.pos - size) / step))
            last = math.ceil(rec.pos / step)
            chrom_bins = bins.setdefault(rec.chrom, {})
            for idx in range(first, last):
                b = chrom_bins.setdefault(idx, [0, 0, 0, 0])
                b[0] += 1
                b[1] += n * (n - 1)
                b[2] += mismatches
                b[3] += counts[0] < n
        n_chr = 2 * len(members)
        for chrom, chrom_bins in bins.items():
            for idx in sorted(chrom_bins):
                b = chrom_bins[idx]
                if b[3] == 0 and b[2] == 0:
                    continue
                pairs = b[1] + (size - b[0]) * n_chr * (n_chr - 1)
                write_row(out, [chrom, idx * step + 1, idx * step + size, name, b[3], b[2] / pairs])


def vcftools_tajima_d(vcf, pops, args, out):
    """vcftools --TajimaD W: bins floor(POS/W) (BIN_START = s*W), biallelic records where
    every selected sample is diploid; n = 2 * samples of the population (fixed); a site
    counts when 0 < p < 1 with p the REF frequency among called alleles; pi = sum 2p(1-p)
    * n/(n-1); D printed from the first bin with a site on (nan where S = 0)."""
    size = args.window_size
    write_row(out, ["chrom", "bin_start", "pop", "n_snps", "tajima_d"])
    for name, members in pops.items():
        n = 2 * len(members)
        bins = OrderedDict()
        for _, rec in vcf.records():
            if rec.n_alleles != 2 or not is_fully_diploid(rec, range(len(vcf.samples))):
                continue
            haps = haplotypes(rec, members)
            idx = rec.pos // size
            chrom_bins = bins.setdefault(rec.chrom, [])
            while len(chrom_bins) <= idx:
                chrom_bins.append([0, 0.0])
            if len(haps) == 0:
                continue
            p = float(np.sum(haps == 0)) / len(haps)
            if 0.0 < p < 1.0:
                chrom_bins[idx][0] += 1
                chrom_bins[idx][1] += p * (1 - p)
        for chrom, chrom_bins in bins.items():
            on = False
            for s, (S, hsum) in enumerate(chrom_bins):
                D = math.nan
                if S > 0:
                    D = tajima_d_value(n, S, 2.0 * hsum * n / (n - 1))
                    on = True
                if on:
                    write_row(out, [chrom, s * size, name, S, D])


# --------------------------------------------------------------- divergence

WC_BIALLELIC = False


def wc_components(rec, pop_members):
    """Weir & Cockerham (1984) a, b, c summed over all alleles, from the samples with a
    complete diploid call; None where undefined (a population without such samples,
    n_bar <= 1, or n_c == 0). Per allele u (p = frequency, h = fraction heterozygous
    carriers of u):
      a = n_bar/n_c [s2 - (p_bar(1-p_bar) - (r-1)/r s2 - h_bar/4)/(n_bar-1)]
      b = n_bar/(n_bar-1) [p_bar(1-p_bar) - (r-1)/r s2 - (2 n_bar-1)/(4 n_bar) h_bar]
      c = h_bar/2
    """
    r = len(pop_members)
    k = rec.n_alleles
    n, p, h = [], [], []
    for members in pop_members:
        genotypes = [rec.calls[s] for s in members
                     if len(rec.calls[s]) == 2 and MISSING not in rec.calls[s]]
        ni = len(genotypes)
        if ni == 0:
            return None
        n.append(ni)
        p.append([sum(g.count(u) for g in genotypes) / (2.0 * ni) for u in range(k)])
        h.append([sum(1 for g in genotypes if g[0] != g[1] and u in g) / ni for u in range(k)])
    n_sum = float(sum(n))
    n_bar = n_sum / r
    n_c = (n_sum - sum(x * x for x in n) / n_sum) / (r - 1)
    if n_bar <= 1 or n_c == 0:
        return None
    A = B = C = 0.0
    for u in range(k):
        p_bar = sum(n[i] * p[i][u] for i in range(r)) / n_sum
        h_bar = sum(n[i] * h[i][u] for i in range(r)) / n_sum
        s2 = sum(n[i] * (p[i][u] - p_bar) ** 2 for i in range(r)) / ((r - 1) * n_bar)
        pq = p_bar * (1 - p_bar)
        A += n_bar / n_c * (s2 - (pq - (r - 1) / r * s2 - h_bar / 4) / (n_bar - 1))
        B += n_bar / (n_bar - 1) * (pq - (r - 1) / r * s2 - (2 * n_bar - 1) / (4 * n_bar) * h_bar)
        C += h_bar / 2
    return A, B, C


def divergence_site(rec, m1, m2, method):
    """Per-site two-population quantities (nan where undefined)."""
    h1, h2 = haplotypes(rec, m1), haplotypes(rec, m2)
    k = rec.n_alleles
    dxy = pi_between(h1, h2, k, method)
    pi1, pi2 = pi_within(h1, k, method), pi_within(h2, k, method)
    site = dict(n1=len(h1), n2=len(h2), dxy=dxy, pi1=pi1, pi2=pi2)
    site["hudson_num"] = dxy - (pi1 + pi2) / 2  # nan propagates when n1 < 2 or n2 < 2
    site["hudson_den"] = dxy if not math.isnan(site["hudson_num"]) else math.nan
    # Nei's Gst with equal population weights: Hs = mean(1 - sum p_i^2), Ht = 1 - sum pbar^2.
    # As pairs: 1 - sum p^2 = differing ordered pairs, self-pairs included, / n^2.
    if len(h1) and len(h2):
        if method == "pairs":
            hs1 = 2.0 * differing_pairs_within(h1) / len(h1) ** 2
            hs2 = 2.0 * differing_pairs_within(h2) / len(h2) ** 2
        else:
            p1 = np.array(allele_counts(h1, k)) / len(h1)
            p2 = np.array(allele_counts(h2, k)) / len(h2)
            hs1, hs2 = 1 - float(np.sum(p1 * p1)), 1 - float(np.sum(p2 * p2))
        site["nei_hs"] = (hs1 + hs2) / 2
        site["nei_ht"] = (hs1 + hs2) / 4 + dxy / 2
    else:
        site["nei_hs"] = site["nei_ht"] = math.nan
    wc = wc_components(rec, [m1, m2])
    if WC_BIALLELIC and wc is not None:
        # --wc-biallelic: only sites whose called haplotypes in the two populations carry REF
        # and at most one ALT (vczstats computes WC from genotype-class counts, which
        # determine the per-allele terms only there)
        present = set(h1) | set(h2)
        if len(present - {0}) > 1:
            wc = None
    site["wc_a"], site["wc_b"], site["wc_c"] = wc if wc else (math.nan,) * 3
    return site


def ratio(num, den):
    return num / den if den != 0 and not math.isnan(den) else math.nan


def divergence_window(recs, m1, m2, method):
    t = dict(n_sites=len(recs), n_hudson=0, dxy_sum=0.0, pi1_sum=0.0, pi2_sum=0.0, hudson_num=0.0,
             hudson_den=0.0, n_wc=0, wc_a=0.0, wc_abc=0.0, wc_fst_sum=0.0, nei_num=0.0, nei_ht=0.0)
    for rec in recs:
        s = divergence_site(rec, m1, m2, method)
        if not math.isnan(s["dxy"]):
            t["dxy_sum"] += s["dxy"]
        if not math.isnan(s["pi1"]):
            t["pi1_sum"] += s["pi1"]
        if not math.isnan(s["pi2"]):
            t["pi2_sum"] += s["pi2"]
        if not math.isnan(s["hudson_num"]):
            t["n_hudson"] += 1
            t["hudson_num"] += s["hudson_num"]
            t["hudson_den"] += s["hudson_den"]
        if not math.isnan(s["nei_ht"]):
            t["nei_num"] += s["nei_ht"] - s["nei_hs"]
            t["nei_ht"] += s["nei_ht"]
        abc = s["wc_a"] + s["wc_b"] + s["wc_c"]
        if not math.isnan(abc) and abc != 0:
            t["n_wc"] += 1
            t["wc_a"] += s["wc_a"]
            t["wc_abc"] += abc
            t["wc_fst_sum"] += s["wc_a"] / abc
    t["da_sum"] = t["dxy_sum"] - (t["pi1_sum"] + t["pi2_sum"]) / 2
    t["hudson_fst"] = ratio(t["hudson_num"], t["hudson_den"])
    t["wc_fst"] = ratio(t["wc_a"], t["wc_abc"])
    t["wc_fst_mean"] = t["wc_fst_sum"] / t["n_wc"] if t["n_wc"] else math.nan
    t["nei_gst"] = ratio(t["nei_num"], t["nei_ht"])
    return t


DIVERGENCE_COLUMNS = ["n_sites", "dxy_sum", "dxy_per_bp", "pi1_sum", "pi2_sum", "da_sum", "da_per_bp",
                      "n_hudson", "hudson_num", "hudson_den", "hudson_fst", "n_wc", "wc_a", "wc_abc",
                      "wc_fst", "wc_fst_mean", "nei_gst"]
SITE_DIVERGENCE_COLUMNS = ["n1", "n2", "dxy", "pi1", "pi2", "hudson_num", "hudson_den", "wc_a", "wc_b", "wc_c",
                           "nei_hs", "nei_ht"]


def pop_pairs(pops, args):
    names = list(pops)
    if args.pairs:
        pairs = [tuple(p.split(",")) for p in args.pairs.split(";")]
    else:
        pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    for pair in pairs:
        for name in pair:
            if name not in pops:
                raise SystemExit(f"ref_popgen: population {name!r} not in the population file")
    return pairs


def cmd_divergence(vcf, pops, args, out):
    pairs = pop_pairs(pops, args)
    if args.per_site:
        write_row(out, ["chrom", "pos", "pop1", "pop2"] + SITE_DIVERGENCE_COLUMNS + ["hudson_fst", "wc_fst"])
        for _, rec in vcf.records():
            if args.vcftools_compat and not is_fully_diploid(rec, range(len(vcf.samples))):
                continue  # vcftools --weir-fst-pop: only sites where every kept sample is diploid
            for a, b in pairs:
                s = divergence_site(rec, pops[a], pops[b], args.method)
                abc = s["wc_a"] + s["wc_b"] + s["wc_c"]
                write_row(out, [rec.chrom, rec.pos, a, b] + [s[c] for c in SITE_DIVERGENCE_COLUMNS]
                          + [ratio(s["hudson_num"], s["hudson_den"]), ratio(s["wc_a"], abc)])
        return
    if args.vcftools_compat:
        vcf_records = vcf.records
        vcf.records = lambda: ((k, r) for k, r in vcf_records() if is_fully_diploid(r, range(len(vcf.samples))))
    windows = group_windows(vcf, args)
    write_row(out, ["chrom", "start", "end", "pop1", "pop2"] + DIVERGENCE_COLUMNS)
    for w in windows:
        for a, b in pairs:
            t = divergence_window(w.records, pops[a], pops[b], args.method)
            t["dxy_per_bp"] = t["dxy_sum"] / w.length
            t["da_per_bp"] = t["da_sum"] / w.length
            write_row(out, [w.chrom, w.start, w.end, a, b] + empty_na(w, [t[c] for c in DIVERGENCE_COLUMNS]))
    if args.pbs:
        A, B, C = args.pbs.split(",")
        write_row(out, ["chrom", "start", "end", "pbs_pop", "pop_b", "pop_c", "fst_ab", "fst_ac", "fst_bc", "pbs"])
        for w in windows:
            f = {}
            for x, y in ((A, B), (A, C), (B, C)):
                f[x, y] = divergence_window(w.records, pops[x], pops[y], args.method)["hudson_fst"]
            T = {key: -math.log(1 - v) if v < 1 else math.nan for key, v in f.items()}
            pbs = (T[A, B] + T[A, C] - T[B, C]) / 2
            write_row(out, [w.chrom, w.start, w.end, A, B, C, f[A, B], f[A, C], f[B, C], pbs])


# ---------------------------------------------------------------------- sfs

def sfs_count(rec, members, anc_mode):
    """Derived-allele count and n at a biallelic record where every member has a call of
    the file's full ploidy with no missing allele; None otherwise."""
    if rec.n_alleles != 2:
        return None
    anc = ancestral_index(rec, anc_mode)
    if anc is None:
        return None
    haps = []
    for s in members:
        call = rec.calls[s]
        if MISSING in call or len(call) != rec_ploidy(rec):
            return None
        haps.extend(call)
    return sum(1 for a in haps if a != anc), len(haps)


def rec_ploidy(rec):
    return max(len(c) for c in rec.calls)


def cmd_sfs(vcf, pops, args, out):
    records = [rec for _, rec in vcf.records()]
    if args.joint:
        a, b = args.joint.split(",")
        table = {}
        for rec in records:
            x, y = sfs_count(rec, pops[a], args.ancestral), sfs_count(rec, pops[b], args.ancestral)
            if x is None or y is None:
                continue
            key = (x[1], y[1], x[0], y[0])
            table[key] = table.get(key, 0) + 1
        write_row(out, ["pop1", "pop2", "n1", "n2", "derived1", "derived2", "count"])
        for n1, n2 in sorted({(k[0], k[1]) for k in table}):
            for i in range(n1 + 1):
                for j in range(n2 + 1):
                    write_row(out, [a, b, n1, n2, i, j, table.get((n1, n2, i, j), 0)])
        return
    write_row(out, ["pop", "n", "folded" if args.folded else "derived", "count"])
    for name, members in pops.items():
        spectra = {}
        for rec in records:
            x = sfs_count(rec, members, args.ancestral)
            if x is None:
                continue
            i, n = x
            spectrum = spectra.setdefault(n, [0] * (n + 1))
            spectrum[i] += 1
        for n in sorted(spectra):
            spectrum = spectra[n]
            if args.folded:
                folded = [0] * (n // 2 + 1)
                for i, c in enumerate(spectrum):
                    folded[min(i, n - i)] += c
                spectrum = folded
            for i, c in enumerate(spectrum):
                write_row(out, [name, n, i, c])


# ------------------------------------------------------------------- fstats

def fstat_site(rec, groups, kind, method):
    """Per-site (numerator, denominator) of f2 / f3 / D at a biallelic record."""
    hs = [haplotypes(rec, m) for m in groups]
    if method == "pairs":
        # f2(X,Y) = dxy - (pi_X + pi_Y)/2 (Patterson's unbiased f2 written as pairs)
        def f2(x, y):
            return (pi_between(hs[x], hs[y], 2, "pairs")
                    - (pi_within(hs[x], 2, "pairs") + pi_within(hs[y], 2, "pairs")) / 2)
        if kind == "f2":
            return f2(0, 1), 1.0
        def dxy(x, y):
            return pi_between(hs[x], hs[y], 2, "pairs")
        if kind == "f3":  # groups C, A, B: f3 = (dxy(C,A) + dxy(C,B) - dxy(A,B) - pi_C) / 2, den pi_C
            pi_c = pi_within(hs[0], 2, "pairs")
            return (dxy(0, 1) + dxy(0, 2) - dxy(1, 2) - pi_c) / 2, pi_c
        # D: f4 = (dxy(A,D) + dxy(B,C) - dxy(A,C) - dxy(B,D)) / 2 (the within-population terms
        # of the four f2 cancel), den = dxy(A,B) * dxy(C,D)
        num = (dxy(0, 3) + dxy(1, 2) - dxy(0, 2) - dxy(1, 3)) / 2
        den = dxy(0, 1) * dxy(2, 3)
        return num, den
    # closed forms of Patterson (2012) / scikit-allel, with the ALT frequency
    n = [len(h) for h in hs]
    if any(x == 0 for x in n):
        return math.nan, math.nan
    f = [float(np.sum(h == 1)) / len(h) for h in hs]

    def hhat(x):
        if n[x] < 2:
            return math.nan
        c1 = float(np.sum(hs[x] == 1))
        return c1 * (n[x] - c1) / (n[x] * (n[x] - 1))
    if kind == "f2":
        return (f[0] - f[1]) ** 2 - hhat(0) / n[0] - hhat(1) / n[1], 1.0
    if kind == "f3":
        return (f[0] - f[1]) * (f[0] - f[2]) - hhat(0) / n[0], 2 * hhat(0)
    a, b, c, d = f
    return (a - b) * (c - d), (a + b - 2 * a * b) * (c + d - 2 * c * d)


def jackknife(num_blocks, den_blocks):
    """Delete-one block jackknife of sum(num)/sum(den): (se, values)."""
    nb = len(num_blocks)
    if nb < 2:
        return math.nan, []
    tn, td = sum(num_blocks), sum(den_blocks)
    vj = [(tn - num_blocks[i]) / (td - den_blocks[i]) for i in range(nb)]
    m = sum(vj) / nb
    return math.sqrt((nb - 1) / nb * sum((v - m) ** 2 for v in vj)), vj


def cmd_fstats(vcf, pops, args, out):
    if args.f2:
        kind, names = "f2", args.f2.split(",")
    elif args.f3:
        kind, names = "f3", args.f3.split(",")
    elif args.d:
        kind, names = "d", args.d.split(",")
    else:
        raise SystemExit("ref_popgen fstats: give --f2 A,B, --f3 C,A,B or --d A,B,C,D")
    groups = [pops[x] for x in names]
    values = []
    for _, rec in vcf.records():
        if rec.n_alleles != 2:
            continue
        num, den = fstat_site(rec, groups, kind, args.method)
        values.append((rec, num, den))
    if args.per_site:
        write_row(out, ["chrom", "pos", "num", "den"])
        for rec, num, den in values:
            write_row(out, [rec.chrom, rec.pos, num, den])
        return
    # totals: sum(num)/sum(den) over the biallelic records where both are defined; f2's den
    # is 1 per such site, so f2 is the mean over them
    def nansum(xs):
        return sum(x for x in xs if not math.isnan(x))
    defined = [not math.isnan(v[1]) and not math.isnan(v[2]) for v in values]
    nums = [v[1] if ok else math.nan for v, ok in zip(values, defined)]
    dens = [v[2] if ok else math.nan for v, ok in zip(values, defined)]
    est = ratio(nansum(nums), nansum(dens))
    se = math.nan
    nb = 0
    if args.blocks:
        B = args.blocks
        nb = len(values) // B  # complete blocks only; the estimate uses every site
        nbk = [nansum(nums[i * B:(i + 1) * B]) for i in range(nb)]
        dbk = [nansum(dens[i * B:(i + 1) * B]) for i in range(nb)]
        se, _ = jackknife(nbk, dbk)
    write_row(out, ["stat", "pops", "n_sites", "n_defined", "num_sum", "den_sum", "estimate", "n_blocks", "se", "z"])
    write_row(out, [kind, ",".join(names), len(values), sum(defined), nansum(nums), nansum(dens), est, nb, se,
                    est / se if se and not math.isnan(se) else math.nan])


# ---------------------------------------------------------------- hwe / het

def snphwe(n_het, n_hom1, n_hom2, midp=False):
    """Hardy-Weinberg exact test p-value (Wigginton, Cutler & Abecasis 2005): the sum of
    the probabilities of all heterozygote counts no more likely than the observed one,
    given the allele counts; midp subtracts half the observed probability."""
    n = n_het + n_hom1 + n_hom2
    if n == 0:
        return math.nan
    rare = 2 * min(n_hom1, n_hom2) + n_het
    # probabilities of het counts with the same parity as rare, relative to the mode
    probs = {}
    mid = rare * (2 * n - rare) // (2 * n)
    if (mid % 2) != (rare % 2):
        mid += 1
    probs[mid] = 1.0
    hets, hom_r, hom_c = mid, (rare - mid) // 2, n - mid - (rare - mid) // 2
    while hets >= 2:
        p = probs[hets] * hets * (hets - 1) / (4.0 * (hom_r + 1) * (hom_c + 1))
        probs[hets - 2] = p
        hets -= 2
        hom_r += 1
        hom_c += 1
    hets, hom_r, hom_c = mid, (rare - mid) // 2, n - mid - (rare - mid) // 2
    while hets <= rare - 2:
        p = probs[hets] * 4.0 * hom_r * hom_c / ((hets + 2) * (hets + 1))
        probs[hets + 2] = p
        hets += 2
        hom_r -= 1
        hom_c -= 1
    total = sum(probs.values())
    obs = probs[n_het]
    p = sum(v for v in probs.values() if v <= obs * (1 + 1e-12))
    if midp:
        p -= obs / 2
    return min(1.0, p / total)


def cmd_hwe(vcf, pops, args, out):
    write_row(out, ["chrom", "pos", "pop", "hom_ref", "het", "hom_alt", "o_het", "e_het", "p_hwe"])
    for _, rec in vcf.records():
        if rec.n_alleles != 2:
            continue
        for name, members in pops.items():
            g = [rec.calls[s] for s in members if len(rec.calls[s]) == 2 and MISSING not in rec.calls[s]]
            hom_ref = sum(1 for x in g if x == (0, 0))
            hom_alt = sum(1 for x in g if x == (1, 1))
            het = len(g) - hom_ref - hom_alt
            n = len(g)
            if n == 0:
                write_row(out, [rec.chrom, rec.pos, name, 0, 0, 0, math.nan, math.nan, math.nan])
                continue
            q = (2 * hom_alt + het) / (2.0 * n)
            write_row(out, [rec.chrom, rec.pos, name, hom_ref, het, hom_alt, het / n, 2 * q * (1 - q),
                            snphwe(het, hom_ref, hom_alt, args.midp)])


def cmd_het(vcf, pops, args, out):
    """Per-sample method-of-moments F as plink2 --het: over records where every call of the
    population... (see POPGEN.md): O(HOM) homozygous complete diploid calls, E(HOM) = sum over
    those sites of sum_u p_u^2 (p from all complete diploid calls of the population; with
    --small-sample 1 - (1 - sum p^2) * m/(m-1), m = called alleles), F = (O - E)/(N - E)."""
    write_row(out, ["sample", "pop", "o_hom", "e_hom", "n_obs", "f"])
    recs = [rec for _, rec in vcf.records()]
    for name, members in pops.items():
        o = {s: 0 for s in members}
        e = {s: 0.0 for s in members}
        nobs = {s: 0 for s in members}
        for rec in recs:
            called = [s for s in members if len(rec.calls[s]) == 2 and MISSING not in rec.calls[s]]
            m = 2 * len(called)
            if m == 0:
                continue
            counts = [0] * rec.n_alleles
            for s in called:
                for a in rec.calls[s]:
                    counts[a] += 1
            if sum(1 for c in counts if c > 0) < 2:
                continue  # monomorphic among the called genotypes: plink2 skips the variant
            hom = sum((c / m) ** 2 for c in counts)
            if args.small_sample:
                if m < 2:
                    continue
                hom = 1 - (1 - hom) * m / (m - 1)
            for s in called:
                nobs[s] += 1
                o[s] += rec.calls[s][0] == rec.calls[s][1]
                e[s] += hom
        for s in members:
            f = (o[s] - e[s]) / (nobs[s] - e[s]) if nobs[s] - e[s] != 0 else math.nan
            write_row(out, [vcf.samples[s], name, o[s], e[s], nobs[s], f])


# ------------------------------------------------------------------------ CLI

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("vcf")
    common.add_argument("-s", "--samples", help="comma-separated sample subset")
    common.add_argument("-P", "--pops", help="population file: sample, population")
    common.add_argument("-r", "--regions", help="chr[:beg[-end]],...")
    common.add_argument("--regions-overlap", choices=("record", "pos"), default="record")
    common.add_argument("--ancestral", choices=("ref", "aa"), default="ref")
    common.add_argument("--method", choices=("pairs", "counts"), default="pairs")
    common.add_argument("--vcftools-compat", action="store_true")
    common.add_argument("--wc-biallelic", action="store_true",
                        help="Weir & Cockerham only where the two populations carry REF and at "
                             "most one ALT")
    common.add_argument("--half-call", choices=("keep", "missing"), default="keep",
                        help="missing: a call with a missing allele is missing as a whole (plink2 --vcf-half-call m)")
    common.add_argument("-o", "--output")
    win = argparse.ArgumentParser(add_help=False)
    win.add_argument("--window-size", type=int)
    win.add_argument("--window-step", type=int)
    win.add_argument("--window-variants", type=int)
    win.add_argument("--window-span", choices=("data", "contig"), default="data",
                     help="bp windows (and the one window per group) from the first to the last "
                          "record (data) or over the contig / region (contig)")
    win.add_argument("--whole", action="store_true", help="one row over every selected record (length: sum of "
                     "the region / contig lengths)")
    sub.add_parser("counts", parents=[common])
    d = sub.add_parser("diversity", parents=[common, win])
    d.add_argument("--per-site", action="store_true")
    d.add_argument("--tajima-d-compat", action="store_true", help="with --vcftools-compat: vcftools --TajimaD")
    v = sub.add_parser("divergence", parents=[common, win])
    v.add_argument("--pairs", help="'A,B;C,D' (default: all pairs)")
    v.add_argument("--pbs", help="A,B,C: population branch statistic of A")
    v.add_argument("--per-site", action="store_true")
    s = sub.add_parser("sfs", parents=[common])
    s.add_argument("--folded", action="store_true")
    s.add_argument("--joint", help="A,B: joint SFS")
    f = sub.add_parser("fstats", parents=[common])
    f.add_argument("--f2")
    f.add_argument("--f3", help="C,A,B: f3(C; A, B)")
    f.add_argument("--d", help="A,B,C,D: D(A, B; C, D)")
    f.add_argument("--blocks", type=int, help="block-jackknife block size (variants)")
    f.add_argument("--per-site", action="store_true")
    w = sub.add_parser("windows", parents=[common, win])
    w.add_argument("--stat", choices=("diversity", "divergence"), required=True)
    w.add_argument("--pairs")
    w.add_argument("--pbs")
    h = sub.add_parser("hwe", parents=[common])
    h.add_argument("--midp", action="store_true")
    e = sub.add_parser("het", parents=[common])
    e.add_argument("--small-sample", action="store_true")
    args = p.parse_args(argv)
    global WC_BIALLELIC
    WC_BIALLELIC = args.wc_biallelic

    regions = parse_regions(args.regions) if args.regions else None
    vcf = Vcf(args.vcf, args.samples.split(",") if args.samples else None, regions, args.regions_overlap,
              args.half_call)
    pops = read_pops(args.pops, vcf.samples) if args.pops else OrderedDict([("ALL", list(range(len(vcf.samples))))])
    out = open(args.output, "w") if args.output else sys.stdout
    for attr in ("per_site", "tajima_d_compat", "window_size", "window_step", "window_variants", "pairs", "pbs"):
        if not hasattr(args, attr):
            setattr(args, attr, None)
    if args.command == "windows":
        if not (args.window_size or args.window_variants):
            p.error("windows needs --window-size or --window-variants")
        args.command = args.stat
    if args.vcftools_compat and args.command == "diversity" and not args.per_site and not args.window_size:
        p.error("--vcftools-compat diversity needs --per-site or --window-size")
    {"counts": cmd_counts, "diversity": cmd_diversity, "divergence": cmd_divergence, "sfs": cmd_sfs,
     "fstats": cmd_fstats, "hwe": cmd_hwe, "het": cmd_het}[args.command](vcf, pops, args, out)
    if args.output:
        out.close()


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        sys.exit(0)
