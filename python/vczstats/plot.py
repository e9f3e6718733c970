"""Plots of vczstats results (matplotlib).

Every function takes a :class:`~vczstats.Result` or a pandas DataFrame with the CLI's columns
(e.g. a TSV the CLI wrote, read with :func:`vczstats.read_table` or ``pandas.read_csv(path,
sep="\\t")``; the former keeps a population named ``NA`` as a label), draws
on ``ax`` when given, and returns the matplotlib Axes (or Figure). Without pyplot imported the
figures are plain :class:`matplotlib.figure.Figure` objects, so rendering needs no display;
save them with ``ax.figure.savefig("x.png")``.

>>> import vczstats, vczstats.plot
>>> store = vczstats.open("1kg_chr20.vcz")                                     # doctest: +SKIP
>>> d = store.diversity(sample_sets=pops, windows=100_000)                     # doctest: +SKIP
>>> f = store.divergence(sample_sets=pops, windows=100_000)                    # doctest: +SKIP
>>> panels = [(d, "pi_per_bp"), (d, "tajima_d"), (f, "hudson_fst")]       # doctest: +SKIP
>>> fig = vczstats.plot.tracks(panels)                                         # doctest: +SKIP
>>> fig.savefig("scan.png")                                                    # doctest: +SKIP
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, List, Optional, Sequence, Tuple

import numpy as np

#: Most pairs drawn as points by ld_decay (the mean uses them all).
MAX_POINTS = 20_000
#: Columns drawn as a Manhattan-style track by default.
FST_COLUMNS = ("hudson_fst", "wc_fst", "wc_fst_mean", "nei_gst", "fst_hudson", "fst_wc", "gst",
               "pbs")


def _frame(data: Any):
    """A DataFrame from a Result or a DataFrame."""
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    if hasattr(data, "to_pandas"):
        return data.to_pandas()
    raise TypeError(f"expected a vczstats.Result or a pandas DataFrame, not {type(data).__name__}")


def _axes(ax: Any = None, figsize: Tuple[float, float] = (8, 4)):
    if ax is not None:
        return ax
    if "matplotlib.pyplot" in sys.modules:  # notebooks and scripts using pyplot: show it there
        import matplotlib.pyplot as plt

        return plt.subplots(figsize=figsize)[1]
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained").add_subplot()


def _colors(n: int) -> List[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


# ---- site frequency spectrum --------------------------------------------------------------------
def sfs(data: Any, ax: Any = None, *, monomorphic: bool = False, normalize: bool = False,
        log: bool = False):
    """Bars of the site frequency spectrum, one series per population (and sample size n).

    ``data``: a :func:`vczstats.sfs` result (not a joint one) or its TSV. Classes 0 and n
    (monomorphic) are left out unless ``monomorphic``; ``normalize`` divides by the sites of
    each spectrum.
    """
    df = _frame(data)
    if "pop1" in df.columns:  # sfs --joint
        return joint_sfs(df, ax, log=True)
    axis = "folded" if "folded" in df.columns else "derived"
    ax = _axes(ax)
    groups = list(df.groupby(["population", "n"], sort=False, observed=True))
    colors = _colors(len(groups))
    # Bars side by side while they stay readable; steps for large samples.
    bars = df[axis].max() <= 40 if len(df) else True
    width = 0.8 / max(len(groups), 1)
    for g, ((pop, n), sub) in enumerate(groups):
        k = sub[axis].to_numpy()
        count = sub["count"].to_numpy().astype(float)
        keep = np.ones(len(k), dtype=bool)
        if not monomorphic:  # classes 0 and n (unfolded), 0 (folded)
            keep = (k > 0) & ((k < n) | (axis == "folded"))
        if normalize and count[keep].sum() > 0:
            count = count / count[keep].sum()
        label = f"{pop} (n={n})" if len(groups) > 1 else str(pop)
        if bars:
            ax.bar(k[keep] + (g - (len(groups) - 1) / 2) * width, count[keep], width=width,
                   color=colors[g], label=label)
        else:
            ax.step(k[keep], count[keep], where="mid", color=colors[g], label=label, lw=1)
    if not bars:
        ax.set_xscale("log")
        log = True
    ax.set_xlabel("minor allele count" if axis == "folded" else "derived allele count")
    ax.set_ylabel("proportion of sites" if normalize else "sites")
    if log:
        ax.set_yscale("log")
    if len(groups) > 1:
        ax.legend(frameon=False)
    ax.set_title("folded site frequency spectrum" if axis == "folded" else
                 "site frequency spectrum")
    return ax


# ---- windows along the genome -------------------------------------------------------------------
def _chrom(df) -> np.ndarray:
    """The contig of each row: the CLI's ``chrom``, or ``contig`` of the Python site tables."""
    return df["chrom" if "chrom" in df.columns else "contig"].astype(str).to_numpy()


def _genome_x(df) -> Tuple[np.ndarray, List[Tuple[float, str]], str]:
    """x of each window's midpoint: Mb on one contig, else contigs laid end to end."""
    chrom = _chrom(df)
    if "start" in df.columns:
        mid = (df["start"].to_numpy(dtype=float) + df["end"].to_numpy(dtype=float)) / 2
        ends = df["end"].to_numpy()
    else:  # a per-site table (ihs, hardy, ...): the sites' positions
        mid = df["pos"].to_numpy(dtype=float)
        ends = df["pos"].to_numpy()
    contigs = list(dict.fromkeys(chrom))
    if len(contigs) == 1:
        return mid / 1e6, [], f"position on {contigs[0]} (Mb)"
    x = np.empty(len(mid))
    ticks, offset = [], 0.0
    for c in contigs:
        sel = chrom == c
        x[sel] = (mid[sel] + offset) / 1e6
        span = float(ends[sel].max())
        ticks.append(((offset + span / 2) / 1e6, c))
        offset += span
    return x, ticks, "contig"


def _series(df, stat: str) -> Iterable[Tuple[str, Any]]:
    """(label, rows) of each population or pair of a windowed table, for one statistic."""
    if "statistic" in df.columns:  # the scan's long format
        sub = df[df["statistic"].astype(str) == stat]
        for pops, rows in sub.groupby("populations", sort=False, observed=True):
            yield str(pops), rows.rename(columns={"value": stat})
    elif "pop1" in df.columns:
        for (a, b), rows in df.groupby(["pop1", "pop2"], sort=False, observed=True):
            yield f"{a} vs {b}", rows
    elif "population" in df.columns:
        for pop, rows in df.groupby("population", sort=False, observed=True):
            yield str(pop), rows
    else:
        yield "", df


def windows(data: Any, stat: str, ax: Any = None, *, style: Optional[str] = None):
    """One windowed statistic along the genome: a line per population (or pair), or, for
    Fst-like statistics (``style="manhattan"``, the default for them), a Manhattan-style track
    of points coloured by contig (by pair when there are several).

    ``data``: a diversity, divergence, window_stats or haplotypes result, or the TSV of one
    (a per-site table with ``pos`` instead of ``start``/``end`` is drawn at the sites).
    """
    df = _frame(data)
    if "statistic" not in df.columns and stat not in df.columns:
        raise ValueError(f"{stat!r} is not a column of this table ({', '.join(df.columns)})")
    if not ({"chrom", "contig"} & set(df.columns)) or not ({"start", "pos"} & set(df.columns)):
        raise ValueError(f"windows: the table has no genome coordinates (chrom and start/end or "
                         f"pos); columns {', '.join(df.columns)}")
    style = style or ("manhattan" if stat in FST_COLUMNS else "line")
    ax = _axes(ax, (10, 3))
    series = list(_series(df, stat))
    if not series:
        raise ValueError(f"no rows of statistic {stat!r}")
    colors = _colors(max(len(series), 2))
    ticks: List[Tuple[float, str]] = []
    xlabel = ""
    for i, (label, rows) in enumerate(series):
        x, ticks, xlabel = _genome_x(rows)
        y = rows[stat].to_numpy(dtype=float)
        if style == "manhattan":
            if len(series) == 1:
                chrom = _chrom(rows)
                order = {c: k for k, c in enumerate(dict.fromkeys(chrom))}
                c = np.array([order[v] % 2 for v in chrom])
                ax.scatter(x, y, s=8, c=np.where(c[:, None] == 0, [colors[0]], [colors[1]]),
                           linewidths=0)
            else:
                ax.scatter(x, y, s=8, color=colors[i], label=label, linewidths=0)
        else:
            ax.plot(x, y, lw=1, color=colors[i], label=label)
    if ticks:
        ax.set_xticks([t for t, _ in ticks], [c for _, c in ticks])
    ax.set_xlabel(xlabel)
    single = len(series) == 1 and series[0][0] and style == "manhattan"
    ax.set_ylabel(f"{stat}\n{series[0][0]}" if single else stat)  # the one pair it shows
    if len(series) > 1 or (series and series[0][0] and style == "line"):
        ax.legend(frameon=False, fontsize="small", ncol=min(len(series), 4))
    return ax


def tracks(panels: Sequence[Tuple[Any, str]], *, figsize: Optional[Tuple[float, float]] = None,
           title: Optional[str] = None):
    """Several windowed statistics stacked along a shared genome axis: ``panels`` is a list of
    ``(result_or_frame, stat)``; Fst-like statistics are drawn as Manhattan tracks. Returns
    the Figure."""
    from matplotlib.figure import Figure

    n = len(panels)
    if n == 0:
        raise ValueError("tracks: no panel")
    fig = Figure(figsize=figsize or (10, 2.2 * n + 0.6), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for ax, (data, stat) in zip(axes, panels):
        windows(data, stat, ax)
    for ax in axes[:-1]:
        ax.set_xlabel("")
    if title:
        fig.suptitle(title)
    return fig


# ---- afdist -------------------------------------------------------------------------------------
def afdist(data: Any, ax: Any = None, *, log: bool = False):
    """Bars of an afdist result: genotypes per bin of genotype probability (2pq for het calls,
    q^2 for hom-alt calls)."""
    df = _frame(data)
    ax = _axes(ax, (6, 4))
    start, stop = df["start"].to_numpy(float), df["stop"].to_numpy(float)
    ax.bar(start, df["prob_dist"].to_numpy(float), width=stop - start, align="edge",
           color=_colors(1)[0], edgecolor="white")
    ax.set_xlabel("genotype probability given the allele frequency")
    ax.set_ylabel("genotypes")
    if log:
        ax.set_yscale("log")
    ax.set_title("afdist")
    return ax


# ---- PCA ----------------------------------------------------------------------------------------
def pca(coords: Any, populations: Optional[Sequence[str]] = None, ax: Any = None, *,
        pcs: Tuple[int, int] = (1, 2), explained: Optional[Sequence[float]] = None):
    """Scatter of two principal components coloured by population.

    ``coords``: a :class:`~vczstats.PcaResult` (:func:`vczstats.pca`), an array (samples ×
    components), or a DataFrame with columns ``pc1``, ``pc2``, ... (the CLI's ``vczstats pca``
    table) or ``PC1``, ``PC2``, ... (plink2's ``.eigenvec``) and optionally ``population``.
    ``explained``: variance fractions of the components, for the axis labels.
    """
    import pandas as pd

    a, b = pcs
    if hasattr(coords, "projection") and hasattr(coords, "eigenvalues"):  # a PcaResult
        coords = coords.projection
    if isinstance(coords, pd.DataFrame):
        if populations is None and "population" in coords.columns:
            populations = coords["population"].astype(str).to_numpy()
        by_name = {str(c).lower(): c for c in coords.columns}
        missing = [f"PC{k}" for k in (a, b) if f"pc{k}" not in by_name]
        if missing:
            raise ValueError(f"pca: the table has no column {missing[0]} (or "
                             f"{missing[0].lower()}): columns "
                             f"{', '.join(map(str, coords.columns))}")
        xy = coords[[by_name[f"pc{a}"], by_name[f"pc{b}"]]].to_numpy(float)
    else:
        m = np.asarray(coords, dtype=float)
        xy = m[:, [a - 1, b - 1]]
    ax = _axes(ax, (6, 5))
    if populations is None:
        ax.scatter(xy[:, 0], xy[:, 1], s=12, color=_colors(1)[0], linewidths=0)
    else:
        pops = np.asarray(populations, dtype=object)
        names = list(dict.fromkeys(pops))
        for color, name in zip(_colors(len(names)), names):
            sel = pops == name
            ax.scatter(xy[sel, 0], xy[sel, 1], s=12, color=color, label=str(name), linewidths=0)
        ax.legend(frameon=False, fontsize="small", markerscale=1.5)

    def label(k: int) -> str:
        if explained is not None and len(explained) >= k:
            return f"PC{k} ({100 * explained[k - 1]:.1f}%)"
        return f"PC{k}"

    ax.set_xlabel(label(a))
    ax.set_ylabel(label(b))
    return ax


# ---- LD decay -----------------------------------------------------------------------------------
def ld_decay(distance: Any, r2: Optional[Any] = None, ax: Any = None, *, bins: int = 30,
             max_distance: Optional[float] = None, points: bool = True):
    """r² against the distance between sites: the pairs as faint points and their mean per
    distance bin as a line.

    ``distance``/``r2``: arrays, a :func:`vczstats.ld` result, or one DataFrame with columns
    ``distance`` and ``r2``, or the pairs' positions and r² (the CLI's ``vczstats ld`` table:
    ``bp_a``, ``bp_b``, ``r2``; plink's: ``BP_A``, ``BP_B``, ``R2``), or the bins of
    ``vczstats ld --decay`` (``bin_start``, ``bin_end``, ``pairs``, ``sum_r2``; ``pop``
    optional): then the mean r² of each bin, one line per population, windows and contigs
    pooled (their pairs and sums added).
    """
    import pandas as pd

    if hasattr(distance, "to_pandas") and not isinstance(distance, pd.DataFrame):
        distance = distance.to_pandas()  # a vczstats Result
    if isinstance(distance, pd.DataFrame) and "sum_r2" in distance.columns:
        return _ld_decay_bins(distance, ax, max_distance)
    if isinstance(distance, pd.DataFrame):
        df = distance
        by_name = {str(c).lower(): c for c in df.columns}
        if "r2" not in by_name or not ("distance" in by_name or
                                       ("bp_a" in by_name and "bp_b" in by_name)):
            raise ValueError("ld_decay: the table needs r2 and distance, or bp_a and bp_b "
                             f"(columns {', '.join(map(str, df.columns))})")
        if "distance" in by_name:
            d = df[by_name["distance"]].to_numpy(float)
        else:
            d = (df[by_name["bp_b"]].astype(float) - df[by_name["bp_a"]].astype(float)).abs()
            d = d.to_numpy(float)
        r = df[by_name["r2"]].to_numpy(float)
    else:
        d, r = np.asarray(distance, float), np.asarray(r2, float)
    keep = np.isfinite(d) & np.isfinite(r)
    if max_distance is not None:
        keep &= d <= max_distance
    d, r = d[keep], r[keep]
    ax = _axes(ax, (6, 4))
    if points and len(d):
        show = np.arange(len(d))
        if len(d) > MAX_POINTS:  # a fixed sample keeps files small (SVG above all)
            show = np.random.default_rng(0).choice(len(d), MAX_POINTS, replace=False)
        ax.scatter(d[show] / 1e3, r[show], s=2, alpha=0.2, color="0.5", linewidths=0)
    if len(d):
        edges = np.linspace(0, d.max(), bins + 1)
        which = np.clip(np.digitize(d, edges) - 1, 0, bins - 1)
        sums = np.bincount(which, weights=r, minlength=bins)
        counts = np.bincount(which, minlength=bins)
        with np.errstate(invalid="ignore"):
            mean = sums / counts
        mid = (edges[:-1] + edges[1:]) / 2
        ok = counts > 0
        ax.plot(mid[ok] / 1e3, mean[ok], color=_colors(1)[0], lw=2, label="mean r²")
        ax.legend(frameon=False)
    return _ld_decay_labels(ax, "r²")


def _ld_decay_labels(ax, ylabel: str):
    """The axes of an LD decay plot."""
    ax.set_xlabel("distance (kb)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    ax.set_title("LD decay")
    return ax


def _ld_decay_bins(df, ax, max_distance):
    """ld_decay of ``ld --decay``'s bins (see ld_decay)."""
    if max_distance is not None:
        df = df[df["bin_end"] <= max_distance]
    ax = _axes(ax, (6, 4))
    groups = list(df.groupby("pop", sort=False)) if "pop" in df.columns else [(None, df)]
    colors = _colors(len(groups))
    for (name, g), color in zip(groups, colors):
        b = g.groupby(["bin_start", "bin_end"], sort=True)[["pairs", "sum_r2"]].sum().reset_index()
        b = b[b["pairs"] > 0]
        mid = (b["bin_start"].to_numpy(float) + b["bin_end"].to_numpy(float)) / 2
        mean = b["sum_r2"].to_numpy(float) / b["pairs"].to_numpy(float)
        label = "mean r²" if name is None else str(name)
        ax.plot(mid / 1e3, mean, color=color, lw=2, marker=".", label=label)
    if groups:
        ax.legend(frameon=False)
    return _ld_decay_labels(ax, "mean r²")

# ---- moments.LD statistics -------------------------------------------------------------------
def ld_stats(data: Any, ax: Any = None):
    """sigma_D^2 = DD / pi2 of each population per distance bin (the decay curve moments.LD
    fits), from :func:`vczstats.ld_stats`'s dictionary or the ``vczstats ld-stats`` table: one
    line per population, at the bins' middles."""
    import pandas as pd

    if isinstance(data, dict):
        names = list(data["stats"][0])
        lo = np.array([b[0] for b in data["bins"]], dtype=float)
        hi = np.array([b[1] for b in data["bins"]], dtype=float)
        sums = np.array(data["sums"][:len(data["bins"])], dtype=float).reshape(len(lo), -1)
        cols = {n: sums[:, i] for i, n in enumerate(names)}
        pops = [str(p) for p in data.get("pops", [])]
    else:
        df = _frame(data)
        if not isinstance(df, pd.DataFrame) or "bin_start" not in df.columns:
            raise ValueError("ld_stats: needs vczstats.ld_stats's result or the ld-stats table "
                             "(bin_start, bin_end, DD_*, pi2_*)")
        lo, hi = df["bin_start"].to_numpy(float), df["bin_end"].to_numpy(float)
        cols = {c: df[c].to_numpy(float) for c in df.columns
                if c.startswith("DD_") or c.startswith("pi2_")}
        pops = []
    k = 0
    while f"DD_{k}_{k}" in cols and f"pi2_{k}_{k}_{k}_{k}" in cols:
        k += 1
    if k == 0:
        raise ValueError("ld_stats: no DD_i_i and pi2_i_i_i_i columns")
    ax = _axes(ax, (6, 4))
    mid = (lo + hi) / 2
    scale, unit = (1e3, "kb") if hi.max() > 10 else (1.0, "r")
    for i, color in zip(range(k), _colors(k)):
        dd, pi2 = cols[f"DD_{i}_{i}"], cols[f"pi2_{i}_{i}_{i}_{i}"]
        ok = pi2 > 0
        label = pops[i] if i < len(pops) else f"population {i}"
        ax.plot(mid[ok] / scale, dd[ok] / pi2[ok], color=color, lw=2, marker=".", label=label)
    ax.set_xlabel(f"distance ({unit})")
    ax.set_ylabel("σ_D² = DD / π₂")
    ax.set_title("moments.LD statistics")
    ax.legend(frameon=False)
    return ax


# ---- joint site frequency spectrum ----------------------------------------------------------------
def joint_sfs(data: Any, ax: Any = None, *, log: bool = True, monomorphic: bool = False):
    """Heatmap of a joint (2-D) site frequency spectrum: derived allele count in the first
    population across, in the second up; sites per cell as colour (log scale by default).

    ``data``: a ``vczstats.sfs(..., joint=("A", "B"))`` result or the TSV of ``vczstats sfs
    --joint A,B`` (columns pop1, pop2, n1, n2, derived1, derived2, count). The two monomorphic
    corners are left blank unless ``monomorphic``.
    """
    from matplotlib.colors import LogNorm

    df = _frame(data)
    need = ("pop1", "pop2", "n1", "n2", "derived1", "derived2", "count")
    if any(c not in df.columns for c in need):
        raise ValueError("joint_sfs: the table needs the columns of `sfs --joint` "
                         f"({', '.join(need)}); it has {', '.join(map(str, df.columns))}")
    if "derived3" in df.columns:
        raise ValueError("joint_sfs: a spectrum of more than two populations (draw two)")
    n1, n2 = int(df["n1"].max()), int(df["n2"].max())
    grid = np.full((n2 + 1, n1 + 1), np.nan)
    grid[df["derived2"].to_numpy(int), df["derived1"].to_numpy(int)] = df["count"].to_numpy(float)
    if not monomorphic:
        grid[0, 0] = grid[n2, n1] = np.nan
    shown = np.where(grid > 0, grid, np.nan) if log else grid
    ax = _axes(ax, (6, 5))
    finite = shown[np.isfinite(shown)]
    norm = LogNorm(vmin=finite.min(), vmax=finite.max()) if log and finite.size else None
    image = ax.imshow(shown, origin="lower", cmap="viridis", norm=norm, aspect="auto",
                      interpolation="nearest")
    ax.figure.colorbar(image, ax=ax, label="sites")
    ax.set_xlabel(f"derived allele count in {df['pop1'].iloc[0]} (of {n1})")
    ax.set_ylabel(f"derived allele count in {df['pop2'].iloc[0]} (of {n2})")
    ax.set_title("joint site frequency spectrum")
    return ax


# ---- selection scans: iHS, nSL, XP-EHH, XP-nSL ------------------------------------------------
#: The statistics of the per-site selection scans and how their axes name them.
SCAN_NAMES = {"ihs": "iHS", "nsl": "nSL", "xpehh": "XP-EHH", "xpnsl": "XP-nSL"}


def _scan_statistic(df) -> str:
    for stat in SCAN_NAMES:
        if f"{stat}_std" in df.columns:
            return stat
    raise ValueError("selection_scan: not the table of an ihs, nsl, xpehh or xpnsl scan (no "
                     f"column ihs_std, nsl_std, xpehh_std or xpnsl_std): columns "
                     f"{', '.join(map(str, df.columns))}")


def selection_scan(data: Any, ax: Any = None, *, threshold: Optional[float] = 2.0,
                   absolute: Optional[bool] = None, standardized: bool = True):
    """Manhattan plot of an iHS, nSL, XP-EHH or XP-nSL scan: the standardised score of every
    site along the genome, one series per population (or pair), with dashed lines at the
    threshold.

    ``data``: a :func:`vczstats.ihs`, :func:`~vczstats.nsl`, :func:`~vczstats.xpehh` or
    :func:`~vczstats.xpnsl` result, or the TSV of the CLI command. ``absolute``: draw
    the absolute score (the default for iHS and nSL, whose sign only says which allele is on the longer
    haplotypes; XP-EHH keeps its sign: positive is selection in the first population).
    ``standardized=False`` draws the unstandardised score.
    """
    df = _frame(data)
    stat = _scan_statistic(df)
    column = f"{stat}_std" if standardized else stat
    if absolute is None:
        absolute = stat in ("ihs", "nsl")
    name = SCAN_NAMES[stat]
    ax = _axes(ax, (10, 3.5))
    series = list(_series(df, column))
    colors = _colors(max(len(series), 2))
    xlabel = ""
    ticks: List[Tuple[float, str]] = []
    for i, (label, rows) in enumerate(series):
        y = rows[column].to_numpy(dtype=float)
        keep = np.isfinite(y)
        x, ticks, xlabel = _genome_x(rows)
        y = np.abs(y) if absolute else y
        ax.scatter(x[keep], y[keep], s=4, color=colors[i], label=label or name, linewidths=0,
                   rasterized=bool(keep.sum() > MAX_POINTS))
    if threshold is not None:
        ax.axhline(threshold, color="0.3", lw=0.8, ls="--")
        if not absolute:
            ax.axhline(-threshold, color="0.3", lw=0.8, ls="--")
    if ticks:
        ax.set_xticks([t for t, _ in ticks], [c for _, c in ticks])
    ax.set_xlabel(xlabel)
    kind = "standardised" if standardized else "unstandardised"
    ax.set_ylabel(f"|{kind} {name}|" if absolute else f"{kind} {name}")
    ax.set_title(f"{name} scan")
    if len(series) > 1 or (series and series[0][0]):
        ax.legend(frameon=False, fontsize="small", markerscale=3, ncol=min(len(series), 4))
    return ax


# ---- Garud's H ------------------------------------------------------------------------------------
def garud_h(data: Any, ax: Any = None, *, stat: str = "h12"):
    """Garud's H12 (or ``stat="h1"``, ``"h123"``, ``"h2_h1"``) in windows along the genome, a
    line per population: a :func:`vczstats.haplotypes` result or the TSV of ``vczstats
    haplotypes``."""
    ax = windows(data, stat, ax, style="line")
    ax.set_ylabel({"h12": "Garud's H12", "h1": "Garud's H1", "h123": "Garud's H123",
                   "h2_h1": "Garud's H2/H1"}.get(stat, stat))
    ax.set_title("haplotype homozygosity scan")
    return ax


# ---- EHH decay ------------------------------------------------------------------------------------
def ehh(data: Any, ax: Any = None, *, genetic: bool = False):
    """EHH decay around focal sites: the EHH of the derived (solid) and of the ancestral
    (dashed) carriers against the distance from the focal site, one colour per focal site and
    population.

    ``data``: a :func:`vczstats.ehh` result or the TSV of ``vczstats ehh``. ``genetic``: the
    distance in cM (``gdistance``, with ``--map``) instead of kb.
    """
    df = _frame(data)
    need = ("focal_pos", "population", "distance", "ehh_derived", "ehh_ancestral")
    if any(c not in df.columns for c in need):
        raise ValueError("ehh: the table needs the columns of `vczstats ehh` "
                         f"({', '.join(need)}); it has {', '.join(map(str, df.columns))}")
    keys = ["chrom", "focal_pos", "population"] if "chrom" in df.columns else need[:2]
    groups = list(df.groupby(keys, sort=False, observed=True))
    ax = _axes(ax, (7, 4))
    colors = _colors(len(groups))
    for color, (key, rows) in zip(colors, groups):
        rows = rows.sort_values("distance")
        x = rows["gdistance"].to_numpy(float) if genetic else rows["distance"].to_numpy(float) / 1e3
        where = f"{key[0]}:{key[1]}" if len(key) == 3 else str(key[0])
        label = f"{where} {key[-1]}" if len(groups) > 1 else ""
        ax.plot(x, rows["ehh_derived"].to_numpy(float), color=color, lw=1.5,
                label=f"{label} derived".strip())
        ax.plot(x, rows["ehh_ancestral"].to_numpy(float), color=color, lw=1.5, ls="--",
                label=f"{label} ancestral".strip())
    ax.axvline(0, color="0.6", lw=0.8)
    ax.set_xlabel("distance from the focal site (cM)" if genetic else
                  "distance from the focal site (kb)")
    ax.set_ylabel("extended haplotype homozygosity")
    ax.set_ylim(0, 1.02)
    ax.set_title("EHH decay")
    ax.legend(frameon=False, fontsize="small")
    return ax


# ---- kinship: the KING table and sample matrices ----------------------------------------------------
#: KING's kinship thresholds between degrees of relationship (Manichaikul et al. 2010).
KING_THRESHOLDS = ((0.354, "duplicate/MZ"), (0.177, "1st degree"), (0.0884, "2nd degree"),
                   (0.0442, "3rd degree"))


def king(data: Any, ax: Any = None, *, thresholds: bool = True):
    """The pairs of a KING table: kinship against the proportion of IBS0 sites (plink2's
    ``.kin0``; relatives sit top left), with KING's degree thresholds as dashed lines.

    ``data``: a ``vczstats.king(store, table=True)`` result, the TSV of ``vczstats king
    --table`` or plink2's ``.kin0`` (``KINSHIP``, ``IBS0``).
    """
    df = _frame(data)
    by_name = {str(c).lower(): c for c in df.columns}
    if "kinship" not in by_name or "ibs0" not in by_name:
        raise ValueError("king: the table needs kinship and ibs0 (vczstats king --table); "
                         f"columns {', '.join(map(str, df.columns))}")
    x = df[by_name["ibs0"]].to_numpy(float)
    y = df[by_name["kinship"]].to_numpy(float)
    ax = _axes(ax, (6, 4.5))
    ax.scatter(x, y, s=6, color=_colors(1)[0], linewidths=0, alpha=0.6,
               rasterized=bool(len(x) > MAX_POINTS))
    if thresholds:
        for value, name in KING_THRESHOLDS:
            if np.isfinite(y).any() and value <= max(np.nanmax(y), 0.05) * 1.2:
                ax.axhline(value, color="0.4", lw=0.8, ls="--")
                ax.annotate(name, (1, value), xycoords=("axes fraction", "data"),
                            ha="right", va="bottom", fontsize="small", color="0.3")
    ax.set_xlabel("proportion of sites with zero IBS (IBS0)")
    ax.set_ylabel("KING kinship coefficient")
    ax.set_title(f"KING kinship, {len(x)} pairs")
    return ax


def matrix(data: Any, ax: Any = None, *, samples: Optional[Sequence[str]] = None,
           populations: Optional[Sequence[str]] = None, label: Optional[str] = None):
    """Heatmap of a samples x samples matrix (kinship, GRM, IBS or distance), samples grouped
    by population when ``populations`` are given (ticks at the groups).

    ``data``: a :class:`~vczstats.SampleMatrix` (:func:`vczstats.king`, :func:`~vczstats.grm`,
    :func:`~vczstats.distance`), a square array, or a DataFrame labelled by sample.
    """
    import pandas as pd

    name = label
    if hasattr(data, "values") and hasattr(data, "samples") and not isinstance(
            data, pd.DataFrame):  # a SampleMatrix
        samples = list(map(str, data.samples)) if samples is None else samples
        name = name or getattr(data, "kind", None)
        m = np.asarray(data.values, dtype=float)
    elif isinstance(data, pd.DataFrame):
        samples = list(map(str, data.index)) if samples is None else samples
        m = data.to_numpy(float)
    else:
        m = np.asarray(data, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"matrix: expected a square matrix, not shape {m.shape}")
    order = np.arange(len(m))
    ticks: List[Tuple[float, str]] = []
    if populations is not None:
        pops = np.asarray(populations, dtype=object)
        if len(pops) != len(m):
            raise ValueError(f"matrix: {len(pops)} populations for {len(m)} samples")
        names = list(dict.fromkeys(pops))
        order = np.concatenate([np.flatnonzero(pops == n) for n in names])
        start = 0
        for n in names:
            k = int((pops == n).sum())
            ticks.append((start + (k - 1) / 2, str(n)))
            start += k
    shown = m[np.ix_(order, order)].copy()
    ax = _axes(ax, (6, 5))
    off = ~np.eye(len(m), dtype=bool)  # the diagonal (self-kinship, variances) sets no scale
    finite = shown[off & np.isfinite(shown)]
    lo, hi = (np.percentile(finite, [1, 99]) if finite.size else (0.0, 1.0))
    image = ax.imshow(shown, cmap="viridis", vmin=lo, vmax=hi if hi > lo else lo + 1,
                      interpolation="nearest")
    ax.figure.colorbar(image, ax=ax, label=name or "value")
    if ticks:
        ax.set_xticks([t for t, _ in ticks], [n for _, n in ticks], rotation=90)
        ax.set_yticks([t for t, _ in ticks], [n for _, n in ticks])
    else:
        ax.set_xlabel("sample")
        ax.set_ylabel("sample")
    ax.set_title(f"{name or 'sample matrix'}, {len(m)} samples")
    return ax



# ---- per-sample statistics and f-statistics ---------------------------------------------------
def sample_stats(data: Any, stat: str = "f", ax: Any = None):
    """One per-sample statistic (``f``, the inbreeding coefficient, by default; or ``f_miss``,
    ``het_obs_ct``, ...), a column of points per population (a strip plot; samples jittered
    sideways).

    ``data``: a :func:`vczstats.sample_stats` result or the TSV of ``vczstats sample-stats``.
    """
    df = _frame(data)
    if stat not in df.columns:
        raise ValueError(f"sample_stats: {stat!r} is not a column of this table "
                         f"({', '.join(map(str, df.columns))})")
    groups = (list(df.groupby("population", sort=False, observed=True))
              if "population" in df.columns else [("all", df)])
    ax = _axes(ax, (max(4.0, 1.2 * len(groups) + 2), 4))
    rng = np.random.default_rng(0)  # the same jitter every time
    for i, (color, (name, rows)) in enumerate(zip(_colors(len(groups)), groups)):
        y = rows[stat].to_numpy(float)
        x = i + rng.uniform(-0.25, 0.25, len(y))
        ax.scatter(x, y, s=10, color=color, linewidths=0, label=str(name))
    ax.set_xticks(range(len(groups)), [str(n) for n, _ in groups])
    ax.set_xlabel("population")
    ax.set_ylabel({"f": "inbreeding coefficient F", "f_miss": "missing call rate",
                   "het_obs_ct": "heterozygous calls", "o_hom": "homozygous calls"}.get(stat, stat))
    ax.set_title("per-sample statistics")
    return ax


def fstats(data: Any, ax: Any = None, *, z: float = 1.96):
    """The estimates of an f-statistics table, one row per statistic and populations, with
    ``z`` jackknife standard errors either side (when the run had blocks) and a line at 0.

    ``data``: a :func:`vczstats.fstats` result or the TSV of ``vczstats fstats``.
    """
    df = _frame(data)
    need = ("stat", "pops", "estimate")
    if any(c not in df.columns for c in need):
        raise ValueError("fstats: the table needs the columns of `vczstats fstats` "
                         f"({', '.join(need)}); it has {', '.join(map(str, df.columns))}")
    labels = [f"{a}({b})" for a, b in zip(df["stat"].astype(str), df["pops"].astype(str))]
    y = np.arange(len(df))[::-1]
    est = df["estimate"].to_numpy(float)
    se = df["se"].to_numpy(float) if "se" in df.columns else np.full(len(df), np.nan)
    ax = _axes(ax, (6, 0.4 * len(df) + 1.5))
    ax.errorbar(est, y, xerr=np.where(np.isfinite(se), z * se, 0), fmt="o",
                color=_colors(1)[0], capsize=3)
    ax.axvline(0, color="0.5", lw=0.8, ls="--")
    ax.set_yticks(y, labels)
    ax.set_xlabel(f"estimate (bars: {z:g} jackknife standard errors)" if np.isfinite(se).any()
                  else "estimate")
    ax.set_title("f-statistics")
    return ax

__all__ = ["sfs", "joint_sfs", "windows", "tracks", "afdist", "pca", "ld_decay",
           "selection_scan", "garud_h", "ehh", "king", "matrix", "sample_stats", "fstats"]
