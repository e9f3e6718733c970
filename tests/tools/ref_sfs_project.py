#!/usr/bin/env python3
"""Brute-force reference for projected site frequency spectra (vczstats sfs --project), in
exact rational arithmetic (fractions.Fraction, math.comb), from a VCF's text; the standard
library only.

  ref_sfs_project.py vcf OUT.vcf --pops-out POPS [--seed S] [--samples N] [--variants M]
        [--pops K] [--missing P] [--partial P] [--multiallelic P] [--aa P]
      a random diploid VCF: calls missing (./.) with probability --missing, partly missing
      (0/., ./1) with --partial, sites with two ALT alleles with --multiallelic, INFO/AA
      (REF, ALT, lower case, or N) on a fraction --aa of the sites; and a population file.
  ref_sfs_project.py sfs VCF -P POPS --project N|POP=N,... [--joint A,B,...] [--folded]
        [--ancestral ref|aa] [--preview] [--window-size W]
      the spectra as vczstats prints them (TSV); --window-size: one per bp window of W from
      the first site (one contig), rows chrom, start, end and the spectrum's columns.

Definitions (written from Marth et al. 2004 and dadi's documentation, not from vczstats):
a site enters when it has exactly two alleles (REF and one ALT) and a known ancestral allele.
In a population, n = the called alleles (the non-missing alleles of its members' calls) and
d = those that are not the ancestral allele. A site with n >= N adds to class j
C(d, j) C(n - d, N - j) / C(n, N); a joint spectrum needs n_i >= N_i in every population and
adds the product. Folded: class min(j, N - j) in every population. Preview: for m = 2..N,
the sites with n >= m and the sum over them of 1 - P(0 derived) - P(m derived) at size m.
"""

import argparse
import random
import sys
from fractions import Fraction
from math import comb


def write_vcf(args):
    rng = random.Random(args.seed)
    names = [f"s{i}" for i in range(args.samples)]
    with open(args.out, "w") as f:
        f.write("##fileformat=VCFv4.2\n##contig=<ID=chr1,length=10000000>\n")
        f.write('##INFO=<ID=AA,Number=1,Type=String,Description="Ancestral allele">\n')
        f.write('##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n')
        f.write("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t" + "\t".join(names) + "\n")
        pos = 0
        bases = "ACGT"
        for _ in range(args.variants):
            pos += rng.randint(1, 50)
            ref = rng.choice(bases)
            others = [b for b in bases if b != ref]
            rng.shuffle(others)
            k = 3 if rng.random() < args.multiallelic else 2
            alts = others[:k - 1]
            p = rng.random() ** 2  # many rare variants
            info = "."
            if rng.random() < args.aa:
                info = "AA=" + rng.choice([ref, alts[0], alts[0].lower(), "N"])
            calls = []
            for _ in names:
                def allele():
                    if k == 3 and rng.random() < 0.1:
                        return "2"
                    return "1" if rng.random() < p else "0"
                a, b = allele(), allele()
                u = rng.random()
                if u < args.missing:
                    a = b = "."
                elif u < args.missing + args.partial:
                    if rng.random() < 0.5:
                        a = "."
                    else:
                        b = "."
                calls.append(f"{a}/{b}")
            f.write(f"chr1\t{pos}\t.\t{ref}\t{','.join(alts)}\t.\t.\t{info}\tGT\t" + "\t".join(calls) + "\n")
    with open(args.pops_out, "w") as f:
        f.write("sample\tpopulation\n")
        for i, s in enumerate(names):
            f.write(f"{s}\tpop{i % args.pops}\n")


def read_vcf(path):
    samples, sites = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("##"):
                continue
            fields = line.rstrip("\n").split("\t")
            if line.startswith("#"):
                samples = fields[9:]
                continue
            ref, alts, info = fields[3], fields[4], fields[7]
            alleles = [ref] + ([] if alts == "." else alts.split(","))
            aa = None
            for item in info.split(";"):
                if item.startswith("AA="):
                    aa = item[3:].split("|")[0]
            calls = [c.split(":")[0].replace("|", "/").split("/") for c in fields[9:]]
            sites.append((alleles, aa, calls, int(fields[1])))
    return samples, sites


def read_pops(path, samples):
    index = {s: i for i, s in enumerate(samples)}
    pops = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0] == "sample":
                continue
            pops.setdefault(parts[1], []).append(index[parts[0]])
    return pops


def ancestral(alleles, aa, mode):
    if mode == "ref":
        return 0
    if aa is None:
        return None
    upper = [a.upper() for a in alleles]
    return upper.index(aa.upper()) if aa.upper() in upper else None


def hypergeom(n, d, size, j):
    return Fraction(comb(d, j) * comb(n - d, size - j), comb(n, size))


def fmt(x):
    v = float(x)
    return str(int(v)) if v == int(v) and abs(v) < 2**53 else repr(v)


def cmd_sfs(args):
    samples, sites = read_vcf(args.vcf)
    pops = read_pops(args.pops, samples)
    names = list(pops)  # order of first appearance, as vczstats
    spec = {}
    for item in args.project.split(","):
        if "=" in item:
            k, v = item.split("=")
            spec[k] = int(v)
        else:
            spec[""] = int(item)
    size = lambda p: spec.get(p, spec.get(""))
    counted = []  # per site: {pop: (n, d)} of sites that enter
    positions = [site[3] for site in sites]
    for alleles, aa, calls, pos in sites:
        if len(alleles) != 2:
            continue
        anc = ancestral(alleles, aa, args.ancestral)
        if anc is None:
            continue
        nd = {}
        for p, members in pops.items():
            called = [a for m in members for a in calls[m] if a != "."]
            nd[p] = (len(called), sum(1 for a in called if int(a) != anc))
        nd["_pos"] = pos
        counted.append(nd)
    if args.window_size:  # bp windows from the first site, the last one ending at the last site
        first, last, w = positions[0], positions[-1], args.window_size
        for k in range((last - first) // w + 1):
            start, end = first + k * w, min(first + (k + 1) * w - 1, last)
            body = Lines()
            spectra(args, names, spec, size, [nd for nd in counted if start <= nd["_pos"] <= end],
                    body)
            if k == 0:
                sys.stdout.write("chrom\tstart\tend\t" + body.lines[0])
            for line in body.lines[1:]:
                sys.stdout.write(f"chr1\t{start}\t{end}\t{line}")
        return
    spectra(args, names, spec, size, counted, sys.stdout)


class Lines:
    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines.append(text)


def spectra(args, names, spec, size, counted, out):
    if args.preview:
        use = [p for p in names if p in spec or "" in spec]
        out.write("population\tn\tsites\tsegregating_sites\n")
        for p in use:
            for m in range(2, size(p) + 1):
                kept = [nd[p] for nd in counted if nd[p][0] >= m]
                seg = sum((1 - hypergeom(n, d, m, 0) - hypergeom(n, d, m, m) for n, d in kept),
                          Fraction(0))
                out.write(f"{p}\t{m}\t{len(kept)}\t{fmt(seg)}\n")
        return
    if args.joint:
        jp = args.joint.split(",")
        sizes = [size(p) for p in jp]
        shape = [s + 1 for s in sizes]
        table = {}
        for nd in counted:
            if any(nd[p][0] < s for p, s in zip(jp, sizes)):
                continue
            ranges = [[(j, hypergeom(nd[p][0], nd[p][1], s, j)) for j in range(s + 1)]
                      for p, s in zip(jp, sizes)]
            def rec(i, idx, w):
                if i == len(jp):
                    table[idx] = table.get(idx, Fraction(0)) + w
                    return
                for j, pj in ranges[i]:
                    if pj:
                        rec(i + 1, idx + (j,), w * pj)
            rec(0, (), Fraction(1))
        if args.folded:
            folded = {}
            for idx, v in table.items():
                key = tuple(min(j, s - j) for j, s in zip(idx, sizes))
                folded[key] = folded.get(key, Fraction(0)) + v
            table = folded
            shape = [s // 2 + 1 for s in sizes]
        kind = "folded" if args.folded else "derived"
        k = len(jp)
        out.write("\t".join([f"pop{i+1}" for i in range(k)] + [f"n{i+1}" for i in range(k)] +
                            [f"{kind}{i+1}" for i in range(k)] + ["count"]) + "\n")
        def walk(i, idx):
            if i == k:
                out.write("\t".join(jp + [str(s) for s in sizes] + [str(j) for j in idx] +
                                    [fmt(table.get(idx, 0))]) + "\n")
                return
            for j in range(shape[i]):
                walk(i + 1, idx + (j,))
        walk(0, ())
        return
    use = [p for p in names if p in spec or "" in spec]
    out.write("population\tn\t" + ("folded" if args.folded else "derived") + "\tcount\n")
    for p in use:
        s = size(p)
        spectrum = [Fraction(0)] * (s + 1)
        for nd in counted:
            n, d = nd[p]
            if n >= s:
                for j in range(s + 1):
                    spectrum[j] += hypergeom(n, d, s, j)
        if args.folded:
            f = [Fraction(0)] * (s // 2 + 1)
            for j, v in enumerate(spectrum):
                f[min(j, s - j)] += v
            spectrum = f
        for j, v in enumerate(spectrum):
            out.write(f"{p}\t{s}\t{j}\t{fmt(v)}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("vcf")
    v.add_argument("out")
    v.add_argument("--pops-out", required=True)
    v.add_argument("--seed", type=int, default=1)
    v.add_argument("--samples", type=int, default=20)
    v.add_argument("--variants", type=int, default=200)
    v.add_argument("--pops", type=int, default=2)
    v.add_argument("--missing", type=float, default=0.1)
    v.add_argument("--partial", type=float, default=0.03)
    v.add_argument("--multiallelic", type=float, default=0.1)
    v.add_argument("--aa", type=float, default=0.0)
    s = sub.add_parser("sfs")
    s.add_argument("vcf")
    s.add_argument("-P", "--pops", required=True)
    s.add_argument("--project", required=True)
    s.add_argument("--joint", default="")
    s.add_argument("--folded", action="store_true")
    s.add_argument("--preview", action="store_true")
    s.add_argument("--window-size", type=int, default=0)
    s.add_argument("--ancestral", default="ref", choices=("ref", "aa"))
    args = ap.parse_args()
    if args.cmd == "vcf":
        write_vcf(args)
    else:
        cmd_sfs(args)


if __name__ == "__main__":
    main()
