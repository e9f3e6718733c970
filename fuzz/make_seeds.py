#!/usr/bin/python3
"""Seed corpora of the fuzz targets (fuzz/*.cpp): real documents and chunks from ../shared/data
(when present), and inputs encoded here with Debian's numcodecs, zlib, bz2 and zipfile in the
layouts each target declares. Usage: make_seeds.py TARGET OUTDIR (OUTDIR is created)."""

import bz2
import gzip
import hashlib
import io
import json
import os
import random
import struct
import subprocess
import sys
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("VCZSTATS_SHARED_DATA",
                        os.path.join(HERE, "..", "..", "shared", "data"))
MAX_SEED = 64 * 1024
rng = random.Random(16)


def shared(*parts):
    p = os.path.join(SHARED, *parts)
    return p if os.path.exists(p) else None


def shared_zips(max_size=200_000):
    d = shared("vcztools")
    if not d:
        return []
    return sorted(os.path.join(d, f) for f in os.listdir(d)
                  if f.endswith(".zip") and os.path.getsize(os.path.join(d, f)) <= max_size)


def save(out, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX_SEED:
        return
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


# ---- encoders ---------------------------------------------------------------------------------

def vlen(items):
    b = struct.pack("<I", len(items))
    for s in items:
        s = s.encode() if isinstance(s, str) else s
        b += struct.pack("<I", len(s)) + s
    return b


def strings(n):
    pool = ["A", "T", "GATTACA", "", "rs123", "NA12878", "\u00e9\u4e2d", "x" * 40]
    return [rng.choice(pool) for _ in range(n)]


def numbers(n, dtype, kind):
    if kind == 0:
        a = np.arange(n)
    elif kind == 1:
        a = np.array([rng.randrange(-3, 4) for _ in range(n)])
    else:
        a = np.zeros(n)
    return a.astype(dtype)


def compressors():
    """(layout's compressor config, encode function) of every compressor target."""
    from numcodecs import Blosc, BZ2, GZip, LZ4, Zlib, Zstd
    out = {}
    blosc = []
    for cname in ("lz4", "zstd", "blosclz", "zlib", "lz4hc"):
        for shuffle in (0, 1, 2):
            blosc.append(Blosc(cname=cname, clevel=5, shuffle=shuffle).encode)
    out["blosc"] = blosc
    out["zstd"] = [Zstd(level=3).encode, Zstd(level=19).encode]
    out["lz4"] = [LZ4(acceleration=1).encode]
    out["zlib"] = [Zlib(level=1).encode, Zlib(level=9).encode]
    out["gzip"] = [GZip(level=1).encode]
    out["bz2"] = [BZ2(level=1).encode]
    return out


# The layouts of fuzz/codec.cpp, in its order: (selector, raw bytes of a chunk).
def compressor_payloads():
    p = []
    for kind in range(3):
        p.append((0, numbers(300, "<i4", kind).tobytes()))
        p.append((2, numbers(28, "u1", kind).tobytes()))
    p.append((1, vlen(strings(20))))
    return p


def crc(data):
    import crc32c
    return data + struct.pack("<I", crc32c.crc32c(data))


# ---- per target ------------------------------------------------------------------------------

def seeds_metadata(out, v3):
    name = "zarr.json" if v3 else ".zarray"
    for path in shared_zips():
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            for n in sorted(names):
                if not n.endswith("/" + name) and n != name:
                    continue
                doc = z.read(n)
                if v3 and json.loads(doc).get("node_type") != "array":
                    continue
                save(out, doc)
                folder = n[: -len(name)]
                chunks = sorted(c for c in names if c.startswith(folder) and c != n
                                and not c.endswith((".zattrs", ".zarray", "zarr.json")))
                if chunks:
                    save(out, doc + b"\0" + z.read(chunks[0]))
    # Hand-written documents: every dtype, fill value and codec family the reader knows.
    if v3:
        for t in ("bool", "int8", "uint16", "int64", "float32", "float64", "string"):
            doc = {"zarr_format": 3, "node_type": "array", "shape": [5, 3], "data_type": t,
                   "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
                   "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
                   "fill_value": "NaN" if t.startswith("float") else 0,
                   "codecs": [{"name": "vlen-utf8"}] if t == "string" else
                   [{"name": "transpose", "configuration": {"order": [1, 0]}},
                    {"name": "bytes", "configuration": {"endian": "big"}},
                    {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3,
                                                        "shuffle": "bitshuffle", "typesize": 1,
                                                        "blocksize": 0}}],
                   "dimension_names": ["variants", "samples"]}
            save(out, json.dumps(doc))
    else:
        for dtype in ("|b1", "|i1", "<u2", ">i4", "<f8", "|S5", "<U3", "|O"):
            doc = {"zarr_format": 2, "shape": [7, 4], "chunks": [3, 4], "dtype": dtype,
                   "compressor": {"id": "zstd", "level": 1}, "fill_value": 0, "order": "C",
                   "filters": [{"id": "vlen-utf8"}] if dtype == "|O" else None,
                   "dimension_separator": "/"}
            save(out, json.dumps(doc))


def seeds_codec(out, codec):
    if codec in ("blosc", "zstd", "lz4", "zlib", "gzip", "bz2"):
        for encode in compressors()[codec]:
            for selector, raw in compressor_payloads():
                save(out, bytes([selector]) + bytes(encode(raw)))
        if codec == "blosc":  # real chunks of the shared stores (other sizes: rejected early)
            for path in shared_zips(60_000):
                with zipfile.ZipFile(path) as z:
                    for n in sorted(z.namelist())[:40]:
                        if "/" in n and not n.endswith(("zarray", "zattrs", "json", "zgroup")):
                            save(out, b"\0" + z.read(n))
    elif codec == "crc32c":
        save(out, b"\0" + crc(numbers(50, "<i4", 0).tobytes()))
        save(out, b"\1" + crc(vlen(strings(10))))
    elif codec == "vlen":
        save(out, b"\0" + vlen(strings(20)))
        save(out, b"\1" + vlen([bytes([rng.randrange(256) for _ in range(3)]) for _ in range(20)]))
        save(out, b"\2" + vlen(strings(12)))
    elif codec == "fixed_strings":
        save(out, b"\0" + b"".join(s.encode()[:7].ljust(7, b"\0") for s in strings(20)))
        save(out, b"\1" + "".join(s[:3].ljust(3, "\0") for s in strings(20)).encode("utf-32-le"))
        save(out, b"\2" + "".join(s[:2].ljust(2, "\0") for s in strings(9)).encode("utf-32-be"))
    elif codec == "delta":
        from numcodecs import Delta
        for selector, dtype, astype in ((0, "<i4", "<i4"), (1, "<i8", "<i1"), (2, "<f8", "<f4"),
                                        (3, ">u2", ">u1"), (4, "<i4", "<f8"), (5, "<u8", "<f4")):
            for kind in range(3):
                save(out, bytes([selector]) +
                     Delta(dtype=dtype, astype=astype).encode(numbers(40, dtype, kind)).tobytes())
    elif codec == "packbits":
        from numcodecs import PackBits
        for selector, n in ((0, 37), (1, 24)):
            save(out, bytes([selector]) +
                 PackBits().encode(np.array([rng.random() < 0.5 for _ in range(n)])).tobytes())
    elif codec == "transpose":
        save(out, b"\0" + numbers(120, ">i2", 0).tobytes())
        save(out, b"\1" + vlen(strings(12)))
        save(out, b"\2" + numbers(21, "u1", 1).tobytes())
    else:
        raise SystemExit(f"unknown codec {codec}")


def shard(inner_chunks, at_end, with_crc):
    """A shard of v3 sharding_indexed's layout (index of offset, size pairs; 2^64 - 1 for an empty
    chunk; with a crc32c of the index): fuzz/sharding.cpp's 4 x 4 inner chunks, or
    fuzz/gpu_decode.cpp's 2 x 4."""
    n = len(inner_chunks)
    body, index = b"", []
    offset = 0 if at_end else 16 * n + (4 if with_crc else 0)
    for chunk in inner_chunks:
        if chunk is None:
            index += [2**64 - 1, 2**64 - 1]
            continue
        index += [offset + len(body), len(chunk)]
        body += chunk
    idx = struct.pack(f"<{2 * n}Q", *index)
    if with_crc:
        idx = crc(idx)
    return body + idx if at_end else idx + body


def seeds_sharding(out):
    raw = [numbers(12, "<i2", k % 3).tobytes() for k in range(16)]
    sparse = [c if k % 3 else None for k, c in enumerate(raw)]
    save(out, b"\0" + shard(raw, True, False))
    save(out, b"\0" + shard(sparse, True, False))
    save(out, b"\1" + shard(raw, False, False))
    save(out, b"\2" + shard([gzip.compress(c) for c in raw], True, False))
    save(out, b"\3" + shard(sparse, True, True))
    save(out, b"\4" + shard([vlen(strings(12)) for _ in range(16)], False, False))


def cli(args, data):
    """The output of a compressor's command line on @p data (None when it is missing)."""
    try:
        return subprocess.run(args, input=data, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def seeds_gpu(out, what):
    from numcodecs import Blosc, LZ4, Zstd
    if what == "framing":  # the layouts of fuzz/gpu_decode.cpp, in its order
        for kind in range(3):
            save(out, b"\0" + Blosc("lz4", 5, 1).encode(numbers(300, "<i4", kind)))
            save(out, b"\1" + Blosc("zstd", 5, 2).encode(numbers(500, "<i8", kind)))
            save(out, b"\2" + Blosc("lz4", 5, 0).encode(numbers(28, "u1", kind)))
            save(out, b"\3" + Zstd(3).encode(numbers(1000, "<i2", kind)))
            save(out, b"\4" + LZ4(1).encode(numbers(300, "<i4", kind)))
            inner = [numbers(12, "<i2", (k + kind) % 3).tobytes() for k in range(8)]
            save(out, b"\5" + shard([Zstd(3).encode(c) if k % 3 else None
                                        for k, c in enumerate(inner)], True, True))
            save(out, b"\6" + shard([Blosc("lz4", 5, 1).encode(np.frombuffer(c, "<i2"))
                                        for c in inner], False, False))
            save(out, b"\7" + crc(numbers(64, "u1", kind).tobytes()))
    elif what == "zstd":
        for kind in range(3):
            for n in (0, 1, 100, 5000, 70000):
                raw = numbers(n, "<i4", kind).tobytes()[:n * 2]
                for level in (1, 3, 19):
                    save(out, Zstd(level).encode(raw))
                for args in (["zstd", "-c", "-q"], ["zstd", "-c", "-q", "--no-check", "-1"],
                             ["zstd", "-c", "-q", "--ultra", "-22"]):
                    z = cli(args, raw)
                    if z is not None:
                        save(out, z)
                        save(out, z + z)  # two frames
        text = b"".join(b"sample%d\tpop%d\n" % (i, i % 7) for i in range(3000))
        save(out, Zstd(19).encode(text))
        save(out, struct.pack("<II", 0x184D2A50, 3) + b"abc" + Zstd(1).encode(text[:500]))
    elif what == "lz4":
        for kind in range(3):
            for n in (1, 13, 300, 5000):
                save(out, LZ4(1).encode(numbers(n, "<i4", kind))[4:])
                save(out, LZ4(9).encode(numbers(n, "<i4", kind))[4:])
        text = b"".join(b"sample%d\tpop%d\n" % (i, i % 7) for i in range(1000))
        save(out, LZ4(1).encode(text)[4:])
    else:
        raise SystemExit(f"unknown GPU target {what}")


def tiny_store_files(v3=False):
    files = {}
    if v3:
        files["zarr.json"] = json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}})
        files["a/zarr.json"] = json.dumps({
            "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})
        files["a/c/0"] = struct.pack("<4i", 1, 2, 3, 4)
    else:
        files[".zgroup"] = '{"zarr_format": 2}'
        files["a/.zarray"] = json.dumps({"zarr_format": 2, "shape": [4], "chunks": [4],
                                         "dtype": "<i4", "compressor": None, "fill_value": 0,
                                         "order": "C", "filters": None})
        files["a/0"] = struct.pack("<4i", 1, 2, 3, 4)
    return files


def seeds_zip(out):
    for path in shared_zips(60_000):
        with open(path, "rb") as f:
            save(out, f.read())
    for v3 in (False, True):
        for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            for zip64 in (False, True):
                for folder in ("", "store.vcz/"):
                    buf = io.BytesIO()
                    with zipfile.ZipFile(buf, "w", compression=method) as z:
                        for name, data in tiny_store_files(v3).items():
                            with z.open(folder + name, "w", force_zip64=zip64) as f:
                                f.write(data.encode() if isinstance(data, str) else data)
                    save(out, buf.getvalue())
    save(out, b"PK\5\6" + bytes(18))  # an empty archive


def seeds_text(out, what):
    if what == "regions":
        for form, text in ((0, "chr1"), (0, "chr1:100-200,chr2:5"), (0, "HLA-A*01:01:1-"),
                           (1, "chr1\t100\nchr1\t150\t300\n#comment\n"),
                           (2, "track name=x\nchr1\t0\t100\nchr2\t5\t9\n"),
                           (1, "chr1 10 20\nchr1 30\n"), (0, "chr1:1-,X:1000000-2000000")):
            save(out, bytes([form]) + text.encode())
    elif what == "samples":
        for text in ("NA12878\nNA12891\n", "^s1,s2", "#header\ns1 extra\n\ns2\n", "s1,,s2, s3"):
            save(out, text)
    elif what == "populations":
        for text in ("sample\tpopulation\ns1\tA\ns2\tB\n", "s1 A\ns2 A\ns3 B\n",
                     "#IID POP\ns1 X\n", "id pop\n# c\ns1 P1\n"):
            save(out, text)
    elif what == "genetic_map":
        for text in ("1 a 0.1 100\n1 b 0.5 2000\nchr20 c 0 1\n",
                     "Chromosome Position(bp) Rate(cM/Mb) Map(cM)\nchr1 1000 2.0 0.5\n"
                     "chr1 3000 0.5 4.5\r\n",
                     "pos\tMap(cM)\n1000\t1\n5000\t3\n",
                     "position COMBINED_rate(cM/Mb) Genetic_Map(cM)\n100 1 0\n900 0 0.2\n",
                     "# comment\n\n1 x 1e-3 5\n1 y 2 9e3\n"):
            save(out, text)
    elif what == "site_expression":
        for text in ('QUAL>=30 && FILTER="PASS"', 'TYPE="snp" && MAF>0.01', "INFO/DP>10",
                     "F_MISSING<0.05 || !(AC[1]>=2)", 'FILTER~"q10" || FILTER!="."',
                     "INFO/FLAG", "SVAL=\"x\" && RVAL[*]<=-1.5e-3", "N_ALT=1 & AN>4 | MAC>0",
                     'CHROM=="chr1" && POS>100 && REF!="A" && ALT="C" && ID!="."',
                     "(((QUAL<5)))", "AF[0]!=0.5 && 0.1<AF", 'TYPE~"indel" || TYPE!~"ref"'):
            save(out, text)


def seeds_vcf(out):
    d = shared("vcztools")
    if d:
        for f in sorted(os.listdir(d)):
            if f.endswith(".vcf.gz") and os.path.getsize(os.path.join(d, f)) <= 8192:
                with open(os.path.join(d, f), "rb") as g:
                    raw = g.read()
                save(out, raw)
                save(out, gzip.decompress(raw))
    header = ("##fileformat=VCFv4.3\n##contig=<ID=chr1,length=1000>\n"
              '##INFO=<ID=DP,Number=1,Type=Integer,Description="d">\n'
              '##INFO=<ID=AF,Number=A,Type=Float,Description="f">\n'
              '##FORMAT=<ID=GT,Number=1,Type=String,Description="g">\n'
              '##FORMAT=<ID=AD,Number=R,Type=Integer,Description="a">\n'
              "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\tS3\n")
    body = ("chr1\t5\trs1\tA\tC\t30\tPASS\tDP=3;AF=0.5\tGT:AD\t0/1:1,2\t1|1:0,3\t./.:.\n"
            "chr1\t9\t.\tG\tT,C\t.\tq10\t.\tGT\t0/2\t1\t2|1\n"
            "chr1\t12\t.\tT\t<DEL>\t.\t.\tDP=1\tGT\t0/0/1\t.\t0\n")
    save(out, header + body)
    save(out, header)
    vcf = os.path.join(out, ".tmp.vcf")
    with open(vcf, "w") as f:
        f.write(header + body)
    try:  # the same records as BCF
        save(out, subprocess.run(["bcftools", "view", "-Ou", vcf], capture_output=True,
                                 check=True).stdout)
    except (OSError, subprocess.CalledProcessError):
        pass
    os.remove(vcf)


def seeds_ms(out):
    try:
        for args in (["4", "2", "-t", "2", "-r", "1", "100"], ["3", "1", "-t", "1"],
                     ["6", "2", "-t", "3", "-T"]):
            save(out, subprocess.run(["scrm", *args, "-seed", "1", "2", "3"], capture_output=True,
                                     check=True).stdout)
    except (OSError, subprocess.CalledProcessError):
        pass
    save(out, "ms 4 1 -s 2\n1 2 3\n\n//\nsegsites: 2\npositions: 0.1 0.1\n10\n01\n11\n00\n")
    save(out, "ms 2 2 -s 1 -r 1 50\n1\n\n//\nsegsites: 1\npositions: 0.999\n1\n0\n\n//\n"
              "segsites: 0\n")


def main():
    target, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    if target in ("zarr_v2_metadata", "zarr_v3_metadata"):
        seeds_metadata(out, target == "zarr_v3_metadata")
    elif target.startswith("codec_"):
        seeds_codec(out, target[len("codec_"):])
    elif target == "sharding":
        seeds_sharding(out)
    elif target in ("zip", "zip_ranges"):
        seeds_zip(out)
    elif target.startswith("gpu_"):
        seeds_gpu(out, target[len("gpu_"):])
    elif target in ("regions", "samples", "populations", "genetic_map", "site_expression"):
        seeds_text(out, target)
    elif target == "convert_vcf":
        seeds_vcf(out)
    elif target == "convert_ms":
        seeds_ms(out)
    else:
        raise SystemExit(f"make_seeds.py: unknown target {target}")
    print(f"{target}: {len(os.listdir(out))} seeds in {out}")


if __name__ == "__main__":
    main()
