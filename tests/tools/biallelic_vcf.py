#!/usr/bin/python3
"""Rewrite a VCF for plink 1.9 and vcftools, which read multi-allelic sites differently from
vczstats' REF-against-the-rest rule (tests/tools/POPGEN.md, "Linkage"):

  * every ALT allele becomes allele 1 (ALT is the first ALT; GT indices > 1 become 1), so a
    multi-allelic site reads as REF against the other alleles;
  * IDs become v0, v1, ... (the record's index), so pairs can be matched by ID;
  * --unphase writes every GT unphased ('/');
  * --ids-only renames the IDs and changes nothing else (a store keeps its multi-allelic sites,
    and its pairs still match the rewritten file's by ID).

Usage: biallelic_vcf.py IN.vcf[.gz] OUT.vcf [--unphase] [--ids-only]
"""

import gzip
import re
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    unphase = "--unphase" in sys.argv
    ids_only = "--ids-only" in sys.argv
    src, dst = args
    opener = gzip.open if src.endswith(".gz") else open
    index = 0
    allele = re.compile(r"\d+")
    with opener(src, "rt") as f, open(dst, "w") as out:
        for line in f:
            if line.startswith("#"):
                out.write(line)
                continue
            cols = line.rstrip("\n").split("\t")
            cols[2] = f"v{index}"
            index += 1
            if ids_only:
                out.write("\t".join(cols) + "\n")
                continue
            alts = cols[4].split(",")
            cols[4] = alts[0]
            fmt = cols[8].split(":")
            gt = fmt.index("GT") if "GT" in fmt else -1
            if gt >= 0:
                for k in range(9, len(cols)):
                    fields = cols[k].split(":")
                    g = allele.sub(lambda m: "1" if int(m.group(0)) > 1 else m.group(0), fields[gt])
                    if unphase:
                        g = g.replace("|", "/")
                    fields[gt] = g
                    cols[k] = ":".join(fields)
            out.write("\t".join(cols) + "\n")


if __name__ == "__main__":
    main()
