"""``python -m vczstats plot KIND INPUT... -o OUT.png|svg``: plots from a store or from TSV
tables the CLI wrote. ``python -m vczstats COMMAND ...`` runs the CLI's other commands (as the
installed ``vczstats`` command does).

Kinds: ``sfs`` (1-D spectra; the joint spectrum of ``sfs --joint`` as a heatmap), ``windows``
(windowed statistics along the genome, one track per statistic; Fst-like ones as Manhattan
tracks; per-site tables such as ``hardy`` drawn at their sites), ``fst`` (Hudson Fst track),
``afdist``, ``pca``, ``ld`` (pairs, or the bins of ``ld --decay``), ``ihs``, ``nsl``,
``xpehh``, ``xpnsl`` (Manhattan plots of the standardised scores with ``--threshold`` lines),
``h12`` (Garud's H12 in windows), ``ehh`` (EHH decay around ``--focal`` sites), ``king`` (the
pairs of ``king --table``: kinship against IBS0), ``kinship`` (heatmap of the KING kinship
matrix, or of any square matrix file ``grm``/``king``/``distance --shape square -o F`` wrote
with its ``F.id``; ``matrix`` is the same), ``samples`` (a per-sample statistic of
``sample-stats``, ``--stats f`` by default, by population), ``fstats`` (estimates with
jackknife error bars). A directory or ``.zip`` INPUT is a store (the statistic is computed);
anything else is a TSV (``vczstats diversity ... -o d.tsv``; for pca the table of ``vczstats
pca -o`` (sample, pc1, pc2, ...) or plink2's ``.eigenvec``; for ld the table of ``vczstats ld
-o`` (bp_a, bp_b, r2), plink's (BP_A, BP_B, R2) or one of distance and r2). Images: .png, .svg,
.pdf, .jpg.

Examples::

    python -m vczstats plot windows store.vcz -P pops.tsv --window-size 100000 \\
        --stats pi_per_bp,tajima_d,hudson_fst -o scan.png
    vczstats diversity store.vcz -P pops.tsv --window-size 50000 -o d.tsv
    python -m vczstats plot windows d.tsv --stats pi_per_bp -o pi.svg
    python -m vczstats plot sfs store.vcz -P pops.tsv --folded -o sfs.png
    vczstats ihs phased.vcz -P pops.tsv -o ihs.tsv
    python -m vczstats plot ihs ihs.tsv --threshold 2.5 -o ihs.png
    python -m vczstats plot ehh phased.vcz -P pops.tsv --focal 20:1200125 -o ehh.pdf
    vczstats king store.vcz --table -o king.tsv
    python -m vczstats plot king king.tsv -o king.jpg
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Dict, List, Optional

DIVERSITY_DEFAULT = ["pi_per_bp", "tajima_d"]
KINDS = ("sfs", "windows", "fst", "afdist", "pca", "ld", "ld-stats", "ihs", "nsl", "xpehh", "xpnsl", "h12",
         "ehh", "king", "kinship", "matrix", "samples", "fstats")
IMAGE_TYPES = (".png", ".svg", ".pdf", ".jpg", ".jpeg")


def _is_store(path: str) -> bool:
    return os.path.isdir(path) or path.rstrip("/").endswith((".zip", ".vcz"))


def _read_tsv(path: str):
    """A tab-separated table: the CLI's (header first) or plink's ("#IID ..." header)."""
    from ._tables import read_table

    return read_table(path)


def _length(text: str) -> int:
    """A length in bp, as the CLI's --window-size: 100000, 100kb, 1.5Mb."""
    import re
    from fractions import Fraction

    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)(bp|k|kb|m|mb)?", text.strip().lower())
    if not m:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a length (give bp, e.g. 100000, or kb/Mb: 100kb, 1.5Mb)")
    scale = {None: 1, "bp": 1, "k": 1000, "kb": 1000, "m": 10**6, "mb": 10**6}[m.group(2)]
    v = Fraction(m.group(1)) * scale
    if v.denominator != 1 or v <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive whole number of bases")
    return int(v)


def _pops_file(path: Optional[str]) -> Optional[Dict[str, str]]:
    """sample -> population of a populations file, read as -P reads it, or None."""
    if not path:
        return None
    from . import _core
    return dict(_core.read_populations(os.fspath(path)))


def _selection(args) -> Dict[str, Any]:
    sel: Dict[str, Any] = {"device": args.device, "threads": args.threads,
                           "progress": False if args.no_progress else None}
    if args.regions:
        sel["regions"] = args.regions
    if args.samples:
        sel["samples"] = args.samples
    if args.pops:
        sel["sample_sets"] = args.pops
    return sel


def _windows(args):
    import vczstats

    if args.window_variants:
        return vczstats.windows_by_variant(args.window_variants)
    if args.window_size:
        return vczstats.windows_by_position(args.window_size, args.window_step,
                                            span=args.window_span)
    return None


def _window_panels(args, stats: List[str]):
    """(table, statistic) of every track: from TSVs, the first holding the statistic; from a
    store, diversity and/or divergence computed once."""
    import vczstats

    tables: List[Any] = []
    for path in args.input:
        if _is_store(path):
            store = vczstats.open(path)
            sel = dict(_selection(args), windows=_windows(args), ancestral=args.ancestral)
            d = vczstats.diversity(store, **sel)
            tables.append(d)
            others = [s for s in stats if s not in d.columns]
            if others and not args.pops:
                raise SystemExit(f"vczstats plot: {', '.join(others)}: not diversity columns "
                                 "(divergence ones need -P/--pops)")
            if others:
                tables.append(vczstats.divergence(store, **sel))
        else:
            tables.append(_read_tsv(path))
    panels = []
    for s in stats:
        for t in tables:
            columns = list(t.columns)
            if s in columns or ("statistic" in columns and s in set(map(str, t["statistic"]))):
                panels.append((t, s))
                break
        else:
            raise SystemExit(f"vczstats plot: no input has the statistic {s!r}")
    return panels


def _square_matrix(path: str):
    """A square text matrix (``--shape square``/``square0`` of grm, king, distance) and its
    samples from ``PATH.id``; square0's zero upper triangle is mirrored."""
    import numpy as np

    m = np.loadtxt(path, ndmin=2)
    if m.shape[0] != m.shape[1]:
        raise ValueError(f"{path}: not a square matrix ({m.shape[0]} x {m.shape[1]}; write it "
                         "with --shape square)")
    if np.allclose(np.triu(m, 1), 0):
        m = np.tril(m) + np.tril(m, -1).T
    samples = None
    if os.path.exists(path + ".id"):
        ids = _read_tsv(path + ".id")
        samples = [str(v) for v in ids[ids.columns[-1]]]
    return m, samples


def _scan_from_store(kind: str, store: Any, args) -> Any:
    import vczstats

    sel = dict(_selection(args), windows=_windows(args), ancestral=args.ancestral)
    if kind in ("xpehh", "xpnsl"):
        if not args.pops:
            raise ValueError(f"plot {kind}: a store needs -P/--pops (and --pairs A,B)")
        pairs = [tuple(p.split(",")) for p in args.pairs.split(";")] if args.pairs else None
        return getattr(vczstats, kind)(store, pairs=pairs, **sel)
    return getattr(vczstats, kind)(store, **sel)


def _plot(args) -> Any:
    from matplotlib.figure import Figure

    import vczstats
    from vczstats import plot

    size = (args.width, args.height) if args.width and args.height else None
    first = args.input[0]
    store = vczstats.open(first) if _is_store(first) else None
    if args.kind in ("windows", "fst"):
        if args.kind == "fst":
            stats = ["hudson_fst"]
        elif args.stats:
            stats = args.stats.split(",")
        else:
            stats = DIVERSITY_DEFAULT + (["hudson_fst"] if args.pops else [])
        fig = plot.tracks(_window_panels(args, stats), figsize=size, title=args.title)
        return fig
    fig = Figure(figsize=size or (7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    if args.kind == "sfs":
        data = vczstats.sfs(store, folded=args.folded, ancestral=args.ancestral,
                            **_selection(args)) if store else _read_tsv(first)
        plot.sfs(data, ax, log=args.log)
    elif args.kind == "afdist":
        sel = _selection(args)
        sel.pop("sample_sets", None)
        data = vczstats.afdist(store, bins=args.bins, **sel) if store else _read_tsv(first)
        plot.afdist(data, ax, log=args.log)
    elif args.kind == "pca":
        pops = _pops_file(args.pops)
        if store:  # the library's PCA, as `vczstats pca` computes it
            sel = _selection(args)
            sel.pop("sample_sets", None)
            if pops:
                sel["samples"] = list(pops)
            result = vczstats.pca(store, components=2, maf=args.maf, **sel)
            labels = [pops[str(n)] for n in result.samples] if pops else None
            plot.pca(result, labels, ax)
        else:
            table = _read_tsv(first)
            ids = next((c for c in ("IID", "sample", "iid") if c in table.columns), None)
            if pops and ids and "population" not in table.columns:
                table["population"] = [pops.get(str(s), "other") for s in table[ids]]
            plot.pca(table, None, ax)
    elif args.kind in ("ihs", "nsl", "xpehh", "xpnsl"):
        data = _scan_from_store(args.kind, store, args) if store else _read_tsv(first)
        plot.selection_scan(data, ax, threshold=args.threshold)
    elif args.kind == "h12":
        data = (vczstats.haplotypes(store, windows=_windows(args), **_selection(args)) if store
                else _read_tsv(first))
        plot.garud_h(data, ax)
    elif args.kind == "ehh":
        if store:
            if not args.focal:
                raise ValueError("plot ehh: a store needs --focal CHR:POS[,...]")
            data = vczstats.ehh(store, args.focal, window=args.max_distance,
                                ancestral=args.ancestral, **_selection(args))
        else:
            data = _read_tsv(first)
        plot.ehh(data, ax)
    elif args.kind == "king":
        sel = _selection(args)
        sel.pop("sample_sets", None)
        plot.king(vczstats.king(store, table=True, **sel) if store else _read_tsv(first), ax)
    elif args.kind == "samples":
        data = (vczstats.sample_stats(store, **_selection(args)) if store
                else _read_tsv(first))
        plot.sample_stats(data, args.stats or "f", ax)
    elif args.kind == "fstats":
        if store:
            raise ValueError("plot fstats: give the table of `vczstats fstats` (a store needs "
                             "the statistics: --f2/--f3/--d)")
        plot.fstats(_read_tsv(first), ax)
    elif args.kind in ("kinship", "matrix"):
        pops = _pops_file(args.pops)
        if store:
            sel = _selection(args)
            sel.pop("sample_sets", None)
            if pops:
                sel["samples"] = list(pops)
            m = vczstats.king(store, **sel)
            values, samples, name = m.values, [str(s) for s in m.samples], "KING kinship"
        else:
            (values, samples), name = _square_matrix(first), None
        labels = [pops.get(s, "other") for s in samples] if pops and samples else None
        plot.matrix(values, ax, samples=samples, populations=labels, label=name)
    elif args.kind == "ld-stats":
        if store:
            raise SystemExit("plot ld-stats: give the table `vczstats ld-stats` wrote")
        plot.ld_stats(_read_tsv(first), ax)
    elif args.kind == "ld":
        if store:  # the library's r2, as `vczstats ld` computes it
            sel = _selection(args)
            sel.pop("sample_sets", None)
            pairs = vczstats.ld(store, window_variants=args.ld_window,
                                window_bp=args.max_distance, min_r2=0.0, **sel)
            plot.ld_decay(pairs, None, ax, max_distance=args.max_distance)
        else:
            table = _read_tsv(first)
            limit = None if "sum_r2" in table.columns else args.max_distance  # ld --decay: all
            plot.ld_decay(table, None, ax, max_distance=limit)
    if args.title:
        ax.set_title(args.title)
    return fig


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] not in ("plot", "-h", "--help"):  # a CLI command: the binary runs it
        from ._cli import main as cli_main

        return cli_main(args)
    p = argparse.ArgumentParser(prog="python -m vczstats",
                                description="vczstats from Python: plots.")
    sub = p.add_subparsers(dest="command", required=True)
    pl = sub.add_parser("plot", help="plot from a store or a TSV the CLI wrote",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pl.add_argument("kind", choices=KINDS)
    pl.add_argument("input", nargs="+", help="a store (directory or .zip) or TSV files")
    pl.add_argument("-o", "--output", required=True, help="image file: .png, .svg, .pdf or .jpg")
    pl.add_argument("-P", "--pops", help="populations file: sample, population")
    pl.add_argument("-r", "--regions", help="regions chr:beg-end,...")
    pl.add_argument("-s", "--samples", help="samples a,b,...")
    pl.add_argument("--stats", help="windows: statistics to draw, comma-separated "
                                    "(default pi_per_bp,tajima_d and hudson_fst with -P); "
                                    "samples: the column drawn (default f)")
    pl.add_argument("--window-size", type=_length, help="bp, or with kb/Mb: 100kb, 1.5Mb")
    pl.add_argument("--window-step", type=_length)
    pl.add_argument("--window-span", choices=("data", "contig"), default="data",
                    help="windows from the first to the last site (data) or over the contig")
    pl.add_argument("--window-variants", type=int)
    pl.add_argument("--ancestral", default="ref")
    pl.add_argument("--folded", action="store_true", help="sfs: the folded spectrum")
    pl.add_argument("--bins", type=int, default=10, help="afdist: bins")
    pl.add_argument("--log", action="store_true", help="log-scale counts")
    pl.add_argument("--maf", type=float, default=0.0,
                    help="pca from a store: variants with this minor allele frequency or more")
    pl.add_argument("--ld-window", type=int, default=50,
                    help="ld from a store: pairs at most this many variants minus one apart")
    pl.add_argument("--max-distance", type=int, default=100_000, help="ld: largest distance")
    pl.add_argument("--threshold", type=float, default=2.0,
                    help="ihs, nsl, xpehh, xpnsl: the |standardised score| marked (default 2)")
    pl.add_argument("--pairs", help="xpehh, xpnsl from a store: pairs A,B[;C,D]")
    pl.add_argument("--focal", help="ehh from a store: focal sites CHR:POS[,...] (the EHH is "
                                    "drawn --max-distance bp either side)")
    pl.add_argument("--title")
    pl.add_argument("--width", type=float)
    pl.add_argument("--height", type=float)
    pl.add_argument("--dpi", type=float, default=150)
    pl.add_argument("--device", default="auto")
    pl.add_argument("-t", "--threads", type=int)
    pl.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    from vczstats import Error

    ext = os.path.splitext(args.output)[1].lower()
    if ext not in IMAGE_TYPES:
        p.error("-o: the image's name must end in .png, .svg, .pdf or .jpg")
    try:
        fig = _plot(args)
        tmp = f"{args.output}.tmp{os.getpid()}{ext}"
        try:
            fig.savefig(tmp, dpi=args.dpi)
            os.replace(tmp, args.output)  # nothing half-written at the output
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    except (Error, ValueError, OSError) as e:
        print(f"vczstats plot: {e}", file=sys.stderr)
        return 2 if isinstance(e, ValueError) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
