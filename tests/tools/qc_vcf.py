#!/usr/bin/python3
"""Give a test VCF the fields that site filters read, deterministically.

Reads a VCF (plain or .gz) and writes plain VCF on stdout (or -o FILE):
  * QUAL: missing ('.') on every 7th record, else a number 0-99 derived from the line;
  * FILTER: cycles through PASS, LowQual, '.', 'LowQual;LowDP' and PASS (declared in the
    header);
  * --full-missing: half-missing calls ('0/.', './1') become './.', as plink2 imports them,
    so plink2's counts and the store's agree;
  * --gq-dp: FORMAT GQ and DP for every call (0-59 and 0-29 from the record and sample
    numbers; missing on every 11th call);
  * --info: INFO fields for site expressions: DP (Integer, absent on every 5th record), XF
    (Float, Number=A, absent on every 6th, a missing element on every 9th), DB (Flag, every 3rd)
    and XS (String: foo, bar, or absent).
Example:
  qc_vcf.py r.vcf.gz --full-missing -o qc.vcf
"""

import argparse
import gzip
import re
import sys

FILTERS = ["PASS", "LowQual", ".", "LowQual;LowDP", "PASS"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vcf")
    ap.add_argument("-o", "--output")
    ap.add_argument("--full-missing", action="store_true")
    ap.add_argument("--gq-dp", action="store_true")
    ap.add_argument("--info", action="store_true")
    a = ap.parse_args()
    opener = gzip.open if a.vcf.endswith(".gz") else open
    out = open(a.output, "w") if a.output else sys.stdout
    half = re.compile(r"^(\.[/|][0-9]+|[0-9]+[/|]\.)$")
    n = 0
    with opener(a.vcf, "rt") as f:
        for line in f:
            if line.startswith("##"):
                out.write(line)
                continue
            if line.startswith("#"):
                out.write('##FILTER=<ID=LowQual,Description="Low quality">\n')
                out.write('##FILTER=<ID=LowDP,Description="Low depth">\n')
                if a.info:
                    out.write('##INFO=<ID=DP,Number=1,Type=Integer,Description="Depth">\n')
                    out.write('##INFO=<ID=XF,Number=A,Type=Float,Description="Per ALT">\n')
                    out.write('##INFO=<ID=DB,Number=0,Type=Flag,Description="Flag">\n')
                    out.write('##INFO=<ID=XS,Number=1,Type=String,Description="Text">\n')
                if a.gq_dp:
                    out.write('##FORMAT=<ID=GQ,Number=1,Type=Integer,Description="Quality">\n')
                    out.write('##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Depth">\n')
                out.write(line)
                continue
            cols = line.rstrip("\n").split("\t")
            n += 1
            cols[5] = "." if n % 7 == 0 else str((n * 37) % 100)
            cols[6] = FILTERS[n % len(FILTERS)]
            if a.info:
                info = []
                if n % 5:
                    info.append(f"DP={(n * 13) % 40}")
                if n % 6:
                    alts = cols[4].split(",")
                    xf = [str(((n * 7 + k * 3) % 10) / 10) for k in range(len(alts))]
                    if n % 9 == 0:
                        xf[-1] = "."
                    info.append("XF=" + ",".join(xf))
                if n % 3 == 0:
                    info.append("DB")
                if n % 4 < 2:
                    info.append("XS=" + ("foo" if n % 4 == 0 else "bar"))
                cols[7] = ";".join(info) if info else "."
            if a.full_missing:
                cols[9:] = ["./." if half.match(c) else c for c in cols[9:]]
            if a.gq_dp:
                cols[8] += ":GQ:DP"
                for s in range(9, len(cols)):
                    h = (n * 7919 + s * 104729) % 1000003
                    gq, dp = ("." if h % 11 == 0 else str(h % 60)), str((h // 60) % 30)
                    cols[s] += f":{gq}:{dp}"
            out.write("\t".join(cols) + "\n")
    out.close()


if __name__ == "__main__":
    main()
