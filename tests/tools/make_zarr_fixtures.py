#!/usr/bin/env python3
"""Write the Zarr stores the zarr-layer tests read, with the values they must decode to.

Usage: make_zarr_fixtures.py OUTDIR

Writes, under OUTDIR:
  v2/            a Zarr v2 directory store written with zarr-python 2 (every dtype, compressor
                 and filter the reader supports, absent chunks, edge chunks, '/' separators)
  v3/            a Zarr v3 directory store written by hand here (zarr-python 2 cannot write v3):
                 bytes/transpose/vlen-utf8/sharding_indexed/blosc/zstd/gzip/crc32c
  corrupt/       damaged arrays, each listed in corrupt.json with the chunk key it must name
  *.zip          the v2 and v3 stores zipped: stored, deflated, under a top-level folder, zip64
  expected/      NAME.bin (numeric: little-endian, bool as uint8) or NAME.json (strings)
  manifest.json  one entry per (store, array): what to open and which expected file to compare

Random data comes from a fixed seed, so the fixtures are the same on every run.
"""

import base64
import json
import os
import shutil
import struct
import sys
import zipfile
import zlib

import crc32c
import numcodecs
import numpy as np
import zarr

RNG = np.random.default_rng(20240611)
UNICODE_WORDS = ["", "a", "AC", "TTG", "é", "naïve", "ß", "日本", "Ω≈", "😀x", "long-" * 5, "N"]


def random_values(dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(info.min, info.max, size=shape, dtype=dtype.newbyteorder("="),
                            endpoint=True).astype(dtype)
    if dtype.kind == "f":
        values = RNG.normal(0, 1000, size=shape).astype(dtype)
        flat = values.reshape(-1)
        if flat.size > 3:
            flat[1] = np.inf
            flat[2] = -np.inf
            flat[3] = np.nan
        return values
    raise ValueError(dtype)


def random_strings(shape, ascii_only=False):
    words = [w for w in UNICODE_WORDS if w.isascii()] if ascii_only else UNICODE_WORDS
    flat = [words[i] for i in RNG.integers(0, len(words), size=int(np.prod(shape)))]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(shape)


class Fixtures:
    def __init__(self, outdir):
        self.outdir = outdir
        self.expected_dir = os.path.join(outdir, "expected")
        os.makedirs(self.expected_dir, exist_ok=True)
        self.manifest = []

    def expect(self, store, array, name, values, dtype_name, chunks):
        """Record that STORE/ARRAY must decode to VALUES (a numpy array)."""
        if values.dtype.kind in "OUS":
            strings = [v.decode() if isinstance(v, bytes) else str(v) for v in values.reshape(-1)]
            path = name + ".json"
            with open(os.path.join(self.expected_dir, path), "w") as f:
                json.dump(strings, f)
        else:
            canonical = values.astype(values.dtype.newbyteorder("<"))
            if values.dtype.kind == "b":
                canonical = values.astype(np.uint8)
            path = name + ".bin"
            with open(os.path.join(self.expected_dir, path), "wb") as f:
                f.write(np.ascontiguousarray(canonical).tobytes())
        self.manifest.append({
            "store": store, "array": array, "expected": path, "dtype": dtype_name,
            "shape": list(values.shape), "chunks": list(chunks),
        })

    def write_manifest(self):
        with open(os.path.join(self.outdir, "manifest.json"), "w") as f:
            json.dump(self.manifest, f, indent=1)


def canonical_name(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return "bool"
    if dtype.kind in "OUS":
        return "string"
    return {"i": "int", "u": "uint", "f": "float"}[dtype.kind] + str(dtype.itemsize * 8)


def chunk_slices(index, chunks, shape):
    return tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(index, chunks, shape))


def fill_for_expected(dtype, fill_value):
    if fill_value is None:
        return "" if np.dtype(dtype).kind in "OUS" else 0
    return fill_value


# ---- Zarr v2, written by zarr-python ------------------------------------------------------------


def write_v2(fx):
    root = os.path.join(fx.outdir, "v2")
    group = zarr.open_group(zarr.DirectoryStore(root), mode="w")

    def add(name, values, chunks, dtype=None, absent=(), fill_value=None, separator=".",
            check_zarr=True, **kwargs):
        dtype = np.dtype(dtype or values.dtype)
        z = group.create(name, shape=values.shape, chunks=chunks or None, dtype=dtype,
                         fill_value=fill_value, dimension_separator=separator,
                         write_empty_chunks=True, **kwargs)
        z[...] = values
        expected = np.array(values, dtype=values.dtype if dtype.kind == "O" else dtype)
        for index in absent:
            key = separator.join(str(i) for i in index) if index else "0"
            os.remove(os.path.join(root, name, *key.split("/")))
            expected[chunk_slices(index, chunks, values.shape)] = fill_for_expected(dtype, fill_value)
        if check_zarr and fill_value is not None:
            back = zarr.open_array(os.path.join(root, name), mode="r")[...]
            ok = np.array_equal(back, expected, equal_nan=dtype.kind == "f")
            assert ok, f"zarr reads {name} differently from the expected values"
        store_name = "v2"
        fx.expect(store_name, name, f"v2_{name}", expected, canonical_name(dtype), chunks)

    # every numeric dtype, both byte orders, with an absent chunk and edge chunks
    for spec in ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f4", "<f8",
                 ">i2", ">i4", ">i8", ">u2", ">u4", ">u8", ">f4", ">f8"]:
        dtype = np.dtype(spec)
        name = "dtype_" + spec.replace("<", "le_").replace(">", "be_").replace("|", "")
        fill = {"b": True, "i": -7, "u": 9, "f": -0.5}[dtype.kind]
        add(name, random_values(dtype, (23, 7)), (5, 3), dtype=dtype, absent=[(1, 1)],
            fill_value=fill)

    # strings
    add("str_vlen", random_strings((17, 3)), (4, 2), dtype=object, absent=[(2, 0)],
        fill_value="", object_codec=numcodecs.VLenUTF8())
    add("str_vlen_null_fill", random_strings((9,)), (4,), dtype=object, absent=[(1,)],
        fill_value=None, object_codec=numcodecs.VLenUTF8())
    add("str_vlen_zstd", random_strings((40, 2)), (16, 2), dtype=object,
        fill_value="", object_codec=numcodecs.VLenUTF8(), compressor=numcodecs.Zstd(3))
    fixed = np.array(random_strings((11, 2), ascii_only=True).astype(str), dtype="S6")
    add("str_fixed_S", fixed, (4, 2), dtype="S6", absent=[(1, 0)], fill_value=b"ab")
    unicode = np.array(random_strings((11, 2)).astype(str), dtype="<U5")
    add("str_fixed_U", unicode, (4, 2), dtype="<U5", absent=[(2, 0)], fill_value="zé")
    add("str_fixed_U_be", unicode.astype(">U5"), (4, 2), dtype=">U5", fill_value="")

    # every compressor on the same data
    data = random_values("<i4", (50, 6)) % 1000
    for cname in ["zstd", "lz4", "lz4hc", "zlib", "blosclz"]:
        for shuffle in [0, 1, 2]:
            add(f"blosc_{cname}_{shuffle}", data, (16, 4), fill_value=0,
                compressor=numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle))
    add("blosc_f8_bitshuffle", random_values("<f8", (30, 5)), (7, 5), fill_value=0.0,
        compressor=numcodecs.Blosc(cname="zstd", clevel=7, shuffle=2))
    add("comp_zstd", data, (16, 4), fill_value=0, compressor=numcodecs.Zstd(level=5))
    add("comp_lz4", data, (16, 4), fill_value=0, compressor=numcodecs.LZ4())
    add("comp_zlib", data, (16, 4), fill_value=0, compressor=numcodecs.Zlib(level=6))
    add("comp_gzip", data, (16, 4), fill_value=0, compressor=numcodecs.GZip(level=6))
    add("comp_bz2", data, (16, 4), fill_value=0, compressor=numcodecs.BZ2(level=9))
    add("comp_none", data, (16, 4), fill_value=0, compressor=None)

    # filters
    ramp = np.cumsum(RNG.integers(-50, 50, size=(60,))).astype("<i4")
    add("filter_delta", ramp, (25,), fill_value=0,
        filters=[numcodecs.Delta(dtype="<i4")], compressor=numcodecs.Zstd(1))
    add("filter_delta_astype", ramp, (25,), fill_value=0,
        filters=[numcodecs.Delta(dtype="<i4", astype="<i2")], compressor=None)
    add("filter_delta_be", ramp.astype(">i8"), (25,), dtype=">i8", fill_value=0,
        filters=[numcodecs.Delta(dtype=">i8")], compressor=numcodecs.Blosc("lz4", 5, 1))
    add("filter_packbits", random_values("|b1", (37, 3)), (10, 3), fill_value=False,
        filters=[numcodecs.PackBits()], compressor=numcodecs.Zlib(1))
    add("filter_packbits_even", random_values("|b1", (16,)), (8,), fill_value=False,
        filters=[numcodecs.PackBits()], compressor=None)

    # chunk keys, fill values, shapes
    genotypes = RNG.integers(-1, 3, size=(100, 10, 2)).astype("i1")
    add("sep_slash", genotypes, (30, 4, 2), separator="/", absent=[(1, 1, 0)], fill_value=-2)
    add("sep_dot_genotypes", genotypes, (30, 4, 2), absent=[(3, 2, 0)], fill_value=-2)
    add("fill_null", random_values("<i4", (20, 4)), (6, 4), absent=[(0, 0), (3, 0)],
        fill_value=None)
    add("fill_nan", random_values("<f8", (20,)), (6,), absent=[(1,)], fill_value=np.nan)
    add("fill_inf", random_values("<f4", (20,)), (6,), absent=[(2,)], fill_value=-np.inf)
    add("fill_int", random_values("<u2", (20,)), (6,), absent=[(0,)], fill_value=42)
    add("one_chunk_bigger_than_array", random_values("<i8", (5, 3)), (8, 8), fill_value=0)
    add("scalar", np.array(5, dtype="<i4"), (), fill_value=3)
    add("positions", np.sort(RNG.integers(1, 10**9, size=1000)).astype("<i4"), (128,),
        fill_value=-1, compressor=numcodecs.Blosc("zstd", 7, 1))
    return root


# ---- Zarr v3, written by hand ---------------------------------------------------------------------

V3_TYPES = {"bool": "|b1", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
            "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8", "float32": "f4",
            "float64": "f8", "string": "O"}


def encode_chunk(arr, codecs, empty_inner=()):
    """Encode one chunk (numpy array of the full chunk shape) with a v3 codec list.
    empty_inner: inner chunks of a shard to leave out (they read as the fill value)."""
    data = arr
    for codec in codecs:
        name, config = codec["name"], codec.get("configuration", {})
        if name == "transpose":
            data = np.ascontiguousarray(np.transpose(data, config["order"]))
        elif name == "bytes":
            order = ">" if config.get("endian", "little") == "big" else "<"
            dt = data.dtype if data.dtype.kind == "b" else data.dtype.newbyteorder(order)
            data = np.ascontiguousarray(data.astype(dt)).tobytes()
        elif name == "vlen-utf8":
            data = numcodecs.VLenUTF8().encode(data.reshape(-1))
        elif name == "sharding_indexed":
            data = encode_shard(data, config, empty_inner)
        elif name == "blosc":
            shuffle = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[config["shuffle"]]
            data = numcodecs.Blosc(config["cname"], config["clevel"], shuffle).encode(data)
        elif name == "zstd":
            data = numcodecs.Zstd(config.get("level", 0)).encode(data)
        elif name == "gzip":
            data = numcodecs.GZip(config.get("level", 5)).encode(data)
        elif name == "crc32c":
            data = bytes(data) + struct.pack("<I", crc32c.crc32c(bytes(data)))
        else:
            raise ValueError(name)
    return bytes(data)


EMPTY = 2**64 - 1


def encode_shard(shard, config, empty_inner=()):
    inner = config["chunk_shape"]
    grid = [s // c for s, c in zip(shard.shape, inner)]
    index = np.full(grid + [2], EMPTY, dtype="<u8")
    blobs = []
    for cell in np.ndindex(*grid):
        if cell in empty_inner:
            continue
        part = shard[tuple(slice(i * c, (i + 1) * c) for i, c in zip(cell, inner))]
        blobs.append((cell, encode_chunk(part, config["codecs"])))
    index_bytes_len = len(encode_chunk(index, config["index_codecs"]))
    at_start = config.get("index_location", "end") == "start"
    offset = index_bytes_len if at_start else 0
    body = b""
    for cell, blob in blobs:
        index[cell] = (offset, len(blob))
        offset += len(blob)
        body += blob
    index_bytes = encode_chunk(index, config["index_codecs"])
    return index_bytes + body if at_start else body + index_bytes


def write_v3(fx):
    root = os.path.join(fx.outdir, "v3")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": {"origin": "fixtures"}}, f)

    def add(name, values, chunks, data_type, codecs, fill_value, absent=(),
            key_encoding=None, empty_inner=None, dimension_names=None):
        key_encoding = key_encoding or {"name": "default", "configuration": {"separator": "/"}}
        meta = {
            "zarr_format": 3, "node_type": "array", "shape": list(values.shape),
            "data_type": data_type,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": key_encoding, "fill_value": fill_value, "codecs": codecs,
            "attributes": {"name": name},
        }
        if dimension_names:
            meta["dimension_names"] = dimension_names
        adir = os.path.join(root, name)
        os.makedirs(adir, exist_ok=True)
        with open(os.path.join(adir, "zarr.json"), "w") as f:
            json.dump(meta, f, indent=1)
        if data_type == "string":
            fill = "" if fill_value is None else fill_value
        elif fill_value == "NaN":
            fill = np.nan
        elif fill_value is None:
            fill = 0
        else:
            fill = fill_value
        np_dtype = np.dtype(V3_TYPES[data_type])
        expected = np.array(values, dtype=np_dtype)
        grid = [-(-s // c) for s, c in zip(values.shape, chunks)]
        sep = key_encoding.get("configuration", {}).get(
            "separator", "/" if key_encoding["name"] == "default" else ".")
        for index in np.ndindex(*grid):
            sl = chunk_slices(index, chunks, values.shape)
            if index in absent:
                expected[sl] = fill
                continue
            chunk = np.full(chunks, fill, dtype=np_dtype)
            chunk[tuple(slice(0, s.stop - s.start) for s in sl)] = values[sl]
            empty = (empty_inner or {}).get(index, ())
            for cell in empty:
                # inner chunks left out of the shard read as the fill value
                inner = codecs[-1]["configuration"]["chunk_shape"]
                lo = [o.start + c * i for o, c, i in zip(sl, inner, cell)]
                expected[tuple(slice(l, min(l + c, o.stop)) for l, c, o in zip(lo, inner, sl))] = fill
            blob = encode_chunk(chunk, codecs, empty)
            if key_encoding["name"] == "default":
                key = sep.join(["c"] + [str(i) for i in index])
            else:
                key = sep.join(str(i) for i in index)
            path = os.path.join(adir, *key.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(blob)
        fx.expect("v3", name, f"v3_{name}", expected, canonical_name(np_dtype), chunks)

    def blosc(cname="zstd", shuffle="shuffle", typesize=4):
        return {"name": "blosc", "configuration": {"cname": cname, "clevel": 5,
                                                   "shuffle": shuffle, "typesize": typesize,
                                                   "blocksize": 0}}

    little = {"name": "bytes", "configuration": {"endian": "little"}}
    big = {"name": "bytes", "configuration": {"endian": "big"}}
    crc = {"name": "crc32c"}
    index_codecs = [little, crc]

    add("bytes_blosc", random_values("<i4", (20, 6)), (8, 4), "int32",
        [little, blosc()], 0, absent=[(1, 1)], dimension_names=["variants", None])
    add("big_gzip", random_values("<u2", (13, 5)), (4, 5), "uint16",
        [big, {"name": "gzip", "configuration": {"level": 5}}], 7)
    add("transpose_zstd_crc", random_values("<f8", (9, 5, 4)), (4, 5, 3), "float64",
        [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, little,
         {"name": "zstd", "configuration": {"level": 3, "checksum": False}}, crc], "NaN",
        absent=[(1, 0, 1)])
    add("strings", random_strings((11, 3)), (4, 2), "string",
        [{"name": "vlen-utf8", "configuration": {}},
         {"name": "zstd", "configuration": {"level": 1}}], "", absent=[(0, 1)])
    add("transpose_strings", random_strings((5, 7)), (4, 3), "string",
        [{"name": "transpose", "configuration": {"order": [1, 0]}},
         {"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 1}}], "")
    add("bool_crc", random_values("|b1", (10, 3)), (4, 3), "bool", [little, crc], True,
        absent=[(2, 0)])
    add("fill_nan_f32", random_values("<f4", (10,)), (3,), "float32", [little], "NaN",
        absent=[(1,), (3,)])
    add("keys_v2", random_values("<i8", (7, 4)), (3, 2), "int64", [little, blosc(typesize=8)],
        -1, key_encoding={"name": "v2", "configuration": {"separator": "."}})
    add("keys_v2_slash", random_values("<i2", (7, 4)), (3, 2), "int16", [little], 0,
        key_encoding={"name": "v2", "configuration": {"separator": "/"}})
    add("keys_default_dot", random_values("<u8", (7, 4)), (3, 2), "uint64", [little], 0,
        key_encoding={"name": "default", "configuration": {"separator": "."}})
    genotypes = RNG.integers(-1, 3, size=(30, 8, 2)).astype("i1")
    add("sharded_end", genotypes, (16, 8, 2), "int8",
        [{"name": "sharding_indexed",
          "configuration": {"chunk_shape": [4, 4, 2],
                            "codecs": [little, blosc(shuffle="bitshuffle", typesize=1)],
                            "index_codecs": index_codecs, "index_location": "end"}}],
        -2, empty_inner={(0, 0, 0): [(1, 0, 0), (3, 1, 0)]})
    add("sharded_start", random_values("<u4", (25, 6)), (10, 6), "uint32",
        [{"name": "sharding_indexed",
          "configuration": {"chunk_shape": [5, 3],
                            "codecs": [little, {"name": "zstd", "configuration": {"level": 1}}],
                            "index_codecs": index_codecs, "index_location": "start"}}],
        5, absent=[(1, 0)], empty_inner={(0, 0): [(0, 1)]})
    add("sharded_strings", random_strings((12, 4)), (6, 4), "string",
        [{"name": "sharding_indexed",
          "configuration": {"chunk_shape": [3, 2],
                            "codecs": [{"name": "vlen-utf8"},
                                       {"name": "gzip", "configuration": {"level": 1}}],
                            "index_codecs": index_codecs}}],
        "", empty_inner={(1, 0): [(0, 1)]})
    add("transpose_sharded", random_values("<i2", (8, 6)), (8, 6), "int16",
        [{"name": "transpose", "configuration": {"order": [1, 0]}},
         {"name": "sharding_indexed",
          "configuration": {"chunk_shape": [3, 4], "codecs": [big, crc],
                            "index_codecs": index_codecs, "index_location": "start"}}], 0)
    return root


# ---- damaged arrays ---------------------------------------------------------------------------------


def write_corrupt(fx):
    root = os.path.join(fx.outdir, "corrupt")
    group = zarr.open_group(zarr.DirectoryStore(root), mode="w")
    cases = []

    def make(name, compressor, dtype="<i4", object_codec=None):
        values = random_strings((12, 4)) if dtype == object else random_values(dtype, (12, 4))
        z = group.create(name, shape=(12, 4), chunks=(4, 4), dtype=dtype, fill_value=0 if dtype != object else "",
                         compressor=compressor, object_codec=object_codec)
        z[...] = values
        return os.path.join(root, name)

    def rewrite(path, fn):
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(fn(data))

    def case(array, chunk, key, error):
        cases.append({"array": array, "chunk": chunk, "key": key, "error": error})

    d = make("truncated_blosc", numcodecs.Blosc("zstd", 5, 1))
    rewrite(os.path.join(d, "1.0"), lambda b: b[: len(b) // 2])
    case("truncated_blosc", [1, 0], "truncated_blosc/1.0", "blosc")
    d = make("garbage_zstd", numcodecs.Zstd(3))
    rewrite(os.path.join(d, "2.0"), lambda b: bytes(RNG.integers(0, 256, size=len(b), dtype=np.uint8)))
    case("garbage_zstd", [2, 0], "garbage_zstd/2.0", "zstd")
    d = make("truncated_zstd", numcodecs.Zstd(3))
    rewrite(os.path.join(d, "0.0"), lambda b: b[:-5])
    case("truncated_zstd", [0, 0], "truncated_zstd/0.0", "zstd")
    d = make("truncated_lz4", numcodecs.LZ4())
    rewrite(os.path.join(d, "1.0"), lambda b: b[:-3])
    case("truncated_lz4", [1, 0], "truncated_lz4/1.0", "lz4")
    d = make("wrong_size_zlib", numcodecs.Zlib(1))
    rewrite(os.path.join(d, "1.0"), lambda b: zlib.compress(b"x" * 60))
    case("wrong_size_zlib", [1, 0], "wrong_size_zlib/1.0", "zlib")
    d = make("truncated_gzip", numcodecs.GZip(1))
    rewrite(os.path.join(d, "0.0"), lambda b: b[: len(b) - 12])
    case("truncated_gzip", [0, 0], "truncated_gzip/0.0", "gzip")
    d = make("garbage_bz2", numcodecs.BZ2(1))
    rewrite(os.path.join(d, "2.0"), lambda b: b[:10] + b"\x00" * (len(b) - 10))
    case("garbage_bz2", [2, 0], "garbage_bz2/2.0", "bz2")
    d = make("short_raw", None)
    rewrite(os.path.join(d, "1.0"), lambda b: b[:-4])
    case("short_raw", [1, 0], "short_raw/1.0", "bytes")
    d = make("truncated_vlen", numcodecs.Zstd(1), dtype=object, object_codec=numcodecs.VLenUTF8())
    rewrite(os.path.join(d, "1.0"),
            lambda b: numcodecs.Zstd(1).encode(numcodecs.Zstd(1).decode(b)[:-3]))
    case("truncated_vlen", [1, 0], "truncated_vlen/1.0", "vlen-utf8")

    # bad metadata
    def edit(name, fn):
        d = make(name, None)
        with open(os.path.join(d, ".zarray")) as f:
            meta = json.load(f)
        fn(meta)
        with open(os.path.join(d, ".zarray"), "w") as f:
            json.dump(meta, f)

    edit("unknown_codec", lambda m: m.update(compressor={"id": "snappy-magic"}))
    edit("unknown_filter", lambda m: m.update(filters=[{"id": "fixedscaleoffset", "offset": 0}]))
    edit("wrong_dtype", lambda m: m.update(dtype="<q9"))
    edit("float16", lambda m: m.update(dtype="<f2"))
    edit("fortran_order", lambda m: m.update(order="F"))
    os.makedirs(os.path.join(root, "bad_json"))
    with open(os.path.join(root, "bad_json", ".zarray"), "w") as f:
        f.write('{"shape": [3], "chunks": [')
    os.makedirs(os.path.join(root, "missing_meta"))
    with open(os.path.join(root, "missing_meta", "0.0"), "wb") as f:
        f.write(b"\0" * 16)

    # Zarr v3 damage: a bad checksum, an unknown codec and a shard whose index points outside
    def v3(name, codecs, values, chunks, data_type="int32", damage=None):
        adir = os.path.join(root, name)
        os.makedirs(adir)
        with open(os.path.join(adir, "zarr.json"), "w") as f:
            json.dump({"zarr_format": 3, "node_type": "array", "shape": list(values.shape),
                       "data_type": data_type,
                       "chunk_grid": {"name": "regular",
                                      "configuration": {"chunk_shape": list(chunks)}},
                       "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                       "codecs": codecs}, f)
        os.makedirs(os.path.join(adir, "c", "0"))
        try:
            blob = encode_chunk(values[: chunks[0], : chunks[1]], codecs)
        except ValueError:
            blob = b"\0" * 64
        if damage:
            blob = damage(blob)
        with open(os.path.join(adir, "c", "0", "0"), "wb") as f:
            f.write(blob)

    little = {"name": "bytes", "configuration": {"endian": "little"}}
    crc = {"name": "crc32c"}
    vals = random_values("<i4", (4, 4))
    v3("bad_crc", [little, crc], vals, (4, 4),
       damage=lambda b: bytes([b[0] ^ 0xFF]) + b[1:])
    case("bad_crc", [0, 0], "bad_crc/c/0/0", "crc32c")
    v3("v3_unknown_codec", [little, {"name": "frobnicate"}], vals, (4, 4))
    v3("v3_wrong_dtype", [little], vals, (4, 4), data_type="complex64")
    shard = {"name": "sharding_indexed",
             "configuration": {"chunk_shape": [2, 2], "codecs": [little],
                               "index_codecs": [little, crc]}}
    v3("bad_shard_index", [shard], vals, (4, 4),
       damage=lambda b: b[:-68] + encode_chunk(np.full((2, 2, 2), 10**6, dtype="<u8"),
                                                [little, crc]))
    case("bad_shard_index", [0, 0], "bad_shard_index/c/0/0", "shard")
    with open(os.path.join(fx.outdir, "corrupt.json"), "w") as f:
        json.dump({"chunks": cases,
                   "metadata": {"unknown_codec": "snappy-magic", "unknown_filter": "fixedscaleoffset",
                                "wrong_dtype": "<q9", "float16": "<f2", "fortran_order": "F",
                                "bad_json": "JSON", "missing_meta": "not found",
                                "v3_unknown_codec": "frobnicate", "v3_wrong_dtype": "complex64"}},
                  f, indent=1)


# ---- zip stores ----------------------------------------------------------------------------------


def zip_directory(src, dest, compression, folder=None):
    with zipfile.ZipFile(dest, "w", compression=compression) as z:
        if folder:
            z.writestr(folder + "/", b"")
        for dirpath, dirnames, filenames in sorted(os.walk(src)):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, src)
            if folder and rel_dir != ".":
                z.writestr(f"{folder}/{rel_dir}/", b"")  # directory entries are ignored
            for name in sorted(filenames):
                rel = os.path.normpath(os.path.join(rel_dir, name))
                z.write(os.path.join(dirpath, name), f"{folder}/{rel}" if folder else rel)


def zip64_directory(src, dest):
    """A stored zip that uses zip64 for every size and offset, as archives over 4 GiB must."""
    entries = []
    out = bytearray()
    for dirpath, dirnames, filenames in sorted(os.walk(src)):
        dirnames.sort()
        for name in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, name), src).encode()
            with open(os.path.join(dirpath, name), "rb") as f:
                data = f.read()
            crc = zlib.crc32(data)
            offset = len(out)
            extra = struct.pack("<HHQQ", 1, 16, len(data), len(data))
            out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0, crc,
                               0xFFFFFFFF, 0xFFFFFFFF, len(rel), len(extra)) + rel + extra + data
            entries.append((rel, crc, len(data), offset))
    cd_offset = len(out)
    for rel, crc, size, offset in entries:
        extra = struct.pack("<HHQQQ", 1, 24, size, size, offset)
        out += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0, crc,
                           0xFFFFFFFF, 0xFFFFFFFF, len(rel), len(extra), 0, 0, 0, 0,
                           0xFFFFFFFF) + rel + extra
    cd_size = len(out) - cd_offset
    eocd64 = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, len(entries), len(entries),
                       cd_size, cd_offset)
    out += struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(dest, "wb") as f:
        f.write(out)
    with zipfile.ZipFile(dest) as z:  # python must agree that it is a valid archive
        assert z.testzip() is None
        assert len(z.namelist()) == len(entries)


def main():
    outdir = sys.argv[1]
    if os.path.exists(outdir):
        shutil.rmtree(outdir)
    os.makedirs(outdir)
    fx = Fixtures(outdir)
    v2 = write_v2(fx)
    v3 = write_v3(fx)
    write_corrupt(fx)
    zips = {
        "v2_stored.zip": lambda d: zip_directory(v2, d, zipfile.ZIP_STORED),
        "v2_deflated.zip": lambda d: zip_directory(v2, d, zipfile.ZIP_DEFLATED),
        "v2_folder.zip": lambda d: zip_directory(v2, d, zipfile.ZIP_STORED, folder="v2_folder"),
        "v2_zip64.zip": lambda d: zip64_directory(v2, d),
        "v3_deflated.zip": lambda d: zip_directory(v3, d, zipfile.ZIP_DEFLATED),
        "v3_folder.zip": lambda d: zip_directory(v3, d, zipfile.ZIP_STORED, folder="v3_folder"),
    }
    base = list(fx.manifest)
    for zip_name, make in zips.items():
        make(os.path.join(outdir, zip_name))
        source = "v2" if zip_name.startswith("v2") else "v3"
        fx.manifest += [dict(e, store=zip_name) for e in base if e["store"] == source]
    with zipfile.ZipFile(os.path.join(outdir, "empty.zip"), "w"):
        pass
    fx.write_manifest()


if __name__ == "__main__":
    main()
