#!/usr/bin/env python3
"""Write a synthetic VCF Zarr store for benchmarks (Zarr v2 directory store, bio2zarr layout).

Needs only numpy and libblosc (loaded with ctypes), so it runs where python3-zarr is not
installed, e.g. on the GPU machine with blosc unpacked from Debian's .deb (point
VCZ_BLOSC_LIB at libblosc.so.1 or put it on LD_LIBRARY_PATH).

`vczstats simulate` replaces it in the benchmarks (scripts/gpu-check.sh uses it when the
vczstats build is there); this script stays as the fallback.

Model (simple on purpose; `vczstats simulate` has a population-genetic one): each
variant draws an ALT frequency from a neutral-like spectrum (density proportional to 1/p on
[1/(2n), 1/2]), each haplotype carries ALT with that probability, and a fraction --missing of
alleles is set to -1. Genotypes are int8, diploid, chunked like bio2zarr's defaults
(10,000 variants × 1,000 samples) and compressed with blosc zstd level 7 with bitshuffle, so
chunks decode like real stores. Deterministic for a given --seed and chunk sizes.

Example: bench/make_synthetic_store.py --samples 10000 --variants 100000 out.vcz
"""

import argparse
import ctypes
import ctypes.util
import json
import os
import shutil
import struct
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def load_blosc():
    name = os.environ.get("VCZ_BLOSC_LIB") or ctypes.util.find_library("blosc")
    candidates = [name] if name else []
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") + ["/usr/lib/x86_64-linux-gnu"]:
        if d:
            candidates.append(os.path.join(d, "libblosc.so.1"))
    for c in candidates:
        try:
            lib = ctypes.CDLL(c)
            lib.blosc_compress_ctx.restype = ctypes.c_int
            lib.blosc_compress_ctx.argtypes = [
                ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p,
                ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
            return lib
        except OSError:
            continue
    sys.exit("make_synthetic_store: cannot load libblosc (set VCZ_BLOSC_LIB)")


BLOSC = None
SHUFFLE = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}


def compress(data: bytes, typesize: int, shuffle: str, clevel=7) -> bytes:
    out = ctypes.create_string_buffer(len(data) + 16 + 64)
    n = BLOSC.blosc_compress_ctx(clevel, SHUFFLE[shuffle], typesize, len(data), data, out,
                                 len(out), b"zstd", 0, 1)
    if n <= 0:
        raise RuntimeError("blosc compression failed")
    return out.raw[:n]


def compressor_meta(shuffle):
    return {"id": "blosc", "cname": "zstd", "clevel": 7, "shuffle": SHUFFLE[shuffle],
            "blocksize": 0}


def write_array(root, name, shape, chunks, dtype, dims, shuffle, fill_value=None, filters=None):
    os.makedirs(os.path.join(root, name))
    meta = {"shape": list(shape), "chunks": list(chunks), "dtype": dtype, "fill_value": fill_value,
            "order": "C", "filters": filters, "dimension_separator": ".",
            "compressor": compressor_meta(shuffle), "zarr_format": 2}
    with open(os.path.join(root, name, ".zarray"), "w") as f:
        json.dump(meta, f, indent=2)
    with open(os.path.join(root, name, ".zattrs"), "w") as f:
        json.dump({"_ARRAY_DIMENSIONS": dims}, f)


def write_chunk(root, name, key, data: bytes, typesize, shuffle):
    with open(os.path.join(root, name, key), "wb") as f:
        f.write(compress(data, typesize, shuffle))


def vlen_utf8(strings):
    parts = [struct.pack("<I", len(strings))]
    for s in strings:
        b = s.encode()
        parts.append(struct.pack("<I", len(b)) + b)
    return b"".join(parts)


def genotype_chunk(seed, v0, v1, s0, s1, n_samples, missing):
    """Genotypes of variants [v0, v1) × samples [s0, s1), as a full-size chunk's rows."""
    rng = np.random.default_rng([seed, v0])
    # One frequency per variant, from the variant chunk's own stream (same for every sample
    # chunk), then the sample chunk's haplotypes from a stream keyed by both.
    lo, hi = 1.0 / (2 * n_samples), 0.5
    p = lo * np.exp(rng.random(v1 - v0) * np.log(hi / lo))
    hap_rng = np.random.default_rng([seed, v0, s0])
    g = (hap_rng.random((v1 - v0, s1 - s0, 2), dtype=np.float32) < p[:, None, None].astype(np.float32))
    g = g.astype(np.int8)
    if missing > 0:
        g[hap_rng.random(g.shape, dtype=np.float32) < missing] = -1
    return g


ALLELE_TEXT = {-1: b".", 0: b"0", 1: b"1"}


def vcf_lines(positions, blocks):
    """VCF records (unphased GT) of one variant chunk: blocks are the sample chunks' genotypes."""
    g = np.concatenate(blocks, axis=1)  # variants × samples × 2
    text = np.array([b".", b"0", b"1"])[g.astype(np.int64) + 1]  # -1, 0, 1 → text
    calls = np.char.add(np.char.add(text[:, :, 0], b"/"), text[:, :, 1])
    lines = []
    for v in range(g.shape[0]):
        lines.append(b"chr1\t%d\t.\tA\tT\t.\tPASS\t.\tGT\t" % positions[v] +
                     b"\t".join(calls[v]) + b"\n")
    return b"".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--samples", type=int, default=10000)
    p.add_argument("--variants", type=int, default=100000)
    p.add_argument("--variants-chunk-size", type=int, default=10000)
    p.add_argument("--samples-chunk-size", type=int, default=1000)
    p.add_argument("--missing", type=float, default=0.002)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("-f", "--force", action="store_true", help="overwrite an existing store")
    p.add_argument("--vcf", help="also write the same genotypes as a gzipped VCF (for peers)")
    a = p.parse_args()
    global BLOSC
    BLOSC = load_blosc()
    if os.path.exists(a.out):
        if not a.force:
            sys.exit(f"make_synthetic_store: {a.out} exists (use -f)")
        shutil.rmtree(a.out)
    tmp = a.out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    t0 = time.time()
    V, S, cv, cs = a.variants, a.samples, a.variants_chunk_size, a.samples_chunk_size
    with open(os.path.join(tmp, ".zgroup"), "w") as f:
        json.dump({"zarr_format": 2}, f)
    with open(os.path.join(tmp, ".zattrs"), "w") as f:
        json.dump({"vcf_zarr_version": "0.4", "source": "vczstats bench/make_synthetic_store.py"}, f)

    write_array(tmp, "sample_id", [S], [S], "|O", ["samples"], "shuffle", "",
                [{"id": "vlen-utf8"}])
    write_chunk(tmp, "sample_id", "0", vlen_utf8([f"S{i:07d}" for i in range(S)]), 1, "shuffle")
    write_array(tmp, "contig_id", [1], [1], "|O", ["contigs"], "shuffle", "", [{"id": "vlen-utf8"}])
    write_chunk(tmp, "contig_id", "0", vlen_utf8(["chr1"]), 1, "shuffle")
    write_array(tmp, "contig_length", [1], [1], "<i8", ["contigs"], "shuffle", 0)
    write_chunk(tmp, "contig_length", "0", np.array([10 * V + 1000], "<i8").tobytes(), 8, "shuffle")
    write_array(tmp, "variant_position", [V], [cv], "<i4", ["variants"], "shuffle", None)
    write_array(tmp, "variant_contig", [V], [cv], "|i1", ["variants"], "shuffle", None)
    write_array(tmp, "variant_allele", [V, 2], [cv, 2], "|O", ["variants", "alleles"], "shuffle", "",
                [{"id": "vlen-utf8"}])
    write_array(tmp, "call_genotype", [V, S, 2], [cv, cs, 2], "|i1",
                ["variants", "samples", "ploidy"], "bitshuffle", None)

    def variant_chunk(i):
        v0, v1 = i * cv, min(V, (i + 1) * cv)
        pos = (np.arange(cv, dtype=np.int64) + v0) * 10 + 1
        write_chunk(tmp, "variant_position", str(i), pos.astype("<i4").tobytes(), 4, "shuffle")
        write_chunk(tmp, "variant_contig", str(i), np.zeros(cv, "|i1").tobytes(), 1, "shuffle")
        write_chunk(tmp, "variant_allele", f"{i}.0", vlen_utf8(["A", "T"] * cv), 1, "shuffle")
        stored = 0
        for j in range((S + cs - 1) // cs):
            s0, s1 = j * cs, min(S, (j + 1) * cs)
            full = np.zeros((cv, cs, 2), dtype=np.int8)  # edge chunks are stored full size
            full[: v1 - v0, : s1 - s0] = genotype_chunk(a.seed, v0, v1, s0, s1, S, a.missing)
            key = f"{i}.{j}.0"
            write_chunk(tmp, "call_genotype", key, full.tobytes(), 1, "bitshuffle")
            stored += os.path.getsize(os.path.join(tmp, "call_genotype", key))
        if a.vcf:
            vcf_parts[i] = vcf_lines(pos[: v1 - v0], [
                genotype_chunk(a.seed, v0, v1, j * cs, min(S, (j + 1) * cs), S, a.missing)
                for j in range((S + cs - 1) // cs)])
        return stored

    vcf_parts = {}
    with ThreadPoolExecutor(max_workers=a.threads) as pool:
        stored = sum(pool.map(variant_chunk, range((V + cv - 1) // cv)))
    os.rename(tmp, a.out)
    if a.vcf:
        import gzip
        with gzip.open(a.vcf + ".tmp", "wb", compresslevel=1) as f:
            f.write(b"##fileformat=VCFv4.2\n")
            f.write(f"##contig=<ID=chr1,length={10 * V + 1000}>\n".encode())
            f.write(b'##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n')
            f.write(("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t"
                     + "\t".join(f"S{i:07d}" for i in range(S)) + "\n").encode())
            for i in sorted(vcf_parts):
                f.write(vcf_parts[i])
        os.rename(a.vcf + ".tmp", a.vcf)
    decoded = V * S * 2
    print(f"make_synthetic_store: {a.out}: {S} samples x {V} variants, call_genotype "
          f"{decoded / 1e9:.2f} GB decoded, {stored / 1e6:.1f} MB stored "
          f"({decoded / max(stored, 1):.1f}x), {time.time() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
