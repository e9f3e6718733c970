#!/usr/bin/python3
"""Compare the VCF Zarr arrays of two stores (directories or .zip) value by value.

Compares the arrays vcf2vcz.py writes (or those named with --arrays) that both
stores hold: values, shapes and _ARRAY_DIMENSIONS; dtypes only by kind (signed
int / bool / string), because bio2zarr picks the smallest integer width.
Prints one line per array and exits 1 if any array differs.

Example:
  compare_vcz.py mine.vcz shared/data/vcztools/sample.vcz.zip
"""

import argparse
import sys

import numpy as np
import zarr

DEFAULT_ARRAYS = (
    "sample_id", "contig_id", "contig_length", "variant_contig", "variant_position",
    "variant_length", "variant_allele", "variant_id", "variant_id_mask",
    "call_genotype", "call_genotype_phased", "call_genotype_mask", "region_index",
)


def open_store(path):
    store = zarr.ZipStore(path, mode="r") if path.endswith(".zip") else zarr.DirectoryStore(path)
    return zarr.open_group(store, mode="r")


def compare_array(a, b):
    """Return a list of differences between zarr arrays a and b."""
    problems = []
    if a.shape != b.shape:
        return [f"shape {a.shape} != {b.shape}"]
    if a.dtype.kind != b.dtype.kind:
        problems.append(f"dtype {a.dtype} != {b.dtype}")
    dims_a, dims_b = a.attrs.get("_ARRAY_DIMENSIONS"), b.attrs.get("_ARRAY_DIMENSIONS")
    if dims_a != dims_b:
        problems.append(f"_ARRAY_DIMENSIONS {dims_a} != {dims_b}")
    x, y = a[...], b[...]
    if x.dtype.kind in "iub" and y.dtype.kind in "iub":
        x, y = x.astype(np.int64), y.astype(np.int64)
    diff = x != y
    if np.any(diff):
        where = np.argwhere(diff)
        first = tuple(int(v) for v in where[0])
        problems.append(f"{len(where)} values differ, first at {first}: {x[first]!r} != {y[first]!r}")
    return problems


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--arrays", help="comma-separated array names (default: the vcf2vcz.py set)")
    p.add_argument("--skip", default="", help="comma-separated array names not to compare")
    args = p.parse_args(argv)
    ga, gb = open_store(args.a), open_store(args.b)
    names = args.arrays.split(",") if args.arrays else DEFAULT_ARRAYS
    skip = set(filter(None, args.skip.split(",")))
    failed = False
    for name in names:
        if name in skip:
            continue
        if name not in ga or name not in gb:
            print(f"{name}: only in {'a' if name in ga else 'b' if name in gb else 'neither'}")
            continue
        problems = compare_array(ga[name], gb[name])
        print(f"{name}: {'ok' if not problems else '; '.join(problems)}")
        failed = failed or bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
