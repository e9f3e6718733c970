#!/usr/bin/python3
"""Self-tests of ref_popgen.py: is the reference right?

Three independent checks (POPGEN.md lists the conventions and tolerances):
  * brute force vs closed form: the pairwise loops (--method pairs) equal the
    allele-count formulas (--method counts) on random VCFs with missing calls,
    multi-allelic sites, ALT '.', and mixed ploidy (relative 1e-9);
  * hand-computed values: scikit-allel's documented examples;
  * peers: vcftools 0.1.16 (--site-pi, --window-pi, --TajimaD, --weir-fst-pop,
    --counts) and plink2 (--freq counts, --geno-counts, --hardy, --het, --fst
    hudson|wc) on random VCFs and on Debian's 1000 Genomes example
    (shapeit4-example reference.vcf.gz, 300 samples, split into P1 = samples
    1-100, P2 = 101-200, P3 = 201-300 in file order). Both print 6 significant
    digits: tolerance relative 1e-5 (absolute 1e-9 near 0).

Run directly: `/usr/bin/python3 tests/tools/test_popgen_ref.py` (prints
'N passed, N failed'); tests needing a missing peer tool or data are skipped.
"""

import gzip
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"
KG_REFERENCE = "/usr/share/doc/shapeit4/examples/test/reference.vcf.gz"
TMP = tempfile.mkdtemp(prefix="test_popgen-")


class Skip(Exception):
    pass


def ref(*args):
    """Run ref_popgen.py's main() in this process (saves an interpreter and numba start per call)."""
    import contextlib
    import io
    sys.path.insert(0, HERE)
    import ref_popgen
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            ref_popgen.main([str(a) for a in args])
    except SystemExit as e:
        raise AssertionError(f"ref_popgen.py {' '.join(map(str, args))}: exit {e.code}")
    return out.getvalue()


def random_vcf(name, *args):
    path = os.path.join(TMP, name)
    if not os.path.exists(path):
        subprocess.run([PY, os.path.join(HERE, "random_vcf.py"), *map(str, args), "-o", path], check=True)
    return path


def missing(what):
    """A missing reference tool: a skip, or under CI=true (where scripts/setup.sh installed every
    tool) a failure, so that no comparison silently stops running."""
    if os.environ.get("CI") == "true":
        return AssertionError(f"{what}, and CI=true requires it (run scripts/setup.sh)")
    return Skip(what)


def need(tool):
    path = shutil.which(tool) or f"/usr/bin/{tool}"
    if not os.path.exists(path):
        raise missing(f"{tool} is not installed")
    return path


def rows(text):
    lines = [line.split("\t") for line in text.rstrip("\n").split("\n")]
    header = [h.lstrip("#") for h in lines[0]]
    return [dict(zip(header, line)) for line in lines[1:]]


def read_rows(path):
    with open(path) as f:
        return rows(f.read())


def num(text):
    return math.nan if text in ("nan", "-nan", "NA", "inf", "-inf") else float(text)


def close(a, b, rel=1e-5, abs_=1e-9):
    a, b = num(a) if isinstance(a, str) else a, num(b) if isinstance(b, str) else b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)


class Diff:
    """Largest absolute and relative differences seen, for the report."""

    def __init__(self):
        self.abs = self.rel = 0.0
        self.n = 0

    def add(self, a, b):
        a, b = num(a) if isinstance(a, str) else a, num(b) if isinstance(b, str) else b
        if math.isnan(a) and math.isnan(b):
            self.n += 1
            return
        d = abs(a - b)
        self.abs = max(self.abs, d)
        if max(abs(a), abs(b)) > 1e-9:  # relative differences of values printed as 0 are noise
            self.rel = max(self.rel, d / max(abs(a), abs(b)))
        self.n += 1

    def __str__(self):
        return f"{self.n} values, max abs diff {self.abs:.3g}, max rel diff {self.rel:.3g}"


def check_close(what, a, b, diff=None, rel=1e-5, abs_=1e-9):
    if diff is not None:
        diff.add(a, b)
    assert close(a, b, rel, abs_), f"{what}: {a} != {b}"


def pops_file(name, assignment):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write("sample\tpopulation\n")
        for sample, pop in assignment:
            f.write(f"{sample}\t{pop}\n")
    return path


def random_pops(n_samples, names):
    """Contiguous blocks of samples S0000.. in file order, one per name."""
    per = -(-n_samples // len(names))
    return pops_file("pops_" + "".join(names) + f"{n_samples}.txt",
                     [(f"S{i:04d}", names[i // per]) for i in range(n_samples)])


def keep_file(pops_path, pop):
    path = f"{pops_path}.{pop}.keep"
    with open(pops_path) as f, open(path, "w") as g:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[1] == pop:
                g.write(parts[0] + "\n")
    return path


def vcftools(*args):
    need("vcftools")
    prefix = os.path.join(TMP, "vt")
    result = subprocess.run(["vcftools", *map(str, args), "--out", prefix], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return prefix, result.stderr


def plink2(vcf, *args):
    need("plink2")
    prefix = os.path.join(TMP, "plout")
    for f in os.listdir(TMP):
        if f.startswith("plout."):
            os.remove(os.path.join(TMP, f))
    result = subprocess.run(["plink2", "--vcf", vcf, "--vcf-half-call", "m", "--allow-extra-chr",
                             *map(str, args), "--out", prefix], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-1500:]
    return prefix


REPORT = {}


def kg_subset():
    """The first 0.5 Mb (about 4300 records) of the 1000 Genomes example as a plain VCF."""
    if not os.path.exists(KG_REFERENCE):
        raise missing(f"{KG_REFERENCE} is absent (apt install shapeit4-example)")
    path = os.path.join(TMP, "kg.vcf")
    if not os.path.exists(path):
        with gzip.open(KG_REFERENCE, "rt") as f, open(path, "w") as g:
            for line in f:
                if not line.startswith("#") and int(line.split("\t", 2)[1]) > 1500000:
                    break
                g.write(line)
    with open(path) as f:
        for line in f:
            if line.startswith("#CHROM"):
                samples = line.rstrip("\n").split("\t")[9:]
                break
    pops = pops_file("kg_pops.txt", [(s, "P1" if i < 100 else "P2" if i < 200 else "P3")
                                     for i, s in enumerate(samples)])
    return path, pops


# ------------------------------------------------- brute force vs closed form

def compare_tables(a, b, what):
    ra, rb = rows(a), rows(b)
    assert len(ra) == len(rb) and len(ra) > 0, (what, len(ra), len(rb))
    for x, y in zip(ra, rb):
        for key in x:
            try:
                float(x[key])
            except ValueError:
                assert x[key] == y[key], (what, key, x[key], y[key])
                continue
            assert close(x[key], y[key], rel=1e-9, abs_=1e-12), (what, key, x, y)


def test_pairs_equal_counts():
    pops = random_pops(24, ["A", "B", "C", "D"])
    vcf = random_vcf("pc11.vcf", "--seed", 11, "--samples", 24, "--variants", 300, "--contigs", 2,
                     "--missing", 0.06, "--multiallelic", 0.15, "--alt-dot", 0.05, "--mixed-ploidy", 0.2)
    cases = [
        ["diversity", "--per-site"],
        ["diversity", "--window-size", 700, "--window-step", 300],
        ["diversity", "--window-variants", 40, "-r", "chr1:200-2500,chr2"],
        ["divergence", "--per-site"],
        ["divergence", "--window-size", 1000, "--pbs", "A,B,C"],
        ["divergence", "--whole", "--half-call", "missing"],
        ["fstats", "--f2", "A,B", "--blocks", 25],
        ["fstats", "--f3", "C,A,B", "--blocks", 25],
        ["fstats", "--d", "A,B,C,D", "--blocks", 25],
        ["fstats", "--d", "A,B,C,D", "--per-site"],
    ]
    triploid = random_vcf("pc12.vcf", "--seed", 12, "--samples", 24, "--variants", 200, "--ploidy", 3,
                          "--missing", 0.1, "--multiallelic", 0.2)
    # tiny populations (2 samples) with much missing data: n < 2 at many sites
    sparse = random_vcf("pc13.vcf", "--seed", 13, "--samples", 8, "--variants", 300, "--missing", 0.35)
    tiny = random_pops(8, ["A", "B", "C", "D"])
    runs = [(vcf, pops, c) for c in cases] + [(triploid, pops, cases[0]), (triploid, pops, cases[3])]
    runs += [(sparse, tiny, c) for c in cases[6:]]
    for vcf, pops, case in runs:
        a = ref(*case, vcf, "-P", pops, "--method", "pairs")
        b = ref(*case, vcf, "-P", pops, "--method", "counts")
        compare_tables(a, b, case)


# ---------------------------------------------------------- hand-computed

HEADER = ("##fileformat=VCFv4.2\n##contig=<ID=1,length=31>\n"
          '##FORMAT=<ID=GT,Number=1,Type=String,Description="GT">\n'
          "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tX\tY\n")


def write_vcf(name, positions, genotypes, n_alt=2):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(HEADER)
        for pos, (g1, g2) in zip(positions, genotypes):
            calls = ["/".join("." if a < 0 else str(a) for a in g) for g in (g1, g2)]
            f.write(f"1\t{pos}\t.\tA\t{','.join('CGT'[:n_alt])}\t.\t.\t.\tGT\t" + "\t".join(calls) + "\n")
    return path


def test_scikit_allel_examples():
    # allel.stats.sequence_diversity / windowed_diversity / tajima_d docstrings
    g = [[[0, 0], [0, 0]], [[0, 0], [0, 1]], [[0, 0], [1, 1]], [[0, 1], [1, 1]], [[1, 1], [1, 1]],
         [[0, 0], [1, 2]], [[0, 1], [1, 2]], [[0, 1], [-1, -1]], [[-1, -1], [-1, -1]]]
    pos = [2, 4, 7, 14, 15, 18, 19, 25, 27]
    vcf = write_vcf("skallel.vcf", pos, g)
    r = rows(ref("diversity", vcf, "-r", "1:1-31"))[0]
    assert close(r["pi_per_bp"], 0.13978494623655915, 1e-12)
    assert close(r["tajima_d"], 3.1445848780213814, 1e-12)
    assert r["n_max"] == "4" and r["n_seg"] == "6"
    w = rows(ref("diversity", vcf, "-r", "1:1-31", "--window-size", 10))
    # windowed_diversity(pos, ac, size=10, start=1, stop=31): windows [1, 10], [11, 20], [21, 31]
    # (the last one ends at stop: 11 bases), pi 0.11666667, 0.21666667, 0.09090909
    assert [(x["start"], x["end"]) for x in w] == [("1", "10"), ("11", "20"), ("21", "31")]
    assert [x["n_sites"] for x in w] == ["3", "4", "2"]
    assert close(w[0]["pi_per_bp"], 0.11666667, 1e-7) and close(w[1]["pi_per_bp"], 0.21666667, 1e-7)
    assert close(w[2]["pi_per_bp"], 0.09090909, 1e-7)
    # without start and stop: from the first to the last position, range(2, 27, 10)
    w = rows(ref("diversity", vcf, "--window-size", 10))
    assert [(x["start"], x["end"]) for x in w] == [("2", "11"), ("12", "21"), ("22", "27")]
    # sequence_divergence docstring: haplotypes 0,1 (sample X) vs 2,3 (sample Y)
    h = [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 1], [0, 1, 1, 1], [1, 1, 1, 1], [0, 0, 1, 2], [0, 1, 1, 2],
         [0, 1, -1, -1], [-1, -1, -1, -1]]
    vcf = write_vcf("skallel_h.vcf", pos, [([x[0], x[1]], [x[2], x[3]]) for x in h])
    pops = pops_file("xy.txt", [("X", "P"), ("Y", "Q")])
    d = rows(ref("divergence", vcf, "-P", pops, "-r", "1:1-31"))[0]
    assert close(d["dxy_per_bp"], 0.12096774193548387, 1e-12)
    # mean_pairwise_difference docstring on the same haplotypes, as one population
    site = rows(ref("diversity", vcf, "--per-site"))
    want = [0.0, 0.5, 0.66666667, 0.5, 0.0, 0.83333333, 0.83333333, 1.0, math.nan]
    assert all(close(s["pi"], x, 1e-7) for s, x in zip(site, want)), site


def test_hand_computed_counts_and_sfs():
    path = os.path.join(TMP, "hand.vcf")
    with open(path, "w") as f:
        f.write(HEADER.replace("\tX\tY", "\tX\tY\tZ"))
        f.write("1\t5\t.\tA\tC,G\t.\t.\t.\tGT\t0/1\t1/2\t./0\n")   # het_ref het_alt missing; n 5
        f.write("1\t6\t.\tA\tC\t.\t.\t.\tGT\t0\t1/1\t0|1\n")       # haploid 0: hom_ref; n 5
        f.write("1\t7\t.\tA\tC\t.\t.\t.\tGT\t0/1\t1/1\t0/0\n")
    c = rows(ref("counts", path))
    assert [(r["n_called_alleles"], r["allele_counts"], r["hom_ref"], r["het_ref"], r["hom_alt"], r["het_alt"],
             r["missing"]) for r in c] == [("5", "2,2,1", "0", "1", "0", "1", "1"),
                                           ("5", "2,3", "1", "1", "1", "0", "0"),
                                           ("6", "3,3", "1", "1", "1", "0", "0")]
    # site 5: pairs among 0,1,1,2,0 -> 10 pairs, same: (0,0) and (1,1) -> pi 0.8
    s = rows(ref("diversity", path, "--per-site"))
    assert close(s[0]["pi"], 0.8, 1e-12) and close(s[1]["pi"], 0.6, 1e-12)
    # SFS: only site 7 qualifies (biallelic, all called, full ploidy): derived 3 of 6
    sfs = rows(ref("sfs", path))
    assert [(r["n"], r["derived"], r["count"]) for r in sfs if r["count"] != "0"] == [("6", "3", "1")]
    folded = rows(ref("sfs", path, "--folded"))
    assert [(r["folded"], r["count"]) for r in folded] == [("0", "0"), ("1", "0"), ("2", "0"), ("3", "1")]


def test_hwe_exact_hand_computed():
    sys.path.insert(0, HERE)
    import ref_popgen
    # Wigginton et al. (2005): n=100 diploids, nA=21 minor alleles, het 11: enumerate all het counts
    def brute(het, hom1, hom2):
        n = het + hom1 + hom2
        n_a = 2 * hom1 + het
        probs = {}
        for h in range(n_a % 2, min(n_a, 2 * n - n_a) + 1, 2):
            a = (n_a - h) // 2
            b = n - h - a
            probs[h] = math.exp(math.lgamma(n + 1) - math.lgamma(a + 1) - math.lgamma(h + 1) - math.lgamma(b + 1)
                                + h * math.log(2) + math.lgamma(n_a + 1) + math.lgamma(2 * n - n_a + 1)
                                - math.lgamma(2 * n + 1))
        return sum(p for p in probs.values() if p <= probs[het] * (1 + 1e-9))
    for het, hom1, hom2 in [(11, 5, 84), (21, 0, 79), (1, 10, 89), (0, 3, 7), (7, 0, 0), (50, 25, 25), (3, 1, 6)]:
        assert close(ref_popgen.snphwe(het, hom1, hom2), min(1.0, brute(het, hom1, hom2)), 1e-9), (het, hom1, hom2)


# ------------------------------------------------------------------ vcftools

def vcftools_site_pi(vcf, keep, pops, pop, extra=(), diff=None):
    prefix, _ = vcftools("--vcf", vcf, "--keep", keep, "--site-pi")
    theirs = read_rows(prefix + ".sites.pi")
    mine = [r for r in rows(ref("diversity", vcf, "-P", pops, "--per-site", "--vcftools-compat", *extra))
            if r["pop"] == pop]
    assert len(theirs) == len(mine) and len(mine) > 0, (len(theirs), len(mine))
    for t, m in zip(theirs, mine):
        assert (t["CHROM"], t["POS"]) == (m["chrom"], m["pos"])
        check_close(f"site-pi {t['POS']}", m["pi"], t["PI"], diff)


def vcftools_window_pi(vcf, keep, pops, pop, size, step, diff=None):
    prefix, _ = vcftools("--vcf", vcf, "--keep", keep, "--window-pi", size, "--window-pi-step", step)
    theirs = read_rows(prefix + ".windowed.pi")
    mine = [r for r in rows(ref("diversity", vcf, "-P", pops, "--vcftools-compat", "--window-size", size,
                                "--window-step", step)) if r["pop"] == pop]
    assert len(theirs) == len(mine) and len(mine) > 0, (len(theirs), len(mine))
    for t, m in zip(theirs, mine):
        assert (t["CHROM"], t["BIN_START"], t["BIN_END"], t["N_VARIANTS"]) == \
            (m["chrom"], m["bin_start"], m["bin_end"], m["n_variants"]), (t, m)
        check_close(f"window-pi {t['BIN_START']}", m["pi"], t["PI"], diff)
    return theirs


def vcftools_tajima(vcf, keep, pops, pop, size, diff=None):
    prefix, _ = vcftools("--vcf", vcf, "--keep", keep, "--TajimaD", size)
    theirs = read_rows(prefix + ".Tajima.D")
    mine = [r for r in rows(ref("diversity", vcf, "-P", pops, "--vcftools-compat", "--tajima-d-compat",
                                "--window-size", size)) if r["pop"] == pop]
    assert len(theirs) == len(mine) and len(mine) > 0, (len(theirs), len(mine))
    for t, m in zip(theirs, mine):
        assert (t["CHROM"], t["BIN_START"], t["N_SNPS"]) == (m["chrom"], m["bin_start"], m["n_snps"]), (t, m)
        check_close(f"TajimaD {t['BIN_START']}", m["tajima_d"], t["TajimaD"], diff)


def vcftools_weir(vcf, pops, a, b, diff=None):
    prefix, log = vcftools("--vcf", vcf, "--weir-fst-pop", keep_file(pops, a), "--weir-fst-pop", keep_file(pops, b))
    theirs = read_rows(prefix + ".weir.fst")
    mine = rows(ref("divergence", vcf, "-P", pops, "--pairs", f"{a},{b}", "--per-site", "--vcftools-compat"))
    assert len(theirs) == len(mine) and len(mine) > 0, (len(theirs), len(mine))
    for t, m in zip(theirs, mine):
        assert (t["CHROM"], t["POS"]) == (m["chrom"], m["pos"])
        check_close(f"weir {t['POS']}", m["wc_fst"], t["WEIR_AND_COCKERHAM_FST"], diff)
    total = rows(ref("divergence", vcf, "-P", pops, "--pairs", f"{a},{b}", "--whole", "--vcftools-compat"))[0]
    mean = float(log.split("Weir and Cockerham mean Fst estimate: ")[1].split()[0])
    weighted = float(log.split("Weir and Cockerham weighted Fst estimate: ")[1].split()[0])
    check_close("weir mean", total["wc_fst_mean"], mean, diff, rel=1e-4)  # the log prints 5 digits
    check_close("weir weighted", total["wc_fst"], weighted, diff, rel=1e-4)


def test_vcftools_random_missing_multiallelic():
    d = REPORT.setdefault("vcftools, random VCFs (missing, multi-allelic, mixed ploidy)", Diff())
    vcf = random_vcf("vt.vcf", "--seed", 21, "--samples", 40, "--variants", 1500, "--contigs", 2,
                     "--missing", 0.05, "--multiallelic", 0.1, "--alt-dot", 0.03, "--mean-spacing", 8)
    pops = random_pops(40, ["A", "B"])
    keep = keep_file(pops, "A")
    vcftools_site_pi(vcf, keep, pops, "A", diff=d)
    vcftools_window_pi(vcf, keep, pops, "A", 1000, 400, diff=d)
    vcftools_tajima(vcf, keep, pops, "A", 1500, diff=d)
    vcftools_weir(vcf, pops, "A", "B", diff=d)
    # mixed ploidy: vcftools skips every site with a non-diploid call (compat does the same)
    mixed = random_vcf("vtm.vcf", "--seed", 22, "--samples", 40, "--variants", 800, "--missing", 0.05,
                       "--multiallelic", 0.1, "--mixed-ploidy", 0.3)
    vcftools_site_pi(mixed, keep, pops, "A", diff=d)
    vcftools_weir(mixed, pops, "A", "B", diff=d)
    # --counts: every site, haploid calls contribute one allele, missing alleles none
    prefix, _ = vcftools("--vcf", mixed, "--counts")
    with open(prefix + ".frq.count") as f:
        theirs = [line.rstrip("\n").split("\t") for line in f][1:]
    mine = rows(ref("counts", mixed))
    assert len(theirs) == len(mine)
    for t, m in zip(theirs, mine):
        assert (t[0], t[1], t[2], t[3]) == (m["chrom"], m["pos"], m["n_alleles"], m["n_called_alleles"]), (t, m)
        assert [x.rsplit(":", 1)[1] for x in t[4:]] == m["allele_counts"].split(","), (t, m)


def test_vcftools_edge_cases():
    # S = 1 and S = 0 bins of --TajimaD, a monomorphic site, a missing genotype
    path = os.path.join(TMP, "edge.vcf")
    with open(path, "w") as f:
        f.write(HEADER.replace("length=31", "length=5000").replace("\tX\tY", "\tX\tY\tZ"))
        for pos, calls in ((10, "0/1\t0/0\t0/0"), (1500, "0/0\t0/0\t0/0"), (2500, "0/1\t1/1\t0/0"),
                           (2600, "0/1\t1/1\t./.")):
            f.write(f"1\t{pos}\t.\tA\tC\t.\t.\t.\tGT\t{calls}\n")
    pops = pops_file("edge_pops.txt", [("X", "A"), ("Y", "A"), ("Z", "A")])
    keep = keep_file(pops, "A")
    vcftools_tajima(path, keep, pops, "A", 1000)
    vcftools_window_pi(path, keep, pops, "A", 1000, 1000)
    vcftools_site_pi(path, keep, pops, "A")


def test_vcftools_1000_genomes():
    d = REPORT.setdefault("vcftools, 1000 Genomes chr20:1-1500000 (4.3k sites, 3 x 100 samples)", Diff())
    vcf, pops = kg_subset()
    keep = keep_file(pops, "P1")
    vcftools_site_pi(vcf, keep, pops, "P1", diff=d)
    theirs = vcftools_window_pi(vcf, keep, pops, "P1", 50000, 20000, diff=d)
    vcftools_tajima(vcf, keep, pops, "P1", 100000, diff=d)
    vcftools_weir(vcf, pops, "P1", "P3", diff=d)
    # no missing data here: the general definition (pi_sum / window length) equals vcftools' windows
    mine = {(r["start"], r["end"]): r for r in rows(ref("diversity", vcf, "-P", pops, "--window-size", 50000,
                                                        "--window-step", 20000, "--window-span", "contig"))
            if r["pop"] == "P1"}
    for t in theirs:
        check_close("window pi (general definition)", mine[t["BIN_START"], t["BIN_END"]]["pi_per_bp"], t["PI"], d)


# -------------------------------------------------------------------- plink2

def test_plink2():
    d = REPORT.setdefault("plink2, random VCF (60 samples, missing, multi-allelic)", Diff())
    vcf = random_vcf("pl.vcf", "--seed", 31, "--samples", 60, "--variants", 600, "--missing", 0.04,
                     "--multiallelic", 0.1, "--mean-spacing", 8)
    pops = random_pops(60, ["A", "B"])
    pheno = os.path.join(TMP, "pheno.txt")
    with open(pops) as f, open(pheno, "w") as g:
        g.write("#IID\tPOP\n")
        for line in list(f)[1:]:
            g.write(line)
    prefix = plink2(vcf, "--freq", "counts", "--geno-counts", "--hardy", "--het", "--pheno", pheno,
                    "--fst", "POP", "method=hudson", "report-variants", "vcols=+fstfrac")
    counts = rows(ref("counts", vcf, "--half-call", "missing"))
    acount, gcount = read_rows(prefix + ".acount"), read_rows(prefix + ".gcount")
    assert len(acount) == len(gcount) == len(counts)
    for a, g, m in zip(acount, gcount, counts):
        ac = m["allele_counts"].split(",")
        assert a["ALT_CTS"].split(",") == (ac[1:] or ["0"]) or (a["ALT"] == "." and ac == [a["OBS_CT"]]), (a, m)
        assert a["OBS_CT"] == m["n_called_alleles"]
        assert int(g["HOM_REF_CT"]) == int(m["hom_ref"])
        assert sum(map(int, g["HET_REF_ALT_CTS"].split(","))) == int(m["het_ref"])
        assert sum(map(int, g["TWO_ALT_GENO_CTS"].split(","))) == int(m["hom_alt"]) + int(m["het_alt"])
        assert int(g["MISSING_CT"]) == int(m["missing"])
    # --hardy: biallelic variants are one line (A1 = REF)
    hardy = read_rows(prefix + ".hardy")
    mine = {m["pos"]: m for m in rows(ref("hwe", vcf, "--half-call", "missing"))}
    positions = [m["pos"] for m in counts]
    biallelic = [positions[i] for i, a in enumerate(acount) if "," not in a["ALT"] and a["ALT"] != "."]
    hardy_bi = [h for h in hardy if "," not in h["AX"]]
    assert len(hardy_bi) == len(biallelic)
    for pos, h in zip(biallelic, hardy_bi):
        m = mine[pos]
        assert (h["HOM_A1_CT"], h["HET_A1_CT"], h["TWO_AX_CT"]) == (m["hom_ref"], m["het"], m["hom_alt"])
        check_close("O(HET)", m["o_het"], h["O(HET_A1)"], d)
        check_close("E(HET)", m["e_het"], h["E(HET_A1)"], d)
        check_close("P_HWE", m["p_hwe"], h["P"], d, rel=2e-5, abs_=1e-12)
    # --het
    het = read_rows(prefix + ".het")
    mine = rows(ref("het", vcf, "--half-call", "missing"))
    assert len(het) == len(mine)
    for h, m in zip(het, mine):
        assert (h["IID"], h["O(HOM)"], h["OBS_CT"]) == (m["sample"], m["o_hom"], m["n_obs"]), (h, m)
        check_close("E(HOM)", m["e_hom"], h["E(HOM)"], d)
        check_close("F", m["f"], h["F"], d, abs_=1e-5)
    # --fst hudson: per variant and summary
    fst_rows = rows(ref("divergence", vcf, "-P", pops, "--per-site", "--half-call", "missing"))
    fst_var = read_rows(prefix + ".A.B.fst.var")
    assert len(fst_var) == len(fst_rows)
    for t, m in zip(fst_var, fst_rows):
        check_close("hudson num", m["hudson_num"], t["FST_NUMER"], d)
        check_close("hudson den", m["hudson_den"], t["FST_DENOM"], d)
    total = rows(ref("divergence", vcf, "-P", pops, "--whole", "--half-call", "missing"))[0]
    summary = read_rows(prefix + ".fst.summary")[0]
    check_close("hudson fst summary", total["hudson_fst"], summary["HUDSON_FST"], d)
    # --fst wc: per variant equal; plink2 weights a biallelic site by one allele's (a, a+b+c)
    # and a multi-allelic one by the sum over all alleles (ours: all alleles everywhere)
    prefix = plink2(vcf, "--pheno", pheno, "--fst", "POP", "method=wc", "report-variants", "vcols=+fstfrac")
    fst_var = read_rows(prefix + ".A.B.fst.var")
    num = den = 0.0
    for t, m, a in zip(fst_var, fst_rows, acount):
        check_close("wc fst", m["wc_fst"], t["WC_FST"], d)
        abc = num_or_zero(m["wc_a"]) + num_or_zero(m["wc_b"]) + num_or_zero(m["wc_c"])
        if abc != 0:
            w = 0.5 if "," not in a["ALT"] else 1.0
            num += w * num_or_zero(m["wc_a"])
            den += w * abc
            check_close("wc num", w * num_or_zero(m["wc_a"]), t["FST_NUMER"], d)
    check_close("wc fst summary (plink2 weights)", num / den, read_rows(prefix + ".fst.summary")[0]["WC_FST"], d)


def num_or_zero(text):
    x = num(text)
    return 0.0 if math.isnan(x) else x


def test_plink2_1000_genomes_fst():
    d = REPORT.setdefault("plink2, 1000 Genomes chr20:1-1500000 (--fst, --hardy)", Diff())
    vcf, pops = kg_subset()
    pheno = os.path.join(TMP, "kg_pheno.txt")
    with open(pops) as f, open(pheno, "w") as g:
        g.write("#IID\tPOP\n")
        for line in list(f)[1:]:
            g.write(line)
    for method, column in (("hudson", "HUDSON_FST"), ("wc", "WC_FST")):
        prefix = plink2(vcf, "--pheno", pheno, "--fst", "POP", f"method={method}", "ids=P1", "P3")
        total = rows(ref("divergence", vcf, "-P", pops, "--pairs", "P1,P3", "--whole"))[0]
        # biallelic data: plink2's weighting equals the ratio of sums
        check_close(f"{method} fst", total["hudson_fst" if method == "hudson" else "wc_fst"],
                    read_rows(prefix + ".fst.summary")[0][column], d)


# ---------------------------------------------------------------------- main

def main():
    tests = [(k, v) for k, v in sorted(globals().items()) if k.startswith("test_") and callable(v)]
    passed = failed = skipped = 0
    import time
    for name, fn in tests:
        try:
            t0 = time.time()
            fn()
            passed += 1
            print(f"PASS {name} ({time.time() - t0:.1f} s)")
        except Skip as e:
            skipped += 1
            print(f"SKIP {name}: {e}")
        except Exception as e:  # report and go on
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {str(e)[:1500]}")
    for what, diff in REPORT.items():
        print(f"  {what}: {diff}")
    shutil.rmtree(TMP, ignore_errors=True)
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
