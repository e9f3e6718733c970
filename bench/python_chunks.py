#!/usr/bin/python3
"""Streaming genotypes into Python: vczstats' iter_chunks and materialize against python3-zarr
reading the same call_genotype chunk by chunk, on the same store in the same run.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_chunks.py [STORE] [-n RUNS]
       [-t THREADS] [-r REGION] [--samples K]
  STORE      default ../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip
  -n RUNS    timed runs of each reader after one untimed (warm page cache); median reported
  -t THREADS vczstats' producer threads (default: all cores)
  -r REGION  a region (default: the whole store)
  --samples K  read every K-th sample only (a subset across sample chunks; default all)

Each reader sums the genotypes it received (a checksum the three must agree on, which also
makes every block be touched). Prints a Markdown table: wall seconds, decoded GB/s (bytes of
call_genotype selected) and time relative to vczstats' iter_chunks.
"""

import argparse
import os
import statistics
import time

import numpy as np
import zarr

import vczstats

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "shared", "data", "ag1000g",
                       "gamb.X.8-12Mb.n100.derived.vcz.zip")


def open_zarr(path):
    if path.endswith(".zip"):
        return zarr.open_group(zarr.ZipStore(path, mode="r"), mode="r")
    return zarr.open_group(path, mode="r")


def zarr_chunks(path, region, step):
    """python3-zarr: variant chunk by variant chunk, the selected variants and samples."""
    z = open_zarr(path)
    gt = z["call_genotype"]
    pos = z["variant_position"][:]
    keep = np.ones(len(pos), dtype=bool)
    if region:
        contig, _, span = region.partition(":")
        keep &= z["variant_contig"][:] == list(z["contig_id"][:]).index(contig)
        if span:
            lo, hi = (int(x) for x in span.split("-"))
            keep &= (pos >= lo) & (pos <= hi)
    cols = slice(None, None, step)
    total = 0
    size = gt.chunks[0]
    for start in range(0, gt.shape[0], size):
        rows = np.flatnonzero(keep[start:start + size])
        if len(rows) == 0:
            continue
        block = gt[start + rows[0]:start + rows[-1] + 1, cols]
        total += int(block[rows - rows[0]].sum(dtype=np.int64))
    return total


def vcz_chunks(store, region, samples, threads):
    total = 0
    for chunk in store.iter_chunks(region, samples=samples, threads=threads,
                                   regions_overlap="pos"):
        total += int(chunk.genotypes.sum(dtype=np.int64))
    return total


def vcz_materialize(store, region, samples, threads):
    g = store.materialize(region, samples=samples, threads=threads, regions_overlap="pos")
    return int(g.genotypes.sum(dtype=np.int64))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("store", nargs="?", default=DEFAULT)
    p.add_argument("-n", type=int, default=3)
    p.add_argument("-t", "--threads", type=int, default=0)
    p.add_argument("-r", "--region")
    p.add_argument("--samples", type=int, default=1)
    a = p.parse_args()
    store = vczstats.open(a.store)
    samples = None if a.samples == 1 else list(range(0, store.num_samples, a.samples))
    readers = {
        "vczstats iter_chunks": lambda: vcz_chunks(store, a.region, samples, a.threads),
        "vczstats materialize": lambda: vcz_materialize(store, a.region, samples, a.threads),
        "python3-zarr, chunk by chunk": lambda: zarr_chunks(a.store, a.region, a.samples),
    }
    times, sums = {}, {}
    for name, fn in readers.items():
        sums[name] = fn()  # untimed: warm page cache
        runs = []
        for _ in range(a.n):
            t = time.perf_counter()
            fn()
            runs.append(time.perf_counter() - t)
        times[name] = statistics.median(runs)
    if len(set(sums.values())) != 1:
        print(f"warning: the readers disagree: {sums}")
    it = store.iter_chunks(a.region, samples=samples, regions_overlap="pos")
    nbytes = it.num_variants * len(it.samples) * it.ploidy * it.dtype.itemsize
    it.close()
    base = times["vczstats iter_chunks"]
    print(f"{a.store}: {it.num_variants} variants x {len(it.samples)} samples x {it.ploidy} "
          f"({nbytes / 1e6:.0f} MB decoded), {a.n} runs, threads {a.threads or 'all'}\n")
    print("| reader | wall s | decoded GB/s | time / iter_chunks |")
    print("| --- | ---: | ---: | ---: |")
    for name, t in times.items():
        print(f"| {name} | {t:.3f} | {nbytes / t / 1e9:.3f} | {t / base:.1f}x |")


if __name__ == "__main__":
    main()
