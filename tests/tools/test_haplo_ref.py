#!/usr/bin/python3
"""Self-tests of ref_haplo.py: is the reference right?

  * a planted sweep whose answer is known by construction: derived carriers share one
    haplotype over a stretch around the focal site and then split by a binary code, ancestral
    carriers split by a code next to it; EHH at every distance, iHH, iHS, the EHH decay curve
    and Garud's H of the window around it are computed by hand here (POPGEN.md §11.6);
  * two evaluations of EHH: pairwise shared lengths (--method pairs, the default) against group
    sizes of identical haplotypes (--method groups), on scrm simulations and on random phased
    VCFs with missing calls and multi-allelic sites, for iHS, nSL, XP-EHH and XP-nSL;
  * XP-EHH(A, B) = -XP-EHH(B, A).

Run directly: `/usr/bin/python3 tests/tools/test_haplo_ref.py` (prints 'N passed, N failed').
Needs python3-zarr and bcftools (vcf2vcz.py), scrm; tests missing one are skipped.
"""

import contextlib
import io
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"
TMP = tempfile.mkdtemp(prefix="test_haplo-")
sys.path.insert(0, HERE)


class Skip(Exception):
    pass


def need(tool):
    if not shutil.which(tool):
        raise Skip(f"{tool} not installed")


def ref(*args):
    import ref_haplo
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ref_haplo.main([str(a) for a in args])
    return out.getvalue()


def rows(text):
    lines = [l for l in text.splitlines() if l and not l.startswith("#")]
    header = lines[0].split("\t")
    return [dict(zip(header, l.split("\t"))) for l in lines[1:]]


def close(a, b, rel=1e-12):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def to_store(vcf_text, name):
    """bgzip a VCF text and convert it with vcf2vcz.py (bcftools query + python3-zarr)."""
    need("bcftools")
    vcf = os.path.join(TMP, name + ".vcf")
    with open(vcf, "w") as f:
        f.write(vcf_text)
    quiet = dict(check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["bcftools", "view", "-Oz", "-o", vcf + ".gz", vcf], **quiet)
    subprocess.run(["bcftools", "index", "-t", vcf + ".gz"], **quiet)
    store = os.path.join(TMP, name + ".vcz")
    subprocess.run([PY, os.path.join(HERE, "vcf2vcz.py"), vcf + ".gz", store,
                    "--variants-chunk-size", "17", "--samples-chunk-size", "7"], **quiet)
    return store


def vcf_text(positions, haps, ploidy=2, chrom="1"):
    """haps[site][haplotype] alleles (-1 missing); consecutive haplotypes form a sample."""
    n = len(haps[0])
    out = ["##fileformat=VCFv4.2", f"##contig=<ID={chrom},length={positions[-1] + 1000}>",
           '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
           "\t".join(["#CHROM", "POS", "ID", "REF", "ALT", "QUAL", "FILTER", "INFO", "FORMAT"] +
                     [f"s{i}" for i in range(n // ploidy)])]
    for p, h in zip(positions, haps):
        top = max(h)
        alts = ",".join("CGT"[k] for k in range(max(top, 1)))
        calls = ["|".join("." if a < 0 else str(a) for a in h[i:i + ploidy]) for i in range(0, n, ploidy)]
        out.append("\t".join([chrom, str(p), ".", "A", alts, ".", "PASS", ".", "GT"] + calls))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- planted sweep

PLANT_D, PLANT_M, PLANT_N = 10, 30, 61  # planted half-width, focal index, sites


def planted_store():
    """40 haplotypes; 16 derived carriers of the focal site (index 30, POS 31000) are identical
    at every site within 10 sites of it and then split by a 4-bit code (one bit per site,
    most significant first); the 24 ancestral carriers split by a 5-bit code on the 5 sites
    next to it. Other alleles are random; every site is kept by --maf 0.05."""
    rng = random.Random(11)
    n, k = 40, 16
    order = list(range(n))
    rng.shuffle(order)
    derived, ancestral = order[:k], order[k:]
    code = {h: c for c, h in enumerate(derived)}
    acode = {h: c for c, h in enumerate(ancestral)}
    haps = []
    for i in range(PLANT_N):
        t = abs(i - PLANT_M)
        while True:
            row = [rng.randint(0, 1) for _ in range(n)]
            for h in derived:
                if t == 0:
                    row[h] = 1
                elif t <= PLANT_D:
                    row[h] = 0
                elif t <= PLANT_D + 4:
                    row[h] = (code[h] >> (3 - (t - PLANT_D - 1))) & 1
            for h in ancestral:
                if t == 0:
                    row[h] = 0
                elif t <= 5:
                    row[h] = (acode[h] >> (4 - (t - 1))) & 1
            if 2 <= sum(row) <= n - 2:
                break
        haps.append(row)
    positions = [1000 * (i + 1) for i in range(PLANT_N)]
    return to_store(vcf_text(positions, haps), "planted")


def trapezoid(values, step=1000.0):
    return sum(step * (a + b) / 2 for a, b in zip(values, values[1:]))


def planted_expectation():
    """EHH of each class by distance (derived to 0, ancestral to its first value <= 0.05)."""
    ehh_d = [1.0] * (PLANT_D + 1) + [56 / 120, 24 / 120, 8 / 120, 0.0]
    ehh_a = [1.0, 148 / 276, 84 / 276, 36 / 276, 12 / 276]
    ihh_d = 2 * trapezoid(ehh_d)
    ihh_a = 2 * trapezoid(ehh_a)
    return ehh_d, ehh_a, ihh_d, ihh_a


def test_planted_sweep():
    store = planted_store()
    ehh_d, ehh_a, ihh_d, ihh_a = planted_expectation()
    for method in ("pairs", "groups"):
        out = rows(ref("ihs", store, "-r", "1:1-100000", "--method", method))
        focal = [r for r in out if r["pos"] == "31000"]
        assert len(focal) == 1, f"{method}: the focal site has no score"
        r = focal[0]
        assert close(float(r["ihh1"]), ihh_d), (method, r["ihh1"], ihh_d)
        assert close(float(r["ihh0"]), ihh_a), (method, r["ihh0"], ihh_a)
        assert close(float(r["ihs"]), math.log10(ihh_d / ihh_a)), (method, r["ihs"])
        assert close(float(r["freq"]), 0.4)
        assert close(float(r["ihh1_left"]), ihh_d / 2) and close(float(r["ihh1_right"]), ihh_d / 2)
    curve = rows(ref("ehh", store, "--focal", "1:31000", "--ehh-window", "100000"))
    by_distance = {int(r["variants"]): r for r in curve}
    for sign in (-1, 1):
        for t, v in enumerate(ehh_d):
            assert close(float(by_distance[sign * t]["ehh_derived"]), v), (t, v)
        for t, v in enumerate(ehh_a):
            assert close(float(by_distance[sign * t]["ehh_ancestral"]), v), (t, v)
    # Garud's H over the 11 sites around the focal one: the 16 derived carriers are one
    # haplotype, the 24 ancestral ones all differ.
    g = rows(ref("garud", store, "-r", "1:26000-36000"))[0]
    n = 40
    h1 = (16 / n) ** 2 + 24 / n ** 2
    expect = dict(n_used=11, n_distinct=25, h1=h1, h12=h1 + 2 * (16 / n) * (1 / n),
                  h123=h1 + 2 * (16 / n / n + 16 / n / n + 1 / n / n), h2_h1=(h1 - (16 / n) ** 2) / h1,
                  hap_diversity=n / (n - 1) * (1 - h1))
    for key, v in expect.items():
        assert close(float(g[key]), v), (key, g[key], v)


# ------------------------------------------------------ pairs against groups

def scrm_store(name, args, length):
    need("scrm")
    ms = os.path.join(TMP, name + ".ms")
    with open(ms, "w") as f:
        subprocess.run(["scrm", *map(str, args)], stdout=f, check=True)
    binary = os.environ.get("VCZSTATS")
    if not binary:
        raise Skip("VCZSTATS (the vczstats binary) is not set")
    store = os.path.join(TMP, name + ".vcz")
    subprocess.run([binary, "convert", "--from", "ms", ms, store, "--length", str(length), "-f"],
                   check=True, capture_output=True)
    return store


def pops_file(store, name, labels):
    import ref_haplo
    g = ref_haplo.open_store(store)
    samples = [str(s) for s in g["sample_id"][:]]
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        for i, s in enumerate(samples):
            f.write(f"{s}\t{labels[i % len(labels)]}\n")
    return path


def same(a, b, what):
    ra, rb = rows(a), rows(b)
    assert len(ra) == len(rb) and len(ra) > 0, (what, len(ra), len(rb))
    for x, y in zip(ra, rb):
        for c in x:
            u, v = x[c], y[c]
            try:
                p, q = float(u), float(v)
            except ValueError:
                assert u == v, (what, c, u, v)
                continue
            assert (math.isnan(p) and math.isnan(q)) or close(p, q, 1e-12), (what, c, u, v)


def random_phased_store():
    rng = random.Random(5)
    n, sites = 24, 160
    positions = sorted(rng.sample(range(1, 60000), sites))
    haps = []
    base = [[rng.randint(0, 1) for _ in range(n)] for _ in range(4)]
    for i in range(sites):
        src = base[i % 4]
        row = [a if rng.random() < 0.8 else 1 - a for a in src]
        if rng.random() < 0.1:
            row[rng.randrange(n)] = -1  # a missing call: the site is left out
        if rng.random() < 0.1:
            row[rng.randrange(n)] = 2  # a third allele: the site is left out
        if rng.random() < 0.05:
            row = [a + 1 if a >= 0 else a for a in row]  # alleles 1 and 2: still usable
        haps.append(row)
    return to_store(vcf_text(positions, haps), "random_phased")


def test_pairs_equal_groups():
    stores = [("scrm", scrm_store("scrm_small", [24, 1, "-t", 40, "-r", 300, 100000, "-seed", 3, 4, 5], 100000)),
              ("random", random_phased_store())]
    for label, store in stores:
        pops = pops_file(store, label + ".pops", ["A", "B"])
        for cmd in ("ihs", "nsl"):
            opts = ["--maf", "0.1", "--min-bin-sites", "2", "--bins", "5", "--max-extend-nsl", "20"]
            a = ref(cmd, store, *opts)
            b = ref(cmd, store, *opts, "--method", "groups")
            same(a, b, f"{label} {cmd}")
        for cmd in ("xpehh", "xpnsl"):
            opts = ["-P", pops, "--max-extend-nsl", "20"]
            a = ref(cmd, store, *opts, "--pair", "A,B")
            b = ref(cmd, store, *opts, "--pair", "A,B", "--method", "groups")
            same(a, b, f"{label} {cmd}")
            c = rows(ref(cmd, store, *opts, "--pair", "B,A"))
            for x, y in zip(rows(a), c):
                assert close(float(x[cmd]), -float(y[cmd])), (label, cmd, x["pos"])


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--planted":
        # Write the planted-sweep store into a directory (for the C++ tests) and print its path.
        global TMP
        shutil.rmtree(TMP, ignore_errors=True)
        TMP = sys.argv[2]
        with contextlib.redirect_stdout(sys.stderr):
            path = planted_store()
        print(path)
        return
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    passed = failed = skipped = 0
    for t in tests:
        try:
            t()
            passed += 1
            print(f"ok {t.__name__}")
        except Skip as e:
            skipped += 1
            print(f"skip {t.__name__}: {e}")
        except Exception as e:  # noqa: BLE001
            failed += 1
            import traceback
            traceback.print_exc()
            print(f"FAIL {t.__name__}: {e!r}")
    shutil.rmtree(TMP, ignore_errors=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
