#!/usr/bin/python3
"""Convert a VCF/BCF into a VCF Zarr (VCZ) store with the bio2zarr 0.4 layout.

This is an independent converter used to make test and benchmark data for
vczstats. It parses the output of `bcftools query` (never vczstats' own code)
and writes Zarr v2 with python3-zarr.

Arrays written (each with an `_ARRAY_DIMENSIONS` attribute):
  sample_id, contig_id, contig_length (when ##contig lines give lengths),
  variant_contig, variant_position (<i4), variant_length (rlen: END-POS+1),
  variant_allele ("" padding), variant_id, variant_id_mask,
  call_genotype (-1 missing allele, -2 fill for calls of lower ploidy),
  call_genotype_phased, call_genotype_mask (call_genotype < 0), region_index.
Root attributes: vcf_zarr_version "0.4", source, vcf_meta_information.

The VCF is streamed one variant chunk at a time, so memory holds one chunk of
genotypes (variants-chunk-size x samples x ploidy) plus a few bytes of site
data per variant. Ploidy is taken from the first chunk; if a later chunk holds
a call of higher ploidy the conversion restarts once with that ploidy.

Examples:
  vcf2vcz.py in.vcf.gz out.vcz
  vcf2vcz.py in.vcf.gz out.vcz.zip --zip --variants-chunk-size 1000 \\
      --samples-chunk-size 50 --compressor lz4 --dimension-separator /
"""

import argparse
import array
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numba
import numcodecs
import numpy as np
import zarr

QUERY_FORMAT = "%CHROM\t%POS\t%ID\t%REF\t%ALT\t%END[\t%GT]\n"
QUERY_FORMAT_SITES = "%CHROM\t%POS\t%ID\t%REF\t%ALT\t%END\n"  # VCFs without FORMAT/GT
NUM_SITE_FIELDS = 6  # fields before the genotypes in QUERY_FORMAT
PARSE_PLOIDY_CAPACITY = 8  # ploidy buffer used to discover the ploidy
GENOTYPE_DTYPES = {"int8": np.int8, "int16": np.int16, "int32": np.int32}
COMPRESSORS = ("blosc-zstd-bitshuffle", "lz4", "zstd", "zlib", "gzip", "none")
REGION_INDEX_FIELDS = 6  # chunk, contig, start, end, max_end, num_records


class PloidyGrew(Exception):
    """A chunk after the first holds a call of higher ploidy than planned."""

    def __init__(self, ploidy):
        super().__init__(f"ploidy grew to {ploidy}")
        self.ploidy = ploidy


@numba.njit(cache=True)
def parse_genotypes(buf, line_starts, num_samples, gt, phased):
    """Parse the GT columns of `bcftools query` lines held in `buf` (uint8).

    gt (lines x samples x capacity, int32) must be prefilled with -2; alleles
    beyond the capacity are counted in max_ploidy but not stored.
    Returns (bad_line or -1, max_ploidy, max_allele).
    """
    capacity = gt.shape[2]
    max_ploidy = 0
    max_allele = -1
    for i in range(line_starts.shape[0] - 1):
        p = line_starts[i]
        end = line_starts[i + 1]
        tabs = 0
        while tabs < NUM_SITE_FIELDS - 1 and p < end:
            if buf[p] == 9:
                tabs += 1
            p += 1
        # p is at the start of the last site field (END); skip it
        while p < end and buf[p] != 9 and buf[p] != 10:
            p += 1
        for s in range(num_samples):
            if p >= end or buf[p] != 9:
                return i, max_ploidy, max_allele
            p += 1  # the tab
            k = 0
            first_sep_phased = False
            while True:
                c = buf[p]
                if c == 46:  # '.'
                    allele = -1
                    p += 1
                elif 48 <= c <= 57:
                    allele = 0
                    while 48 <= buf[p] <= 57:
                        allele = allele * 10 + (buf[p] - 48)
                        p += 1
                else:
                    return i, max_ploidy, max_allele
                if k < capacity:
                    gt[i, s, k] = allele
                if allele > max_allele:
                    max_allele = allele
                k += 1
                c = buf[p]
                if c == 47 or c == 124:  # '/' or '|'
                    if k == 1:
                        first_sep_phased = c == 124
                    p += 1
                elif c == 9 or c == 10:
                    break
                else:
                    return i, max_ploidy, max_allele
            if k > max_ploidy:
                max_ploidy = k
            # bio2zarr (via cyvcf2) counts haploid calls as phased
            phased[i, s] = True if k == 1 else first_sep_phased
        if p >= end or buf[p] != 10:
            return i, max_ploidy, max_allele
    return -1, max_ploidy, max_allele


def run_text(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout.decode()


def read_header(vcf):
    """Return (samples, contigs [(id, length or None)], meta [[key, value]], has_gt)."""
    samples = [s for s in run_text(["bcftools", "query", "-l", vcf]).split("\n") if s]
    contigs, meta = [], []
    has_gt = False
    for line in run_text(["bcftools", "view", "-h", vcf]).split("\n"):
        if not line.startswith("##"):
            continue
        key, _, value = line[2:].partition("=")
        if key == "contig":
            cid = re.search(r"[<,]ID=([^,>]+)", value)
            length = re.search(r"[<,]length=(\d+)", value)
            if cid:
                contigs.append((cid.group(1), int(length.group(1)) if length else None))
        elif key == "FORMAT" and re.match(r"<ID=GT,", value):
            has_gt = True
        elif key in ("INFO", "FORMAT", "FILTER") or key.startswith("bcftools_"):
            continue
        else:
            meta.append([key, value])
    return samples, contigs, meta, has_gt


def smallest_int_dtype(max_value):
    for dt in (np.int8, np.int16, np.int32):
        if max_value <= np.iinfo(dt).max:
            return dt
    return np.int64


class StoreWriter:
    """Creates arrays with one compressor scheme, chunking and fill policy."""

    def __init__(self, root, args):
        self.root = root
        self.args = args

    def compressor(self, kind):
        """kind: 'bits' for genotype/bool arrays, 'bytes' otherwise, 'index'."""
        name = self.args.compressor
        if name == "blosc-zstd-bitshuffle":
            if kind == "index":
                return numcodecs.Blosc("zstd", 9, numcodecs.Blosc.NOSHUFFLE)
            shuffle = numcodecs.Blosc.BITSHUFFLE if kind == "bits" else numcodecs.Blosc.SHUFFLE
            return numcodecs.Blosc("zstd", 7, shuffle)
        if name == "lz4":
            return numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE)
        if name == "zstd":
            return numcodecs.Zstd(level=7)
        if name == "zlib":
            return numcodecs.Zlib(level=6)
        if name == "gzip":
            return numcodecs.GZip(level=6)
        return None

    def create(self, name, shape, chunks, dtype, dims, kind="bytes", fill=None,
               description=None):
        omit = self.args.omit_empty_chunks
        kwargs = {}
        if dtype == object:
            kwargs["object_codec"] = numcodecs.VLenUTF8()
            fill = ""
        elif omit and fill is None:
            fill = False if dtype == bool else 0
        arr = self.root.create_dataset(
            name, shape=shape, chunks=chunks, dtype=dtype, fill_value=fill,
            compressor=self.compressor(kind),
            dimension_separator=self.args.dimension_separator,
            write_empty_chunks=not omit or dtype == object, **kwargs)
        arr.attrs["_ARRAY_DIMENSIONS"] = dims
        if description is not None:
            arr.attrs["description"] = description
        return arr


def iter_chunks(vcf, chunk_size, regions=None, genotypes=True):
    """Yield lists of raw `bcftools query` lines, chunk_size at a time."""
    cmd = ["bcftools", "query", "-f", QUERY_FORMAT if genotypes else QUERY_FORMAT_SITES]
    if regions:
        cmd += ["-r", regions]
    proc = subprocess.Popen(cmd + [vcf], stdout=subprocess.PIPE, bufsize=1 << 20)
    try:
        while True:
            lines = list(itertools.islice(proc.stdout, chunk_size))
            if not lines:
                break
            yield lines
    finally:
        proc.stdout.close()
        rc = proc.wait()
    if rc != 0:
        raise SystemExit(f"vcf2vcz: bcftools query failed on {vcf} (exit {rc})")


def format_integer_fields(vcf):
    """The FORMAT fields GQ and DP the header declares (Number=1, Integer), in that order."""
    header = run_text(["bcftools", "view", "-h", vcf])
    return [t for t in ("GQ", "DP")
            if re.search(rf"^##FORMAT=<ID={t},Number=1,Type=Integer", header, re.M)]


def write_format_integers(vcf, tag, writer, shape, chunks, regions=None):
    """call_<tag> (int32, variants x samples; -1 where missing) from FORMAT/<tag>."""
    cmd = ["bcftools", "query", "-f", f"[%{tag}\t]\n"]
    if regions:
        cmd += ["-r", regions]
    rows = run_text(cmd + [vcf]).split("\n")[:shape[0]]
    values = np.full(shape, -1, dtype=np.int32)
    for i, row in enumerate(rows):
        cells = row.rstrip("\t").split("\t") if shape[1] else []
        values[i, :] = [int(c) if c != "." else -1 for c in cells]
    arr = writer.create(f"call_{tag}", shape, chunks, np.int32, ["variants", "samples"], fill=-1)
    arr[:] = values


def region_index(contig, position, end, chunk_size):
    """bio2zarr's region_index: one row per (variant chunk, contig) run:
    [chunk_index, contig, first_position, last_position, max_end, num_records]."""
    rows = []
    for chunk in range((len(position) + chunk_size - 1) // chunk_size):
        lo, hi = chunk * chunk_size, min(len(position), (chunk + 1) * chunk_size)
        start = lo
        for j in range(lo + 1, hi + 1):
            if j == hi or contig[j] != contig[start]:
                rows.append([chunk, contig[start], position[start], position[j - 1],
                             end[start:j].max(), j - start])
                start = j
    return np.array(rows, dtype=np.int64).reshape(-1, REGION_INDEX_FIELDS)


def convert(vcf, out_dir, args, ploidy=None):
    """Write the store into directory out_dir; return its shape summary."""
    samples, header_contigs, meta, has_gt = read_header(vcf)
    contig_names = [c for c, _ in header_contigs]
    contig_lookup = {c: i for i, c in enumerate(contig_names)}
    num_samples = len(samples)
    vchunk, schunk = args.variants_chunk_size, min(args.samples_chunk_size, max(num_samples, 1))
    gt_dtype = GENOTYPE_DTYPES[args.genotype_dtype]

    root = zarr.open_group(zarr.DirectoryStore(out_dir), mode="w")
    root.attrs["vcf_zarr_version"] = "0.4"
    root.attrs["source"] = "vczstats tests/tools/vcf2vcz.py"
    root.attrs["vcf_meta_information"] = meta
    writer = StoreWriter(root, args)

    gt_arrays = None
    # site data of the whole file, compactly: 8-byte ints and one bytes object each
    # for ID and alleles ('.' and 'REF,ALT' strings shared where equal)
    contig, position, end = array.array("q"), array.array("q"), array.array("q")
    ids, alleles = [], []
    shared_strings = {}
    num_variants = 0
    max_alleles = 1
    num_gt_samples = num_samples if has_gt else 0
    for lines in iter_chunks(vcf, vchunk, args.regions, has_gt):
        n = len(lines)
        buf = np.frombuffer(b"".join(lines), dtype=np.uint8)
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(x) for x in lines], out=starts[1:])
        capacity = ploidy if ploidy is not None else PARSE_PLOIDY_CAPACITY
        while True:
            gt = np.full((n, num_gt_samples, capacity), -2, dtype=np.int32)
            phased = np.zeros((n, num_gt_samples), dtype=bool)
            bad, max_ploidy, max_allele = parse_genotypes(buf, starts, num_gt_samples, gt, phased)
            if bad >= 0:
                raise SystemExit(f"vcf2vcz: cannot parse genotypes of record "
                                 f"{num_variants + bad + 1}: {lines[bad][:200]!r}")
            if max_ploidy <= capacity:
                break
            if ploidy is not None:
                raise PloidyGrew(max_ploidy)
            capacity = max_ploidy
        if ploidy is None:
            ploidy = max_ploidy if max_ploidy > 0 else 2
        if max_allele > np.iinfo(gt_dtype).max:
            raise SystemExit(f"vcf2vcz: allele index {max_allele} does not fit "
                             f"--genotype-dtype {args.genotype_dtype}")
        gt = gt[:, :, :ploidy].astype(gt_dtype)

        for line in lines:
            f = line.rstrip(b"\n").split(b"\t", NUM_SITE_FIELDS)
            name = f[0].decode()
            if name not in contig_lookup:
                contig_lookup[name] = len(contig_names)
                contig_names.append(name)
            contig.append(contig_lookup[name])
            position.append(int(f[1]))
            end.append(int(f[5]))
            ids.append(shared_strings.setdefault(f[2], f[2]) if f[2] == b"." else f[2])
            allele_field = f[3] if f[4] == b"." else f[3] + b"," + f[4]
            if len(allele_field) <= 8:
                allele_field = shared_strings.setdefault(allele_field, allele_field)
            alleles.append(allele_field)
            max_alleles = max(max_alleles, allele_field.count(b",") + 1)

        if not has_gt:
            num_variants += n
            continue
        if gt_arrays is None:
            shape, chunks = (0, num_samples, ploidy), (vchunk, schunk, ploidy)
            dims = ["variants", "samples", "ploidy"]
            gt_arrays = (
                writer.create("call_genotype", shape, chunks, gt_dtype, dims, "bits"),
                writer.create("call_genotype_phased", shape[:2], chunks[:2], bool, dims[:2], "bits"),
                writer.create("call_genotype_mask", shape, chunks, bool, dims, "bits"),
            )
        lo, hi = num_variants, num_variants + n
        for arr, data in zip(gt_arrays, (gt, phased, gt < 0)):
            arr.resize((hi,) + arr.shape[1:])
            arr[lo:hi] = data
        num_variants = hi

    if gt_arrays is None and has_gt:  # no records: empty genotype arrays
        ploidy = ploidy or 2
        shape, chunks = (0, num_samples, ploidy), (vchunk, schunk, ploidy)
        dims = ["variants", "samples", "ploidy"]
        writer.create("call_genotype", shape, chunks, gt_dtype, dims, "bits")
        writer.create("call_genotype_phased", shape[:2], chunks[:2], bool, dims[:2], "bits")
        writer.create("call_genotype_mask", shape, chunks, bool, dims, "bits")

    # samples and contigs
    arr = writer.create("sample_id", (num_samples,), (schunk,), object, ["samples"])
    arr[:] = np.array(samples, dtype=object)
    num_contigs = len(contig_names)
    arr = writer.create("contig_id", (num_contigs,), (max(num_contigs, 1),), object, ["contigs"])
    arr[:] = np.array(contig_names, dtype=object)
    lengths = [l for _, l in header_contigs]
    if any(l is not None for l in lengths):
        lengths += [None] * (num_contigs - len(lengths))
        arr = writer.create("contig_length", (num_contigs,), (max(num_contigs, 1),),
                            np.int64, ["contigs"], fill=0)
        arr[:] = np.array([l or 0 for l in lengths], dtype=np.int64)

    # per-variant arrays, written once the whole file has been read
    contig = np.frombuffer(contig, dtype=np.int64)
    position = np.frombuffer(position, dtype=np.int64)
    end = np.frombuffer(end, dtype=np.int64)
    length = end - position + 1
    if num_variants and position.max() > np.iinfo(np.int32).max:
        raise SystemExit("vcf2vcz: a position does not fit variant_position <i4")
    nv = (num_variants,)
    cv = (vchunk,)
    arr = writer.create("variant_contig", nv, cv, smallest_int_dtype(max(num_contigs - 1, 0)),
                        ["variants"], description="An identifier from the reference genome "
                        "or an angle-bracketed ID string pointing to a contig in the assembly file")
    arr[:] = contig
    arr = writer.create("variant_position", nv, cv, np.int32, ["variants"],
                        description="The reference position")
    arr[:] = position
    arr = writer.create("variant_length", nv, cv,
                        smallest_int_dtype(int(length.max()) if num_variants else 0),
                        ["variants"], description="The length of the variant measured in bases")
    arr[:] = length
    id_strings = np.array([x.decode() for x in ids], dtype=object)
    arr = writer.create("variant_id", nv, cv, object, ["variants"],
                        description="List of unique identifiers where applicable")
    arr[:] = id_strings
    arr = writer.create("variant_id_mask", nv, cv, bool, ["variants"], "bits")
    arr[:] = id_strings == "."
    allele_table = np.full((num_variants, max_alleles), "", dtype=object)
    for i, a in enumerate(alleles):
        row = a.decode().split(",")
        allele_table[i, :len(row)] = row
    arr = writer.create("variant_allele", (num_variants, max_alleles), (vchunk, max_alleles),
                        object, ["variants", "alleles"],
                        description="List of the reference and alternate alleles")
    arr[:] = allele_table
    if has_gt:
        for tag in format_integer_fields(vcf):
            write_format_integers(vcf, tag, writer, (num_variants, num_samples), (vchunk, schunk),
                                  args.regions)
    index = region_index(contig, position, end, vchunk)
    arr = writer.create("region_index", index.shape, index.shape if len(index) else (1, REGION_INDEX_FIELDS),
                        np.int32, ["region_index_values", "region_index_fields"], "index")
    arr[:] = index
    record_dimension_separator(root, args.dimension_separator)
    return num_variants, num_samples, ploidy, max_alleles


def record_dimension_separator(root, separator):
    """Write dimension_separator into every .zarray. python3-zarr 2.13 drops it
    when an array is resized, which would make '/' stores unreadable."""
    for name in root.array_keys():
        key = f"{name}/.zarray"
        meta = json.loads(root.store[key])
        if meta.get("dimension_separator") != separator:
            meta["dimension_separator"] = separator
            root.store[key] = json.dumps(meta, indent=4, sort_keys=True,
                                         ensure_ascii=True).encode()


def zip_directory(src, dest):
    """Zip the directory store src into dest (ZIP_STORED, as bio2zarr does)."""
    tmp = dest + ".partial"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                zf.write(path, os.path.relpath(path, src))
    os.replace(tmp, dest)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("vcf", help="input VCF, VCF.gz or BCF")
    p.add_argument("out", help="output store: a directory, or a .zip with --zip")
    p.add_argument("--variants-chunk-size", type=int, default=10000)
    p.add_argument("--samples-chunk-size", type=int, default=1000)
    p.add_argument("--compressor", choices=COMPRESSORS, default="blosc-zstd-bitshuffle",
                   help="blosc-zstd-bitshuffle (default: Blosc zstd level 7, bit shuffle for "
                        "genotype and bool arrays, byte shuffle otherwise), lz4 (Blosc lz4 "
                        "level 5, byte shuffle), zstd, zlib, gzip (plain numcodecs codecs) "
                        "or none")
    p.add_argument("--zip", action="store_true", help="write a zip store (ZIP_STORED)")
    p.add_argument("--dimension-separator", choices=(".", "/"), default=".")
    p.add_argument("--omit-empty-chunks", action="store_true",
                   help="fill value 0/False and do not write chunks equal to it (as bio2zarr)")
    p.add_argument("--genotype-dtype", choices=sorted(GENOTYPE_DTYPES), default="int8")
    p.add_argument("-r", "--regions", help="convert only these regions (needs an index)")
    p.add_argument("-f", "--force", action="store_true", help="overwrite an existing output")
    args = p.parse_args(argv)
    if args.variants_chunk_size < 1 or args.samples_chunk_size < 1:
        p.error("chunk sizes must be positive")
    return args


def main(argv=None):
    args = parse_args(argv)
    if os.path.exists(args.out):
        if not args.force:
            raise SystemExit(f"vcf2vcz: {args.out} exists (use --force to overwrite)")
        if os.path.isdir(args.out):
            shutil.rmtree(args.out)
        else:
            os.remove(args.out)
    parent = os.path.dirname(os.path.abspath(args.out))
    work = tempfile.mkdtemp(prefix=".vcf2vcz-", dir=parent)
    try:
        store_dir = os.path.join(work, "store")
        try:
            summary = convert(args.vcf, store_dir, args)
        except PloidyGrew as e:
            print(f"vcf2vcz: ploidy {e.ploidy} found after the first chunk; restarting",
                  file=sys.stderr)
            shutil.rmtree(store_dir)
            summary = convert(args.vcf, store_dir, args, ploidy=e.ploidy)
        if args.zip:
            zip_directory(store_dir, args.out)
        else:
            os.replace(store_dir, args.out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    v, s, pl, na = summary
    print(f"vcf2vcz: wrote {args.out}: {v} variants x {s} samples x ploidy {pl}, "
          f"max {na} alleles", file=sys.stderr)


if __name__ == "__main__":
    main()
