#!/usr/bin/python3
"""Compare two TSV tables row by row, matched on key columns.

  compare_tsv.py A.tsv B.tsv --keys chrom,pos,population [--columns a,b,...] [--rel 1e-9]
                 [--abs 1e-12] [--map a=b,...]

Lines starting with '#' are comments. Columns are compared by name (--map renames A's columns
to B's); numbers within rel·max(|a|,|b|) + abs, 'NA' and 'nan' both undefined, other text
exactly. Both tables must have the same keys. Prints a summary; exits 1 on any difference.
"""

import argparse
import math
import sys


def read(path):
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f if not l.startswith("#") and l.strip()]
    header = lines[0].split("\t")
    return header, [dict(zip(header, l.split("\t"))) for l in lines[1:]]


def number(text):
    if text in ("NA", "nan", "NaN", "-nan"):
        return math.nan
    try:
        return float(text)
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--keys", required=True)
    ap.add_argument("--columns")
    ap.add_argument("--map", default="")
    ap.add_argument("--rel", type=float, default=1e-9)
    ap.add_argument("--abs", type=float, default=1e-12)
    args = ap.parse_args()
    rename = dict(kv.split("=") for kv in args.map.split(",") if kv)
    ha, ra = read(args.a)
    hb, rb = read(args.b)
    ra = [{rename.get(k, k): v for k, v in r.items()} for r in ra]
    ha = [rename.get(k, k) for k in ha]
    keys = args.keys.split(",")
    columns = args.columns.split(",") if args.columns else [c for c in hb if c in ha and c not in keys]
    index_b = {tuple(r[k] for k in keys): r for r in rb}
    index_a = {tuple(r[k] for k in keys): r for r in ra}
    bad = 0
    if set(index_a) != set(index_b):
        only_a = sorted(set(index_a) - set(index_b))[:5]
        only_b = sorted(set(index_b) - set(index_a))[:5]
        print(f"keys differ: {len(index_a)} vs {len(index_b)} rows; only in A: {only_a}; only in B: {only_b}")
        bad += 1
    worst = 0.0
    for key, x in index_a.items():
        y = index_b.get(key)
        if y is None:
            continue
        for c in columns:
            u, v = x[c], y[c]
            p, q = number(u), number(v)
            if p is None or q is None:
                if u != v:
                    print(f"{key} {c}: {u} vs {v}")
                    bad += 1
                continue
            if math.isnan(p) or math.isnan(q):
                if not (math.isnan(p) and math.isnan(q)):
                    print(f"{key} {c}: {u} vs {v}")
                    bad += 1
                continue
            d = abs(p - q)
            if d > args.rel * max(abs(p), abs(q)) + args.abs:
                if bad < 20:
                    print(f"{key} {c}: {u} vs {v}")
                bad += 1
            elif max(abs(p), abs(q)) > 0:
                worst = max(worst, d / max(abs(p), abs(q)))
    print(f"{len(index_a)} rows, {len(columns)} columns compared, {bad} differences, max rel diff {worst:.3g}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
