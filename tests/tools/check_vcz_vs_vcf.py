#!/usr/bin/python3
"""Check a VCF Zarr store against the VCF it was converted from, field by field.

Reads every array of STORE (a directory or a .zip, Zarr v2) with python3-zarr and compares it
with `bcftools query` output of VCF: samples, contigs (and lengths), positions, lengths (END),
IDs and their mask, alleles ("" padding), QUAL (float32, VCF Zarr's missing NaN), FILTER, every
INFO field (variant_<ID>) and FORMAT field (call_<ID>) of the header with VCF Zarr's sentinels
(-1 / missing NaN / "." for missing values, -2 / fill NaN / "" for padding), GT with phasing and
mask, and region_index. Exits 1 with the first differences listed, 0 when everything agrees.

Usage: check_vcz_vs_vcf.py VCF STORE
"""

import re
import subprocess
import sys

import numpy as np
import zarr

np.seterr(all="ignore")  # NaN comparisons are intended

INT_MISSING, INT_FILL = -1, -2
FLOAT_MISSING_BITS, FLOAT_FILL_BITS = 0x7F800001, 0x7F800002
FIXED_ARRAYS = {
    "sample_id", "contig_id", "contig_length", "filter_id", "filter_description",
    "variant_contig", "variant_position", "variant_length", "variant_quality", "variant_id",
    "variant_id_mask", "variant_allele", "variant_filter", "region_index",
    "call_genotype", "call_genotype_phased", "call_genotype_mask",
}


class Mismatch(Exception):
    pass


def query(vcf, fmt):
    out = subprocess.run(["bcftools", "query", "-f", fmt, vcf], check=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    return [line.split("\t") for line in out.split("\n") if line != ""]


def header_fields(vcf):
    """[(kind, id, number, type)] of the INFO and FORMAT declarations, and the contigs."""
    text = subprocess.run(["bcftools", "view", "-h", vcf], check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL).stdout.decode()
    fields, contigs = [], []
    for line in text.split("\n"):
        m = re.match(r"##(INFO|FORMAT)=<(.*)>$", line)
        if m:
            attr = lambda key: re.search(r"[<,]" + key + r"=([^,>]+)", "<" + m.group(2)).group(1)
            fields.append((m.group(1), attr("ID"), attr("Number"), attr("Type")))
        m = re.match(r"##contig=<ID=([^,>]+)(?:.*length=(\d+))?", line)
        if m:
            contigs.append((m.group(1), int(m.group(2)) if m.group(2) else None))
    return fields, contigs


class Checker:
    def __init__(self, vcf, store_path):
        self.vcf = vcf
        store = zarr.ZipStore(store_path, mode="r") if store_path.endswith(".zip") else store_path
        self.root = zarr.open_group(store, mode="r")
        self.errors = []
        self.checked = set()

    def array(self, name):
        self.checked.add(name)
        if name not in self.root:
            raise Mismatch(f"array {name} is missing")
        return self.root[name][...]

    def expect(self, ok, what):
        if not ok and len(self.errors) < 20:
            self.errors.append(what)

    # ---- values -------------------------------------------------------------------------------

    def check_float_row(self, text, got, where):
        """One float value list (QUAL)."""
        want, sentinel = self.float_row(text, len(got))
        self.expect(self.floats_agree(got, want, sentinel).all(), f"{where}: {got} != {text}")

    # A whole value "." is one missing value (htslib: missing, then vector ends) or, for a field
    # a record or sample lacks, all missing; bcftools prints both as ".". Rows of the first form
    # are normalised to the second before comparing.
    @staticmethod
    def int_row(text, width):
        row = np.full(width, INT_FILL, dtype=np.int64)
        if text == ".":
            row[:] = INT_MISSING
            return row
        for j, v in enumerate(text.split(",")):
            row[j] = INT_MISSING if v == "." else int(v)
        return row

    @staticmethod
    def float_row(text, width):
        """(values as float32, sentinel bits or 0 where a real value is expected)."""
        values = np.zeros(width, dtype=np.float32)
        sentinel = np.full(width, FLOAT_FILL_BITS, dtype=np.uint32)
        if text == ".":
            sentinel[:] = FLOAT_MISSING_BITS
            return values, sentinel
        for j, v in enumerate(text.split(",")):
            if v == ".":
                sentinel[j] = FLOAT_MISSING_BITS
            else:
                values[j] = np.float32(float(v))
                sentinel[j] = 0
        return values, sentinel

    @staticmethod
    def floats_agree(got, want, sentinel):
        bits = got.view(np.uint32)
        close = np.isclose(got, want, rtol=1e-6, atol=1e-30, equal_nan=True)
        return np.where(sentinel != 0, bits == sentinel, close)

    @staticmethod
    def string_row(text, width, split):
        if not split:
            return [text]
        if text == ".":
            return ["."] * width
        items = text.split(",")
        return items + [""] * (width - len(items))

    def check_field(self, kind, ftype, texts, got, where):
        """texts: the bcftools text of each value (variants, or variants x samples)."""
        has_dim = got.ndim == (2 if kind == "INFO" else 3)
        width = got.shape[-1] if has_dim else 1
        flat = [t for row in texts for t in (row if kind == "FORMAT" else [row])]
        values = got.reshape(len(flat), width).copy()
        if len(flat) == 0:
            return
        cache = {}

        def parsed(fn):
            return [cache.get(t) if t in cache else cache.setdefault(t, fn(t)) for t in flat]

        if ftype == "Flag":
            ok = values[:, 0] == np.array([t == "1" for t in flat])
        elif ftype == "Integer":
            first_only = (values[:, 0] == INT_MISSING) & (values[:, 1:] == INT_FILL).all(axis=1)
            values[first_only & (width > 1)] = INT_MISSING
            want = np.array(parsed(lambda t: self.int_row(t, width)))
            ok = (values.astype(np.int64) == want).all(axis=1)
        elif ftype == "Float":
            bits = values.view(np.uint32)
            first_only = (bits[:, 0] == FLOAT_MISSING_BITS) & (bits[:, 1:] == FLOAT_FILL_BITS).all(axis=1)
            bits[first_only & (width > 1)] = FLOAT_MISSING_BITS
            rows = parsed(lambda t: self.float_row(t, width))
            want = np.array([r[0] for r in rows])
            sentinel = np.array([r[1] for r in rows])
            ok = self.floats_agree(values.astype(np.float32), want, sentinel).all(axis=1)
        else:
            if has_dim and width > 1:
                first_only = (values[:, 0] == ".") & (values[:, 1:] == "").all(axis=1)
                values[first_only] = "."
            want = np.array(parsed(lambda t: self.string_row(t, width, has_dim)), dtype=object)
            ok = (values == want.reshape(values.shape)).all(axis=1)
        for i in np.flatnonzero(~ok)[:5]:
            self.expect(False, f"{where} value {i}: {got.reshape(len(flat), width)[i]} != {flat[i]}")

    # ---- the store ----------------------------------------------------------------------------

    def run(self):
        vcf = self.vcf
        samples = subprocess.run(["bcftools", "query", "-l", vcf], check=True,
                                 stdout=subprocess.PIPE).stdout.decode().split()
        self.expect(list(self.array("sample_id")) == samples, "sample_id differs")
        fields, header_contigs = header_fields(vcf)
        sites = query(vcf, "%CHROM\t%POS\t%ID\t%REF\t%ALT\t%QUAL\t%FILTER\t%END\n")
        n = len(sites)

        contig_id = list(self.array("contig_id"))
        for cid, length in header_contigs:
            self.expect(cid in contig_id, f"contig {cid} missing from contig_id")
        if any(length is not None for _, length in header_contigs):
            lengths = dict(header_contigs)
            got = self.array("contig_length")
            for i, c in enumerate(contig_id):
                self.expect(got[i] == (lengths.get(c) or 0), f"contig_length[{c}] = {got[i]}")
        vc = self.array("variant_contig")
        pos = self.array("variant_position")
        length = self.array("variant_length")
        vid = self.array("variant_id")
        vid_mask = self.array("variant_id_mask")
        alleles = self.array("variant_allele")
        qual = self.array("variant_quality")
        filters = self.array("variant_filter")
        filter_id = list(self.array("filter_id"))
        self.array("filter_description")
        for name, a in (("variant_contig", vc), ("variant_position", pos), ("variant_id", vid),
                        ("variant_allele", alleles), ("variant_quality", qual),
                        ("variant_filter", filters)):
            if a.shape[0] != n:
                raise Mismatch(f"{name} has {a.shape[0]} variants, the VCF {n}")
        for i, (chrom, p, ident, ref, alt, q, flt, end) in enumerate(sites):
            w = f"record {i} ({chrom}:{p})"
            self.expect(contig_id[vc[i]] == chrom, f"{w}: contig {contig_id[vc[i]]}")
            self.expect(pos[i] == int(p), f"{w}: position {pos[i]}")
            self.expect(length[i] == int(end) - int(p) + 1, f"{w}: length {length[i]} (END {end})")
            self.expect(vid[i] == ident and vid_mask[i] == (ident == "."), f"{w}: id {vid[i]}")
            want = [ref] + ([] if alt == "." else alt.split(","))
            want += [""] * (alleles.shape[1] - len(want))
            self.expect(list(alleles[i]) == want, f"{w}: alleles {list(alleles[i])} != {want}")
            self.check_float_row(q, qual[i:i + 1], f"{w} QUAL")
            names = set() if flt == "." else set(flt.split(";"))
            got = {filter_id[j] for j in np.flatnonzero(filters[i])}
            self.expect(got == names, f"{w}: filters {got} != {names}")
        self.expect(alleles.shape[1] == max([len(x.split(",")) + 1 - (x == ".")
                                             for x in (s[4] for s in sites)] or [alleles.shape[1]]),
                    "variant_allele is wider than the most alleles")

        # INFO and FORMAT fields, one bcftools query each
        for kind, fid, number, ftype in fields:
            if kind == "FORMAT" and (fid == "GT" or not samples):
                continue
            name = ("call_" if kind == "FORMAT" else "variant_") + fid
            got = self.array(name)
            if kind == "INFO":
                texts = [r[0] for r in query(vcf, f"%INFO/{fid}\n")]
            else:
                texts = [r[:-1] for r in query(vcf, f"[%{fid}\t]\n")]
            self.check_field(kind, ftype, texts, got, name)

        if samples and any(k == "FORMAT" and f == "GT" for k, f, _, _ in fields):
            self.check_genotypes(vcf, n)
        self.check_region_index(vc, pos, length)
        extra = set(self.root.array_keys()) - self.checked
        self.expect(not extra, f"arrays not checked: {sorted(extra)}")
        return n

    def check_genotypes(self, vcf, n):
        gt = self.array("call_genotype")
        phased = self.array("call_genotype_phased")
        mask = self.array("call_genotype_mask")
        self.expect(gt.shape[0] == n, "call_genotype length")
        ploidy = gt.shape[2]
        most = 0
        called = False
        cache = {}  # GT text -> (alleles padded to the ploidy, phased); texts repeat a lot

        def parse(text):
            parts = re.split(r"[/|]", text)
            alleles = [INT_MISSING if a == "." else int(a) for a in parts]
            alleles += [INT_FILL] * (ploidy - len(alleles))
            return alleles, len(parts) == 1 or text[len(parts[0])] == "|", len(parts)

        for i, row in enumerate(query(vcf, "[%GT\t]\n")):
            parsed = [cache.get(t) or cache.setdefault(t, parse(t)) for t in row[:-1]]
            want = np.array([p[0] for p in parsed], dtype=np.int64).reshape(-1, ploidy)
            want_phased = np.array([p[1] for p in parsed], dtype=bool)
            most = max([most] + [p[2] for p in parsed])
            called = called or any(t != "." for t in row[:-1])
            if not np.array_equal(gt[i].astype(np.int64), want):
                s = int(np.flatnonzero((gt[i] != want).any(axis=1))[0])
                self.expect(False, f"record {i} sample {s} GT {row[s]}: {list(gt[i, s])}")
            if not np.array_equal(phased[i], want_phased):
                s = int(np.flatnonzero(phased[i] != want_phased)[0])
                self.expect(False, f"record {i} sample {s} GT {row[s]}: phased {phased[i, s]}")
        # Without any call (every GT ".") the ploidy is the converter's choice.
        self.expect(not called or ploidy == most, f"ploidy {ploidy}, the VCF's largest {most}")
        self.expect(np.array_equal(mask, gt < 0), "call_genotype_mask != call_genotype < 0")
        self.expect(np.iinfo(gt.dtype).max >= gt.max(initial=0), "genotype dtype too narrow")

    def check_region_index(self, vc, pos, length):
        index = self.array("region_index")
        chunk = self.root["variant_position"].chunks[0]
        rows = []
        for c in range(0, len(pos), chunk):
            lo, hi = c, min(len(pos), c + chunk)
            start = lo
            for j in range(lo + 1, hi + 1):
                if j == hi or vc[j] != vc[start]:
                    end = pos[start:j] + length[start:j] - 1
                    rows.append([c // chunk, vc[start], pos[start], pos[j - 1], end.max(),
                                 j - start])
                    start = j
        self.expect(np.array_equal(index.reshape(-1, 6), np.array(rows).reshape(-1, 6)),
                    f"region_index {index.tolist()} != {rows}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    checker = Checker(sys.argv[1], sys.argv[2])
    try:
        n = checker.run()
    except Mismatch as e:
        checker.errors.append(str(e))
        n = -1
    if checker.errors:
        print(f"check_vcz_vs_vcf: {sys.argv[2]} differs from {sys.argv[1]}:", file=sys.stderr)
        for e in checker.errors:
            print("  " + e, file=sys.stderr)
        sys.exit(1)
    print(f"check_vcz_vs_vcf: {sys.argv[2]} agrees with {sys.argv[1]} "
          f"({n} variants, {len(checker.checked)} arrays)")


if __name__ == "__main__":
    main()
