#!/usr/bin/python3
"""Reference implementations of the allele-frequency distribution (afdist).

Two independent references that vczstats' `afdist` is tested against:

  ref_afdist.py zarr STORE [--samples A,B] [--variant-range START:STOP] [--num-bins N]
      `zarr_afdist` exactly as defined in the VCF Zarr publication: a
      straightforward Python/numba implementation over call_genotype read with
      python3-zarr (directory or .zip store). Diploid only. Per variant, over
      the n selected samples with alleles (a, b): a == b counts as hom_ref when
      a == 0 and as hom_alt otherwise (so './.' is hom_alt); a != b is het;
      ref_count += (a == 0) + (b == 0), so missing alleles count as non-ref.
      af = (2n - ref_count) / 2n; pRA = 2 af (1 - af); pAA = af^2; bins =
      linspace(0, 1, N + 1) with the last edge raised by 0.0125; het calls are
      binned by pRA and hom_alt calls by pAA with np.digitize; the first
      (below 0) bin is dropped. This is also the benchmark's Python baseline.

  ref_afdist.py bcftools VCF [-r REGIONS] [-s A,B] [--bins N]
      Runs `bcftools [view -r/-s] | bcftools +fill-tags -- -t AF |
      bcftools +af-dist [-- -p EDGES]` and reformats its PROB_DIST lines. Samples
      are subset before fill-tags so AF is that of the subset. Regions need an
      indexed file: an unindexed input is bgzipped and indexed in a temporary
      directory first (this also declares contigs missing from the header,
      which +fill-tags otherwise refuses). --bins N passes the edges
      repr(i / N), i = 0..N, which bcftools parses with strtod into floats.

Both print TSV: a header `start<TAB>stop<TAB>prob_dist`, then one row per bin.
zarr edges are Python's repr of the float64 edges (0.30000000000000004, last
stop 1.0125); bcftools edges are the strings bcftools printed (%f of float32).
Compare the two on the integer prob_dist column.
"""

import argparse
import collections.abc
import json
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

import numba
import numpy as np
import zarr


# ---------------------------------------------------------------- zarr_afdist

@numba.njit(nogil=True, cache=True)
def count_genotypes_chunk(G, samples):
    """Per-variant het, hom_alt and ref_count over the given sample columns."""
    m = G.shape[0]
    het = np.zeros(m, dtype=np.int64)
    hom_alt = np.zeros(m, dtype=np.int64)
    ref_count = np.zeros(m, dtype=np.int64)
    for j in range(m):
        for k in samples:
            a = G[j, k, 0]
            b = G[j, k, 1]
            if a == b:
                if a != 0:
                    hom_alt[j] += 1
            else:
                het[j] += 1
            ref_count[j] += (a == 0) + (b == 0)
    return het, hom_alt, ref_count


class NullFillAsZero(collections.abc.MutableMapping):
    """Read-only store view whose arrays with fill_value null read absent chunks as zeros.

    bio2zarr omits all-zero chunks and writes fill_value null; the Zarr v2 spec leaves null
    undefined and python3-zarr then returns uninitialised memory for such chunks. VCF Zarr
    means 0 (all hom-ref), so say so explicitly.
    """

    def __init__(self, store):
        self.store = store

    def __getitem__(self, key):
        value = self.store[key]
        if key.endswith(".zarray"):
            meta = json.loads(value)
            if meta.get("fill_value") is None and meta.get("dtype") != "|O":
                meta["fill_value"] = 0
                value = json.dumps(meta).encode()
        return value

    def __iter__(self):
        return iter(self.store)

    def __len__(self):
        return len(self.store)

    def __contains__(self, key):
        return key in self.store

    def __setitem__(self, key, value):
        raise TypeError("read-only store")

    def __delitem__(self, key):
        raise TypeError("read-only store")


def open_store(path):
    """Open a VCZ store: a directory, or a .zip read through zarr.ZipStore."""
    if os.path.isfile(path):
        store = zarr.ZipStore(path, mode="r")
    else:
        store = zarr.DirectoryStore(path)
    return zarr.open_group(zarr.storage.KVStore(NullFillAsZero(store)), mode="r")


def zarr_afdist(path, num_bins=10, samples=None, variant_range=None):
    """Return (bins, counts): bins has num_bins + 1 edges, counts num_bins ints."""
    root = open_store(path)
    call_genotype = root["call_genotype"]
    num_variants, num_all_samples, ploidy = call_genotype.shape
    if ploidy != 2:
        raise SystemExit(f"ref_afdist: zarr_afdist is defined for diploid data, "
                         f"call_genotype has ploidy {ploidy}")
    if samples:
        sample_id = list(root["sample_id"][:])
        lookup = {s: i for i, s in enumerate(sample_id)}
        missing = [s for s in samples if s not in lookup]
        if missing:
            raise SystemExit(f"ref_afdist: samples not in the store: {','.join(missing)}")
        sample_index = np.array(sorted(lookup[s] for s in samples), dtype=np.int64)
    else:
        sample_index = None
    n = num_all_samples if sample_index is None else len(sample_index)
    start, stop = variant_range if variant_range else (0, num_variants)
    start, stop = max(0, start), min(num_variants, stop)

    bins = np.linspace(0, 1.0, num_bins + 1)
    bins[-1] += 0.0125
    a = np.zeros(num_bins + 1, dtype=np.float64)
    b = np.zeros(num_bins + 1, dtype=np.float64)
    chunk = call_genotype.chunks[0]
    columns = np.arange(n, dtype=np.int64)
    lo = start
    while lo < stop:
        hi = min(stop, (lo // chunk + 1) * chunk)  # one variant chunk at a time
        if sample_index is None:
            G = call_genotype[lo:hi]
        else:
            G = call_genotype.get_orthogonal_selection((slice(lo, hi), sample_index, slice(None)))
        het, hom_alt, ref_count = count_genotypes_chunk(G, columns)
        alt_count = 2 * n - ref_count
        x = alt_count / (2 * n)
        pRA = 2 * x * (1 - x)
        pAA = x * x
        a += np.bincount(np.digitize(pRA, bins), weights=het, minlength=num_bins + 1)
        b += np.bincount(np.digitize(pAA, bins), weights=hom_alt, minlength=num_bins + 1)
        lo = hi
    count = (a + b).astype(int)
    return bins, count[1:]


# ------------------------------------------------------------ bcftools af-dist

def bin_edges_arg(num_bins):
    return ",".join(repr(i / num_bins) for i in range(num_bins + 1))


def has_index(path):
    return any(os.path.exists(path + ext) for ext in (".tbi", ".csi"))


def indexed_copy(vcf, tmpdir):
    """Return an indexed copy of vcf (VCF, VCF.gz or BCF) in tmpdir."""
    with open(vcf, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":  # BGZF: index a copy as it is (BCF or VCF.gz)
        with gzip.open(vcf, "rb") as f:
            is_bcf = f.read(3) == b"BCF"
        out = os.path.join(tmpdir, "input.bcf" if is_bcf else "input.vcf.gz")
        shutil.copyfile(vcf, out)
        if subprocess.run(["bcftools", "index", "-f", out], capture_output=True).returncode == 0:
            return out
        os.remove(out)  # plain gzip rather than BGZF: recompress below
        source = subprocess.Popen(["gzip", "-dc", vcf], stdout=subprocess.PIPE)
    else:
        source = subprocess.Popen(["cat", vcf], stdout=subprocess.PIPE)
    out = os.path.join(tmpdir, "input.vcf.gz")
    with open(out, "wb") as f:
        subprocess.run(["bgzip", "-c"], stdin=source.stdout, stdout=f, check=True)
    source.stdout.close()
    source.wait()
    subprocess.run(["tabix", "-p", "vcf", out], check=True)
    return out


def bcftools_afdist(vcf, regions=None, samples=None, num_bins=None):
    """Run bcftools +fill-tags | +af-dist; return [(start, stop, count)] strings/ints."""
    tmpdir = tempfile.mkdtemp(prefix="ref_afdist-")
    try:
        if not has_index(vcf):
            vcf = indexed_copy(vcf, tmpdir)
        stages = []
        if regions or samples:
            view = ["bcftools", "view", "-Ou"]
            if regions:
                view += ["-r", regions]
            if samples:
                view += ["-s", ",".join(samples)]
            stages.append(view + [vcf])
            stages.append(["bcftools", "+fill-tags", "-Ou", "-", "--", "-t", "AF"])
        else:
            stages.append(["bcftools", "+fill-tags", "-Ou", vcf, "--", "-t", "AF"])
        afdist = ["bcftools", "+af-dist", "-"]
        if num_bins:
            afdist += ["--", "-p", bin_edges_arg(num_bins)]
        stages.append(afdist)

        procs, prev = [], None
        for i, cmd in enumerate(stages):
            last = i == len(stages) - 1
            p = subprocess.Popen(cmd, stdin=prev, stdout=subprocess.PIPE)
            if prev is not None:
                prev.close()
            prev = p.stdout
            procs.append(p)
        output = procs[-1].stdout.read().decode()
        procs[-1].stdout.close()
        for cmd, p in zip(stages, procs):
            if p.wait() != 0:
                raise SystemExit(f"ref_afdist: {' '.join(cmd)} failed (exit {p.returncode})")
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    rows = []
    for line in output.splitlines():
        if line.startswith("PROB_DIST\t"):
            _, lo, hi, count = line.split("\t")
            rows.append((lo, hi, int(count)))
    return rows


# ------------------------------------------------------------------------ CLI

def parse_range(text):
    try:
        start, stop = text.split(":")
        return int(start), int(stop)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected START:STOP, got {text!r}")


def parse_samples(text):
    return [s for s in text.split(",") if s]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    pz = sub.add_parser("zarr", help="zarr_afdist (Python/numba) on a VCZ store")
    pz.add_argument("store", help="VCZ store: directory or .zip")
    pz.add_argument("-s", "--samples", type=parse_samples, help="comma-separated sample ids")
    pz.add_argument("--variant-range", type=parse_range, help="START:STOP, 0-based half-open")
    pz.add_argument("--num-bins", type=int, default=10)
    pb = sub.add_parser("bcftools", help="bcftools +fill-tags | +af-dist on a VCF/BCF")
    pb.add_argument("vcf")
    pb.add_argument("-r", "--regions", help="bcftools regions, e.g. chr1:100-200")
    pb.add_argument("-s", "--samples", type=parse_samples, help="comma-separated sample ids")
    pb.add_argument("--bins", type=int, help="N equal bins (edges i/N) instead of the default 10")
    args = p.parse_args(argv)

    out = sys.stdout
    out.write("start\tstop\tprob_dist\n")
    if args.command == "zarr":
        if args.num_bins < 1:
            p.error("--num-bins must be positive")
        bins, counts = zarr_afdist(args.store, args.num_bins, args.samples, args.variant_range)
        for i, c in enumerate(counts):
            out.write(f"{float(bins[i])!r}\t{float(bins[i + 1])!r}\t{int(c)}\n")
    else:
        if args.bins is not None and args.bins < 1:
            p.error("--bins must be positive")
        for lo, hi, c in bcftools_afdist(args.vcf, args.regions, args.samples, args.bins):
            out.write(f"{lo}\t{hi}\t{c}\n")


if __name__ == "__main__":
    main()
