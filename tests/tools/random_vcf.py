#!/usr/bin/python3
"""Write a deterministic random VCF for tests.

The same arguments (and --seed) always give the same file. Features, each
switchable so tests can target one behaviour at a time:
  * several contigs, each declared with a ##contig line (with length);
  * positions sorted and unique per contig, close enough together that the
    long-REF indels overlap the records after them (region queries must
    decide on overlap, not on POS alone);
  * allele frequencies from a neutral-like spectrum: the derived-allele count
    k of 2n is drawn with weight 1/k, so most variants are rare;
  * --multiallelic: fraction of sites with 2-4 ALT alleles;
  * --alt-dot: fraction of sites with ALT '.' (monomorphic reference);
  * --missing: probability that one allele of a call is missing, so both
    partial ('0/.') and complete ('./.') missing calls occur;
  * --ploidy 1, 2 or 3 and --mixed-ploidy: fraction of sites at which each
    sample is haploid with probability 1/2 (written '0' in a diploid file);
  * --phased: fraction of calls written with '|'.
Output is plain VCF on stdout or -o FILE; --bgzip compresses it with bgzip
and indexes it with `tabix -p vcf` (implied by an -o name ending in .gz).

Example:
  random_vcf.py --seed 1 --samples 20 --variants 500 --contigs 3 \\
      --missing 0.05 --multiallelic 0.1 --mixed-ploidy 0.1 -o x.vcf.gz
"""

import argparse
import io
import os
import subprocess
import sys

import numpy as np

BASES = np.array(list("ACGT"))


def random_sequence(rng, length):
    return "".join(rng.choice(BASES, size=length))


def neutral_alt_count(rng, num_alleles):
    """Derived-allele count in 1..num_alleles-1 with weight 1/k (Watterson)."""
    k = np.arange(1, max(num_alleles, 2))
    weights = 1.0 / k
    return int(rng.choice(k, p=weights / weights.sum()))


def make_alleles(rng, args):
    """Return (ref, [alts]) for one site."""
    u = rng.random()
    if u < args.alt_dot:
        return random_sequence(rng, 1), []
    num_alt = int(rng.integers(2, 5)) if rng.random() < args.multiallelic else 1
    if rng.random() < args.indels:
        # a deletion with a long REF, or an insertion; ALTs distinct
        ref = random_sequence(rng, int(rng.integers(2, args.max_ref_length + 1)))
        alts = set()
        while len(alts) < num_alt:
            if rng.random() < 0.5:
                alt = ref[: int(rng.integers(1, len(ref)))]
            else:
                alt = ref + random_sequence(rng, int(rng.integers(1, 6)))
            if alt != ref:
                alts.add(alt)
        return ref, sorted(alts, key=lambda a: (len(a), a))
    ref = random_sequence(rng, 1)
    others = [b for b in "ACGT" if b != ref]
    if num_alt > len(others):
        num_alt = len(others)
    alts = list(rng.choice(others, size=num_alt, replace=False))
    return ref, alts


def site_genotypes(rng, args, num_alt):
    """Return (alleles int array samples x ploidy, -1 missing; haploid mask)."""
    n, ploidy = args.samples, args.ploidy
    alleles = np.zeros((n, ploidy), dtype=np.int64)
    if num_alt > 0:
        total = n * ploidy
        derived = neutral_alt_count(rng, total)
        freq = derived / total
        is_alt = rng.random((n, ploidy)) < freq
        # split the derived alleles among the ALTs, earlier ALTs more common
        weights = 1.0 / np.arange(1, num_alt + 1)
        which = rng.choice(np.arange(1, num_alt + 1), size=(n, ploidy), p=weights / weights.sum())
        alleles = np.where(is_alt, which, 0)
    haploid = np.zeros(n, dtype=bool)
    if ploidy == 2 and rng.random() < args.mixed_ploidy:
        haploid = rng.random(n) < 0.5
    if args.missing > 0:
        alleles[rng.random((n, ploidy)) < args.missing] = -1
    return alleles, haploid


ALLELE_TEXT = np.array(["."] + [str(i) for i in range(10)], dtype=object)


def format_calls(alleles, haploid, phased):
    """VCF GT strings for one site (object-array arithmetic, no per-call loop)."""
    text = ALLELE_TEXT[alleles + 1]
    sep = np.where(phased, "|", "/").astype(object)
    calls = text[:, 0]
    for k in range(1, alleles.shape[1]):
        calls = calls + sep + text[:, k]
    return np.where(haploid, text[:, 0], calls)


def write_vcf(out, args):
    rng = np.random.default_rng(args.seed)
    contigs = [f"chr{i + 1}" for i in range(args.contigs)]
    counts = np.full(args.contigs, args.variants // args.contigs)
    counts[: args.variants % args.contigs] += 1

    out.write("##fileformat=VCFv4.2\n")
    out.write(f"##source=random_vcf.py seed={args.seed}\n")
    spacing = args.mean_spacing
    lengths = []
    for c, count in zip(contigs, counts):
        length = int(count * (spacing + 1) + args.max_ref_length + 1000)
        lengths.append(length)
        out.write(f"##contig=<ID={c},length={length}>\n")
    out.write('##FILTER=<ID=PASS,Description="All filters passed">\n')
    out.write('##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n')
    samples = [f"S{i:04d}" for i in range(args.samples)]
    out.write("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT")
    out.write("".join("\t" + s for s in samples) + "\n")

    for c, count in zip(contigs, counts):
        gaps = rng.geometric(1.0 / spacing, size=count)
        positions = np.cumsum(gaps)  # strictly increasing: unique and sorted
        for pos in positions:
            ref, alts = make_alleles(rng, args)
            vid = f"rs{int(rng.integers(1, 10**8))}" if rng.random() < 0.3 else "."
            alleles, haploid = site_genotypes(rng, args, len(alts))
            phased = rng.random(args.samples) < args.phased
            calls = list(format_calls(alleles, haploid, phased))
            fields = [c, str(int(pos)), vid, ref, ",".join(alts) if alts else ".",
                      ".", "PASS", ".", "GT"]
            out.write("\t".join(fields + calls) + "\n")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--samples", type=int, default=10)
    p.add_argument("--variants", type=int, default=100)
    p.add_argument("--contigs", type=int, default=1)
    p.add_argument("--missing", type=float, default=0.0, help="probability an allele is missing")
    p.add_argument("--multiallelic", type=float, default=0.0, help="fraction of sites with 2-4 ALTs")
    p.add_argument("--alt-dot", type=float, default=0.0, help="fraction of sites with ALT '.'")
    p.add_argument("--indels", type=float, default=0.1, help="fraction of indel sites (long REF)")
    p.add_argument("--max-ref-length", type=int, default=30, help="longest indel REF")
    p.add_argument("--mean-spacing", type=float, default=10.0, help="mean gap between positions")
    p.add_argument("--mixed-ploidy", type=float, default=0.0,
                   help="fraction of sites where each sample is haploid with probability 1/2 "
                        "(needs --ploidy 2)")
    p.add_argument("--ploidy", type=int, choices=(1, 2, 3), default=2)
    p.add_argument("--phased", type=float, default=0.0, help="fraction of calls written phased")
    p.add_argument("-o", "--output", help="output file (default stdout)")
    p.add_argument("--bgzip", action="store_true", help="bgzip and tabix-index the output")
    args = p.parse_args(argv)
    if args.samples < 1 or args.variants < 0 or args.contigs < 1:
        p.error("need at least one sample and contig, and variants >= 0")
    if args.mean_spacing < 1:
        p.error("--mean-spacing must be >= 1")
    if args.output and args.output.endswith(".gz"):
        args.bgzip = True
    if args.bgzip and not args.output:
        p.error("--bgzip needs -o FILE")
    return args


def main(argv=None):
    args = parse_args(argv)
    text = io.StringIO()
    write_vcf(text, args)
    data = text.getvalue().encode()
    if not args.output:
        sys.stdout.buffer.write(data)
        return
    if args.bgzip:
        with open(args.output, "wb") as f:
            subprocess.run(["bgzip", "-c"], input=data, stdout=f, check=True)
        subprocess.run(["tabix", "-f", "-p", "vcf", args.output], check=True)
    else:
        with open(args.output, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
