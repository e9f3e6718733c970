"""The statistic families beyond the per-site and windowed tables: linkage (:func:`ld`,
:func:`prune`), sample-by-sample matrices (:func:`grm`, :func:`king`, :func:`distance`,
:func:`pca`) and the haplotype family (:func:`haplotypes`, :func:`ehh`, :func:`ihs`,
:func:`nsl`, :func:`xpehh`, :func:`xpnsl`).

Each function has the CLI command's options as Python keywords, runs the library's statistic
as the CLI runs it (``vczstats::Runner``, the GIL released) and gives the numbers the CLI
prints for the same store and options.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._args import PathLike, QueryArgs, Regions, SampleList, SampleSets, python_errors
from ._mpi import _OtherRank, rank0
from ._progress import Progress
from ._result import Result

Focal = Union[str, Sequence[Union[str, Tuple[str, int]]]]
PopPairs = Union[None, str, Sequence[Tuple[str, str]]]


# ---- running ------------------------------------------------------------------------------------


def _run_family(kind: str, store: Any, make: Callable[[Any], Any], selection: Dict[str, Any],
                execution: Dict[str, Any], *, extract: Optional[PathLike] = None,
                site_fields: bool = False, check: Optional[Callable[[Any], None]] = None):
    """Build the query, compute the statistic make(query) builds (the library's Runner, as
    the CLI: make is called again when a counting pass filtered the query first): (statistic,
    table, run, query)."""
    from ._stats import _store_of

    s = _store_of(store)
    query = QueryArgs(s, **selection).query()
    if check is not None:
        check(query)
    if extract is not None:
        _core.extract_variants(query, os.fspath(extract))
    with python_errors():
        with Progress(execution.get("progress"), desc=f"vczstats {kind}") as fn:
            table, run, statistic = _core.compute(query, make,
                                                  threads=int(execution.get("threads") or 0),
                                                  prefetch=int(execution.get("prefetch") or 0),
                                                  device=execution.get("device") or "auto",
                                                  progress=fn, site_fields=site_fields)
    if table is None:  # an MPI rank other than 0: its share went to rank 0
        raise _OtherRank()
    run["warnings"] = list(query.warnings) + list(run["warnings"])
    for w in run["warnings"]:
        warnings.warn(w, stacklevel=4)
    return statistic, table, run, query


def _selection(regions, regions_overlap, samples, force_samples, sample_sets=None,
               windows=None, ancestral="ref", filters=None) -> Dict[str, Any]:
    return dict(regions=regions, regions_overlap=regions_overlap, samples=samples,
                force_samples=force_samples, sample_sets=sample_sets, windows=windows,
                ancestral=ancestral, filters=filters)


def _execution(device, threads, prefetch, progress) -> Dict[str, Any]:
    return dict(device=device, threads=threads, prefetch=prefetch, progress=progress)


def _label_column(name: str, values: Sequence[str]) -> Dict[str, Any]:
    labels, codes = np.unique(np.asarray(values, dtype=object).astype(str), return_inverse=True)
    return {"name": name, "kind": "label", "values": codes.astype(np.int64),
            "labels": [str(x) for x in labels], "offsets": None, "single_precision": False}


def _check_pairs(pairs: PopPairs, argument: str) -> Callable[[Any], None]:
    """A check that the populations named in pairs are the query's (errors name argument)."""

    def check(query: Any) -> None:
        known = list(query.populations)
        if len(known) < 2:
            raise ValueError(f"{argument}: needs sample_sets with two populations or more")
        for pair in _pair_list(pairs):
            if len(pair) != 2:
                raise ValueError(f"{argument}: expected (A, B) pairs, got {pair!r}")
            for p in pair:
                if p not in known:
                    raise ValueError(f"{argument}: population {p!r} is not among the "
                                     f"sample_sets ({', '.join(known)})")

    return check


def _pair_list(pairs: PopPairs) -> List[Tuple[str, ...]]:
    if pairs is None:
        return []
    if isinstance(pairs, str):
        return [tuple(p.split(",")) for p in pairs.split(";") if p]
    return [tuple(str(x) for x in p) for p in pairs]


def _pairs_text(pairs: PopPairs) -> str:
    return ";".join(",".join(p) for p in _pair_list(pairs))


#: Parameter entries several docstrings share (numpydoc), put where a docstring says {shared}.
_SHARED_PARAMETERS = {
    "selection": ("regions, regions_overlap, samples, force_samples, filters",
        "The selection and the site filters (``{\"maf\": 0.01, \"geno\": 0.05, ...}``, keyed "
        "as the CLI's options; ``\"include\"``/``\"exclude\"`` take a bcftools-style "
        "expression as -i/-e), as in :func:`diversity`."),
    "execution": ("device, threads, prefetch, progress", "Execution, as in :func:`diversity`."),
    "ancestral": ("ancestral : str",
        "``\"ref\"``, ``\"aa\"`` (the store's variant_AA) or an ancestral FASTA."),
    "maf_scan": ("maf : float",
        "Leave out sites whose minor allele frequency in the population is below this."),
    "cutoff": ("cutoff : float", "Integrate EHH until it falls to this value or below."),
    "gap_scale": ("gap_scale : float",
        "A gap of G bp longer than this counts as gap_scale/G of its length."),
    "max_gap": ("max_gap : float", "Drop a site whose EHH spans a gap longer than this (bp)."),
    "max_extend": ("max_extend : float", "Stop this many bp from the focal site (<= 0: no limit)."),
    "max_extend_nsl": ("max_extend_nsl : int",
        "Stop this many sites from the focal site (<= 0: no limit)."),
    "trunc_ok": ("trunc_ok : bool", "Integrate up to a contig end instead of dropping the site."),
    "map": ("map : path, optional",
            "Genetic map (plink .map or HapMap-style table), default the physical distance."),
    "bins": ("bins : int", "Derived allele frequency bins of the standardisation."),
    "min_bin_sites": ("min_bin_sites : int",
        "A bin with fewer scores gives no standardised values."),
    "crit": ("crit : float", "\\|standardised score\\| >= crit counts as extreme in the summary."),
    "windows_summary": ("windows : optional",
        "Windows of the summary, as in :func:`diversity` (default: one per "
        "contig or region)."),
    "pops_one": ("sample_sets : optional",
        "The populations, as in :func:`diversity` (default: all samples as one)."),
    "pops_two": ("sample_sets : mapping, list, DataFrame or path",
        "The populations, as in :func:`diversity` (two or more)."),
    "pairs": ("pairs : list of tuple or str, optional",
        "Population pairs ``[(\"A\", \"B\"), ...]`` or ``\"A,B;C,D\"`` (score > 0: "
        "selection in A); default every pair."),
    "maf_matrix": ("maf : float",
        "Keep variants whose minor (REF against the rest) allele frequency is "
        "at least this."),
    "extract": ("extract : path or list of str, optional",
        "Keep only the variants with these IDs (plink ``--extract``; e.g. "
        "``prune(..., kept_only=True)``)."),
}


def _shared_parameters(*keys: str):
    """Put the shared entries ``keys`` where the docstring says ``{shared}``."""

    def decorate(fn):
        text = "\n".join(f"{header}\n    {desc}" for header, desc in
                         (_SHARED_PARAMETERS[k] for k in keys))
        fn.__doc__ = fn.__doc__.replace("{shared}", text.replace("\n", "\n    "))
        return rank0(fn)

    return decorate


# ---- results ------------------------------------------------------------------------------------


class SampleMatrix:
    """A symmetric sample-by-sample matrix (:func:`grm`, :func:`king`, :func:`distance`).

    ``values`` is an ``(n, n)`` float64 numpy array whose rows and columns are ``samples`` (the
    selected samples in store order); ``to_pandas()`` labels it, ``to_xarray()`` gives a Dataset
    with dimensions ``samples_0`` and ``samples_1`` (sgkit's, as ``stat_identity_by_state``).
    """

    def __init__(self, kind: str, variable: str, table: Dict[str, Any], run: Dict[str, Any]):
        result = Result(kind, table, run)
        self.kind = kind
        self.variable = variable
        self.samples: np.ndarray = np.asarray(result["sample"], dtype=object)
        names = [c for c in result.columns if c != "sample"]
        self.values: np.ndarray = (np.column_stack([result[c] for c in names]).astype(np.float64)
                                   if names else np.zeros((0, 0)))
        self.note: str = result.note
        self.run = run

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return self.values if dtype is None else self.values.astype(dtype)

    @property
    def shape(self) -> Tuple[int, int]:
        return self.values.shape

    def to_pandas(self):
        """A DataFrame indexed and labelled by sample."""
        import pandas as pd

        return pd.DataFrame(self.values, index=pd.Index(self.samples, name="sample"),
                            columns=pd.Index(self.samples, name="sample"))

    def to_xarray(self):
        """An xarray Dataset: ``{variable}`` over (``samples_0``, ``samples_1``), with the
        ``sample_id`` of each side as coordinates."""
        import xarray as xr

        ids = self.samples.astype(str)
        return xr.Dataset({self.variable: (("samples_0", "samples_1"), self.values)},
                          coords={"sample_id_0": ("samples_0", ids),
                                  "sample_id_1": ("samples_1", ids)},
                          attrs={"kind": self.kind, "note": self.note})

    def __repr__(self) -> str:
        return f"<vczstats.SampleMatrix {self.kind} {self.values.shape[0]} samples>"


class PcaResult:
    """Principal components of the samples (:func:`pca`).

    - ``projection``: ``(samples, components)`` unit eigenvectors of the GRM (plink2's
      ``.eigenvec``, the CLI's pc1..pck columns);
    - ``eigenvalues``: the GRM eigenvalues, descending (plink2's ``.eigenval``);
    - ``samples``: the sample names of the rows;
    - ``vectors``: the CLI's table (sample, pc1, ...) as a :class:`~vczstats.Result`;
    - ``loadings``: with ``loadings=True``, the variant loadings table (chrom, pos, id, ref, alt,
      alt_freq, pc1, ...; plink2's var-wts), else None.

    ``to_xarray()`` uses sgkit's names: ``sample_pca_projection`` (samples, components),
    ``sample_pca_explained_variance`` (components) and ``sample_pca_loading`` (variants,
    components).
    """

    def __init__(self, statistic: Any, table: Dict[str, Any], run: Dict[str, Any],
                 loadings: bool):
        self.vectors = Result("pca", table, run)
        self.samples: np.ndarray = np.asarray(self.vectors["sample"], dtype=object)
        pcs = [c for c in self.vectors.columns if c.startswith("pc")]
        self.projection: np.ndarray = (np.column_stack([self.vectors[c] for c in pcs])
                                       if pcs else np.zeros((len(self.samples), 0)))
        self.eigenvalues: np.ndarray = np.asarray(statistic.eigenvalues(), dtype=np.float64)
        self.method: str = statistic.method()
        self.loadings: Optional[Result] = (Result("pca_loadings", statistic.loadings_table(), run)
                                           if loadings else None)
        self.run = run

    def to_xarray(self):
        """An xarray Dataset with sgkit's PCA variable names."""
        import xarray as xr

        k = self.projection.shape[1]
        data = {
            "sample_pca_projection": (("samples", "components"), self.projection),
            "sample_pca_explained_variance": (("components",), self.eigenvalues[:k]),
        }
        coords = {"sample_id": ("samples", self.samples.astype(str)),
                  "components": np.arange(1, k + 1)}
        if self.loadings is not None:
            data["sample_pca_loading"] = (("variants", "components"), np.column_stack(
                [self.loadings[f"pc{i}"] for i in range(1, k + 1)]))
            coords["variant_contig_name"] = ("variants", self.loadings["chrom"].astype(str))
            coords["variant_position"] = ("variants", self.loadings["pos"])
        return xr.Dataset(data, coords=coords, attrs={"kind": "pca", "method": self.method})

    def __repr__(self) -> str:
        return (f"<vczstats.PcaResult {self.projection.shape[0]} samples x "
                f"{self.projection.shape[1]} components ({self.method})>")


# ---- linkage ------------------------------------------------------------------------------------


@_shared_parameters("selection", "execution")
def ld(store: Any, *, measure: str = "r2", window_variants: int = 10,
       window_bp: int = 1_000_000, min_r2: float = 0.2, focal: Optional[Sequence[str]] = None,
       regions: Optional[Regions] = None, regions_overlap: str = "record",
       samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
       device: str = "auto", threads: Optional[int] = None, prefetch: Optional[int] = None,
       progress: Any = None) -> Result:
    """Linkage disequilibrium between nearby variants (``vczstats ld``; plink 1.9 ``--r2``,
    vcftools ``--geno-r2`` / ``--hap-r2``).

    Every pair of selected variants on one contig at most ``window_variants - 1`` variants and
    ``window_bp`` bp apart whose r² is at least ``min_r2``.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    measure : {"r2", "dprime", "hap"}
        ``"r2"``: r² of the non-REF allele counts over the samples called at both sites
        (plink ``--r2``); ``"dprime"``: r² and D' of plink's EM haplotype frequencies
        (plink ``--r2 dprime``); ``"hap"``: r², D and D' of phased haplotypes
        (vcftools ``--hap-r2``).
    window_variants : int
        Pairs at most this many minus one selected variants apart (the CLI's ``--ld-window``).
    window_bp : int
        Pairs at most this many bp apart (``--ld-window-bp``).
    min_r2 : float
        Report pairs with r² at least this (``--ld-window-r2``).
    focal : list of str, optional
        Variant IDs: only the pairs of each with the variants of its window, both sides
        (``--ld-snps``).
    {shared}

    Returns
    -------
    Result
        The CLI's columns chr_a, bp_a, snp_a, chr_b, bp_b, snp_b, n, r2 (and d, dprime as the
        measure gives them), then variant_a and variant_b (variant indices in the store).

    Examples
    --------
    >>> import vczstats
    >>> r = vczstats.ld("1kg_chr20.vcz", regions="20:1-200000", min_r2=0.5)  # doctest: +SKIP
    >>> r.to_pandas()[["bp_a", "bp_b", "r2"]].head()                       # doctest: +SKIP
    """
    if measure not in ("r2", "dprime", "hap"):
        raise ValueError(f"measure must be 'r2', 'dprime' or 'hap', not {measure!r}")
    if int(window_variants) < 2:
        raise ValueError("window_variants must be at least 2")
    if int(window_bp) < 0:
        raise ValueError("window_bp must not be negative")
    focal_ids = [focal] if isinstance(focal, str) else [str(f) for f in (focal or [])]
    statistic, table, run, query = _run_family(
        "ld", store,
        lambda q: _core.make_ld(q, measure, int(window_variants), int(window_bp), float(min_r2),
                                focal_ids),
        _selection(regions, regions_overlap, samples, force_samples, filters=filters),
        _execution(device, threads, prefetch, progress))
    cols = {c["name"]: c for c in table["columns"]}
    ids = {}
    for side in ("a", "b"):
        ids[side] = _core.variant_ids(query.store, cols[f"variant_{side}"]["values"].tolist())
    out = []
    for side in ("a", "b"):
        out.append(dict(cols[f"chrom_{side}"], name=f"chr_{side}"))
        out.append(dict(cols[f"pos_{side}"], name=f"bp_{side}"))
        out.append(_label_column(f"snp_{side}", ids[side]))
    out += [c for c in table["columns"] if not c["name"].split("_")[0] in ("variant", "chrom",
                                                                           "pos")]
    out += [cols["variant_a"], cols["variant_b"]]
    return Result("ld", {"note": table["note"], "columns": out}, run)


def _bin_edges(bins: Any, name: str) -> List[int]:
    """Bin edges in bp: a sequence of increasing integers, or a string as the CLI takes it
    ("E0,E1,..." or "START:STOP:STEP", kb/Mb suffixes allowed; the library's parser)."""
    if isinstance(bins, str):
        return list(_core.parse_bin_edges(bins, name))
    edges = [int(e) for e in bins]
    _core.check_bin_edges(edges, name)
    return edges


@_shared_parameters("selection", "execution")
def ld_decay(store: Any, bins: Union[str, Sequence[int]], *, measure: str = "r2",
             window_variants: Optional[int] = None, window_size: int = 0,
             regions: Optional[Regions] = None, regions_overlap: str = "record",
             samples: Optional[SampleList] = None, force_samples: bool = False,
             sample_sets: Optional[SampleSets] = None,
        filters: Optional[Mapping[str, Any]] = None,
             device: str = "auto", threads: Optional[int] = None, prefetch: Optional[int] = None,
             progress: Any = None) -> Result:
    """Binned r² against distance without writing pairs (``vczstats ld --decay``).

    Every pair of selected variants on one contig closer than the last edge adds one pair and
    its r² to the bin of its distance (``edges[k] <= pos_b - pos_a < edges[k + 1]``).

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    bins : str or list of int
        Bin edges in bp, or ``"START:STOP:STEP"``.
    measure : {"r2", "hap"}
        r² of allele counts (as ``ld``) or of phased haplotypes.
    window_variants : int, optional
        Only pairs at most this many minus one selected variants apart.
    window_size : int
        One curve per window of this many bp (0: one curve).
    sample_sets : mapping, list, DataFrame or path, optional
        One curve per population, all in one pass (``ld --decay -P``): a leading ``pop``
        column. Count filters (``maf``, ``geno``, ...) cannot be combined with it: they would
        count every population's samples together (run once per population instead).
    {shared}

    Returns
    -------
    Result
        Columns bin_start, bin_end, pairs, sum_r2, mean_r2 (pop first with ``sample_sets``;
        chrom, window_start and window_end with ``window_size``); pairs and sums add across
        regions and runs.

    Examples
    --------
    >>> import vczstats
    >>> vczstats.ld_decay("1kg_chr20.vcz", "0:100000:10000").to_pandas()  # doctest: +SKIP
    """
    if measure not in ("r2", "hap"):
        raise ValueError(f"measure must be 'r2' or 'hap', not {measure!r}")
    edges = _bin_edges(bins, "bins")
    statistic, table, run, query = _run_family(
        "ld_decay", store,
        lambda q: _core.make_ld_decay(q, measure, edges, int(window_variants or 0),
                                      int(window_size), sample_sets is not None),
        _selection(regions, regions_overlap, samples, force_samples, sample_sets,
                   filters=filters),
        _execution(device, threads, prefetch, progress))
    return Result("ld_decay", table, run)


@_shared_parameters("selection", "execution")
def ld_scores(store: Any, *, window_kb: Optional[float] = None,
              window_variants: Optional[int] = None, window_cm: Optional[float] = None,
              genetic_map: Optional[PathLike] = None, measure: str = "r2",
              regions: Optional[Regions] = None, regions_overlap: str = "record",
              samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
              device: str = "auto", threads: Optional[int] = None,
              prefetch: Optional[int] = None, progress: Any = None) -> Result:
    """LD scores as ldsc ``--l2`` (``vczstats ld --ld-scores``).

    Per selected variant, 1 plus the sum over the variants of its window (both sides) of
    r²_adj = r² - (1 - r²) / (n - 2), n the samples called at both.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    window_kb, window_variants, window_cm : float or int, optional
        Exactly one window: kb, variants, or cM (with ``genetic_map``).
    genetic_map : path, optional
        A plink ``.map`` file for ``window_cm``.
    measure : {"r2", "hap"}
        r² of allele counts or of phased haplotypes.
    {shared}

    Returns
    -------
    Result
        Columns variant, chrom, pos, pairs, l2.

    Examples
    --------
    >>> import vczstats
    >>> vczstats.ld_scores("1kg_chr20.vcz", window_kb=100).to_pandas()  # doctest: +SKIP
    """
    if measure not in ("r2", "hap"):
        raise ValueError(f"measure must be 'r2' or 'hap', not {measure!r}")
    given = [w for w in (window_kb, window_variants, window_cm) if w is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of window_kb, window_variants and window_cm")
    if window_cm is not None and genetic_map is None:
        raise ValueError("window_cm needs genetic_map")
    statistic, table, run, query = _run_family(
        "ld_scores", store,
        lambda q: _core.make_ld_scores(
            q, measure, -1 if window_variants is None else int(window_variants),
            -1 if window_kb is None else int(round(float(window_kb) * 1000)),
            -1.0 if window_cm is None else float(window_cm),
            "" if genetic_map is None else os.fspath(genetic_map)),
        _selection(regions, regions_overlap, samples, force_samples, filters=filters),
        _execution(device, threads, prefetch, progress))
    return Result("ld_scores", table, run)


@_shared_parameters("pops_one", "selection", "execution")
def ld_stats(store: Any, bp_bins: Union[str, Sequence[int], None] = None, *,
             r_bins: Optional[Sequence[float]] = None, genetic_map: Optional[PathLike] = None,
             genotypes: bool = False, sample_sets: Optional[SampleSets] = None,
             regions: Optional[Regions] = None, regions_overlap: str = "record",
             samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
             device: str = "auto", threads: Optional[int] = None, prefetch: Optional[int] = None,
             progress: Any = None) -> Dict[str, Any]:
    """moments.LD's two-locus statistics of one to four populations in bins of bp
    distance (``vczstats ld-stats``), as ``moments.LD.Parsing.compute_ld_statistics`` returns
    them.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store (haplotypes read in the order stored).
    bp_bins : str or list of int
        Bin edges in bp, or ``"START:STOP:STEP"`` (kb/Mb suffixes as the CLI).
    r_bins : list of float, optional
        Instead of ``bp_bins``: bin edges of recombination distance
        ``r = abs(cM_b - cM_a) / 100`` (Morgans, as moments.LD's ``r_bins``) on
        ``genetic_map`` (a plink ``.map`` or a HapMap-style table).
    genetic_map : path, optional
        The map of ``r_bins``.
    genotypes : bool
        Unphased diploid genotypes (``--genotypes``, moments.LD's ``use_genotypes=True``):
        Ragsdale & Gravel's estimators from each pair's table of genotype counts over the
        samples called at both sites, instead of phased haplotypes.
    {shared}

    Returns
    -------
    dict
        moments.LD's layout: ``bins`` (pairs of edges), ``sums`` (per bin an array of the
        two-locus statistics, then the array of the H statistics last), ``stats`` (their names,
        moments.LD's basis for that many populations: ``[["DD_0_0", "DD_0_1", ...,
        "pi2_1_1_1_1"], ["H_0_0", "H_0_1", "H_1_1"]]`` for two), ``pops`` (the populations'
        names, in the order of the indices) and ``pairs`` (the number of pairs of each bin).

    Examples
    --------
    >>> import vczstats
    >>> vczstats.ld_stats("1kg_chr20.vcz", "0:50000:10000")["sums"][0]  # doctest: +SKIP
    >>> vczstats.ld_stats("1kg_chr20.vcz", [0, 1000, 10000],
    ...                   sample_sets={{"YRI": yri, "CEU": ceu}})["stats"]  # doctest: +SKIP
    """
    if (bp_bins is None) == (r_bins is None):
        raise ValueError("give bp_bins or r_bins (with genetic_map)")
    edges = [] if bp_bins is None else _bin_edges(bp_bins, "bp_bins")
    r_edges = [] if r_bins is None else [float(x) for x in r_bins]
    if r_bins is not None and genetic_map is None:
        raise ValueError("r_bins needs genetic_map")
    map_path = "" if genetic_map is None else os.fspath(genetic_map)
    statistic, table, run, query = _run_family(
        "ld_stats", store, lambda q: _core.make_ld_stats(q, edges, r_edges, map_path, genotypes),
        _selection(regions, regions_overlap, samples, force_samples, sample_sets,
                   filters=filters),
        _execution(device, threads, prefetch, progress))
    order = [c["name"] for c in table["columns"]]
    cols = {c["name"]: np.asarray(c["values"]) for c in table["columns"]}
    names = order[order.index("pairs") + 1:order.index("sites")]
    hets = order[order.index("sites") + 1:]
    sums = [np.array([cols[n][i] for n in names], dtype=float) for i in range(len(cols["pairs"]))]
    sums.append(np.array([float(cols[n][0]) if len(cols[n]) else 0.0 for n in hets]))
    pops = list(query.populations) if sample_sets is not None else ["pop0"]
    edge = float if r_bins is not None else int
    return {"bins": [(edge(a), edge(b)) for a, b in zip(cols["bin_start"], cols["bin_end"])],
            "sums": sums, "stats": [names, hets], "pops": pops,
            "pairs": np.asarray(cols["pairs"], dtype=np.int64)}


@_shared_parameters("selection", "execution")
def prune(store: Any, *, window: int = 50, step: int = 5, r2: float = 0.5,
          window_kb: bool = False, kept_only: bool = False,
          regions: Optional[Regions] = None, regions_overlap: str = "record",
          samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
          device: str = "auto", threads: Optional[int] = None, prefetch: Optional[int] = None,
          progress: Any = None) -> Union[Result, np.ndarray]:
    """LD pruning (``vczstats prune``; plink 1.9 ``--indep-pairwise W S r2``).

    In windows of ``window`` variants (or kb) moved by ``step`` variants, of every pair of
    remaining variants with r² above ``r2`` the one with the lower minor allele frequency is
    removed, greedily in plink's order; variants without variance are removed.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    window : int
        W: the window, in variants (or in kb with ``window_kb=True``).
    step : int
        S: variants the window moves by.
    r2 : float
        Prune one of each pair with r² above this.
    window_kb : bool
        ``window`` is in kb (plink's ``W kb``).
    kept_only : bool
        Return the IDs of the kept variants (plink's ``prune.in``) instead of the table.
    {shared}

    Returns
    -------
    Result or numpy.ndarray
        One row per selected variant: variant (its index in the store), chrom, pos, id, kept
        (1: kept, 0: pruned); with ``kept_only``, the kept variants' IDs.

    Examples
    --------
    >>> import vczstats
    >>> keep = vczstats.prune("1kg_chr20.vcz", window=50, step=5, r2=0.2,
    ...                       kept_only=True)                        # doctest: +SKIP
    >>> pcs = vczstats.pca("1kg_chr20.vcz", extract=keep)            # doctest: +SKIP
    """
    if int(window) < 1 or int(step) < 1:
        raise ValueError("window and step must be positive")
    statistic, table, run, query = _run_family(
        "prune", store,
        lambda q: _core.make_prune(q, int(window), bool(window_kb), int(step), float(r2)),
        _selection(regions, regions_overlap, samples, force_samples, filters=filters),
        _execution(device, threads, prefetch, progress))
    # Rows are final only once the window has passed them (often in a later unit): the IDs are
    # looked up by variant index, as the CLI does.
    cols = {c["name"]: c for c in table["columns"]}
    ids = _core.variant_ids(query.store, cols["variant"]["values"].tolist())
    table = {"note": table["note"], "columns": [cols["variant"], cols["chrom"], cols["pos"],
                                                 _label_column("id", ids), cols["kept"]]}
    result = Result("prune", table, run)
    if kept_only:
        return result["id"][result["kept"] == 1]
    return result


# ---- sample-by-sample matrices --------------------------------------------------------------


class _Extract:
    """A variant ID list (plink --extract) given as a path or as IDs; IDs go to a temporary
    file that lives as long as the object."""

    def __init__(self, extract: Union[None, PathLike, Sequence[str], np.ndarray]):
        self.path: Optional[str] = None
        self._tmp = None
        if extract is None:
            return
        if isinstance(extract, (str, os.PathLike)):
            self.path = os.fspath(extract)
            return
        import tempfile

        self._tmp = tempfile.NamedTemporaryFile("w", prefix="vczstats-extract-", suffix=".txt",
                                                delete=False)
        self._tmp.write("".join(f"{v}\n" for v in np.asarray(extract, dtype=object).ravel()))
        self._tmp.close()
        self.path = self._tmp.name

    def __enter__(self) -> Optional[str]:
        return self.path

    def __exit__(self, *exc: Any) -> None:
        if self._tmp is not None:
            os.unlink(self._tmp.name)


def _matrix(kind: str, variable: str, store: Any, make: Callable[[Any], Any], extract: Any,
            selection: Dict[str, Any], execution: Dict[str, Any]) -> SampleMatrix:
    with _Extract(extract) as path:
        statistic, table, run, _ = _run_family(kind, store, make, selection, execution,
                                               extract=path)
    return SampleMatrix(kind, variable, table, run)


def _check_maf(maf: float) -> float:
    if not 0 <= float(maf) <= 0.5:
        raise ValueError(f"maf must be between 0 and 0.5, not {maf}")
    return float(maf)


@_shared_parameters("maf_matrix", "extract", "selection", "execution")
def grm(store: Any, *, maf: float = 0.0, cov: bool = False,
        extract: Union[None, PathLike, Sequence[str]] = None,
        regions: Optional[Regions] = None, regions_overlap: str = "record",
        samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
        device: str = "auto", threads: Optional[int] = None, prefetch: Optional[int] = None,
        progress: Any = None) -> SampleMatrix:
    """Genomic relationship matrix (``vczstats grm``; plink2 ``--make-rel``).

    For each pair of samples, the sum over variants of x_i x_j with
    x = (g - 2f) / sqrt(2f(1 - f)) (g the count of non-REF alleles, f their frequency over the
    selected samples, 0 when missing), divided by the variants both samples have called.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    cov : bool
        plink2's ``cov``: g - 2f without the variance standardisation.
    {shared}

    Returns
    -------
    SampleMatrix
        ``.values`` (samples x samples) and ``.samples``; ``to_xarray()`` names it
        ``stat_genomic_relationship``.

    Examples
    --------
    >>> import vczstats
    >>> g = vczstats.grm("1kg_chr20.vcz", maf=0.01)                  # doctest: +SKIP
    >>> g.to_pandas().iloc[:3, :3]                                   # doctest: +SKIP
    """
    m = _check_maf(maf)
    return _matrix("grm", "stat_genomic_relationship", store,
                   lambda q: _core.make_grm(q, m, bool(cov)), extract,
                   _selection(regions, regions_overlap, samples, force_samples, filters=filters),
                   _execution(device, threads, prefetch, progress))


@_shared_parameters("maf_matrix", "extract", "selection", "execution")
def king(store: Any, *, table: bool = False, min_kinship: Optional[float] = None,
         maf: float = 0.0, extract: Union[None, PathLike, Sequence[str]] = None,
         regions: Optional[Regions] = None, regions_overlap: str = "record",
         samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
         device: str = "auto", threads: Optional[int] = None, prefetch: Optional[int] = None,
         progress: Any = None) -> Union[SampleMatrix, Result]:
    """KING-robust kinship between samples (``vczstats king``; plink2 ``--make-king``).

    Over the variants both samples have called,
    1/2 - (4 IBS0 + het1hom2 + het2hom1) / (4 (HETHET + min(het1hom2, het2hom1))); multi-allelic
    sites count REF against the other alleles. The diagonal is 0.5.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    table : bool
        One row per pair instead of the matrix (plink2 ``--make-king-table``).
    min_kinship : float, optional
        With ``table=True``: leave out pairs whose kinship is below this
        (plink2 ``--king-table-filter``).
    {shared}

    Returns
    -------
    SampleMatrix or Result
        The kinship matrix (``to_xarray()`` names it ``stat_king_kinship``), or with
        ``table=True`` the table sample1, sample2, nsnp, hethet, ibs0 (proportions of nsnp),
        kinship.

    Examples
    --------
    >>> import vczstats
    >>> k = vczstats.king("1kg_chr20.vcz")                           # doctest: +SKIP
    >>> pairs = vczstats.king("1kg_chr20.vcz", table=True,
    ...                       min_kinship=0.0884)                    # doctest: +SKIP
    """
    m = _check_maf(maf)
    selection = _selection(regions, regions_overlap, samples, force_samples, filters=filters)
    execution = _execution(device, threads, prefetch, progress)
    if not table:
        if min_kinship is not None:
            raise ValueError("min_kinship filters the pairs of table=True")
        return _matrix("king", "stat_king_kinship", store, lambda q: _core.make_king(q, m),
                       extract, selection, execution)
    low = -np.inf if min_kinship is None else float(min_kinship)
    with _Extract(extract) as path:
        _, t, run, _ = _run_family("king", store, lambda q: _core.make_king_table(q, m, low),
                                   selection, execution, extract=path)
    return Result("king_table", t, run)


@_shared_parameters("maf_matrix", "extract", "selection", "execution")
def distance(store: Any, *, metric: str = "allele-ct", flat_missing: bool = False,
             maf: float = 0.0, extract: Union[None, PathLike, Sequence[str]] = None,
             regions: Optional[Regions] = None, regions_overlap: str = "record",
             samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
             device: str = "auto", threads: Optional[int] = None,
             prefetch: Optional[int] = None, progress: Any = None) -> SampleMatrix:
    """Distances between samples (``vczstats distance``; plink 1.9 ``--distance``).

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    metric : {"allele-ct", "ibs", "1-ibs"}
        ``"allele-ct"``: the sum over the variants both samples called of ``|g_i - g_j|``, scaled
        up for the variants either misses; ``"ibs"``: 1 - allele-ct / (2 variants);
        ``"1-ibs"``: allele-ct / (2 variants).
    flat_missing : bool
        Scale for missing calls by the number of variants (plink's ``flat-missing``) instead of
        by the variants' expected distances f(1-f)(f²-f+1).
    {shared}

    Returns
    -------
    SampleMatrix
        ``to_xarray()`` names it ``stat_identity_by_state`` for ``metric="ibs"``, else
        ``stat_distance``.

    Examples
    --------
    >>> import vczstats
    >>> d = vczstats.distance("1kg_chr20.vcz", metric="ibs")         # doctest: +SKIP
    >>> d.values.shape                                               # doctest: +SKIP
    """
    if metric not in ("allele-ct", "ibs", "1-ibs"):
        raise ValueError(f"metric must be 'allele-ct', 'ibs' or '1-ibs', not {metric!r}")
    m = _check_maf(maf)
    variable = "stat_identity_by_state" if metric == "ibs" else "stat_distance"
    return _matrix("distance", variable, store,
                   lambda q: _core.make_distance(q, m, metric, bool(flat_missing)), extract,
                   _selection(regions, regions_overlap, samples, force_samples, filters=filters),
                   _execution(device, threads, prefetch, progress))


@_shared_parameters("maf_matrix", "extract", "selection", "execution")
def pca(store: Any, *, components: int = 10, method: str = "auto", loadings: bool = False,
        seed: int = 1, maf: float = 0.0, extract: Union[None, PathLike, Sequence[str]] = None,
        regions: Optional[Regions] = None, regions_overlap: str = "record",
        samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
        device: str = "auto", threads: Optional[int] = None, prefetch: Optional[int] = None,
        progress: Any = None) -> PcaResult:
    """Principal components of the samples (``vczstats pca``; plink2 ``--pca``).

    The top eigenvectors of the GRM (:func:`grm`), exact up to 50,000 samples by default, or a
    randomized approximation (Galinsky et al. 2016; plink2 ``--pca approx``).

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    components : int
        Principal components (``-k``).
    method : {"auto", "exact", "approx"}
        ``"auto"``: exact up to 50,000 samples, randomized above.
    loadings : bool
        Also the variant loadings (plink2's var-wts; keeps the packed genotypes in memory).
    seed : int
        Seed of the randomized method.
    {shared}

    Returns
    -------
    PcaResult
        ``projection`` (samples x components), ``eigenvalues``, ``samples``, ``loadings``;
        ``to_xarray()`` gives sgkit's ``sample_pca_projection``,
        ``sample_pca_explained_variance`` and ``sample_pca_loading``.

    Examples
    --------
    >>> import vczstats
    >>> p = vczstats.pca("1kg_chr20.vcz", components=4)              # doctest: +SKIP
    >>> p.projection[:, :2], p.eigenvalues                           # doctest: +SKIP
    >>> vczstats.plot.pca(p)                                         # doctest: +SKIP
    """
    if int(components) < 1:
        raise ValueError("components must be at least 1")
    if method not in ("auto", "exact", "approx"):
        raise ValueError(f"method must be 'auto', 'exact' or 'approx', not {method!r}")
    m = _check_maf(maf)
    with _Extract(extract) as path:
        statistic, table, run, _ = _run_family(
            "pca", store,
            lambda q: _core.make_pca(q, m, int(components), method, bool(loadings), int(seed)),
            _selection(regions, regions_overlap, samples, force_samples, filters=filters),
            _execution(device, threads, prefetch, progress), extract=path)
    return PcaResult(statistic, table, run, bool(loadings))


# ---- the haplotype family ---------------------------------------------------------------------


@_shared_parameters("selection", "execution")
def haplotypes(store: Any, *, sample_sets: Optional[SampleSets] = None, windows: Any = None,
               regions: Optional[Regions] = None, regions_overlap: str = "record",
               samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
               device: str = "auto", threads: Optional[int] = None,
               prefetch: Optional[int] = None, progress: Any = None) -> Result:
    """Haplotype statistics per window and population (``vczstats haplotypes``): distinct
    haplotypes, haplotype diversity and Garud's H1, H12, H123 and H2/H1, over the window's
    sites where every haplotype is called. Phased data required.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    sample_sets : mapping, list, DataFrame or path, optional
        The populations, as in :func:`diversity` (default: all samples as one).
    windows : optional
        The windows, as in :func:`diversity` (default: one per contig or region).
    {shared}

    Returns
    -------
    Result
        chrom, start, end, population, n_sites, n_used, n_haplotypes, n_distinct,
        hap_diversity, h1, h12, h123, h2_h1.

    Examples
    --------
    >>> import vczstats
    >>> h = vczstats.haplotypes("phased.vcz", windows=(100_000, 50_000))  # doctest: +SKIP
    >>> vczstats.plot.windows(h, "h12")                                    # doctest: +SKIP
    """
    _, table, run, query = _run_family(
        "haplotypes", store, _core.make_haplotype_windows,
        _selection(regions, regions_overlap, samples, force_samples, sample_sets, windows,
                   filters=filters),
        _execution(device, threads, prefetch, progress))
    return Result("haplotypes", table, run, {"populations": list(query.populations)})


def _focal_sites(focal: Focal) -> List[Tuple[str, int]]:
    items = focal.split(",") if isinstance(focal, str) else list(focal)
    out = []
    for item in items:
        if isinstance(item, str):
            contig, colon, pos = item.rpartition(":")
            if not colon or not pos.strip().isdigit():
                raise ValueError(f"focal: expected 'CHR:POS' or (contig, position), got {item!r}")
            out.append((contig, int(pos)))
        else:
            contig, pos = item
            out.append((str(contig), int(pos)))
    if not out:
        raise ValueError("focal: no focal site given")
    return out


@_shared_parameters("ancestral", "execution")
def ehh(store: Any, focal: Focal, *, window: int = 100_000, maf: float = 0.05,
        map: Optional[PathLike] = None, ancestral: str = "ref",
        sample_sets: Optional[SampleSets] = None, regions: Optional[Regions] = None,
        regions_overlap: str = "record", samples: Optional[SampleList] = None,
        force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None, device: str = "auto", threads: Optional[int] = None,
        prefetch: Optional[int] = None, progress: Any = None) -> Result:
    """EHH decay around focal sites (``vczstats ehh``; selscan ``--ehh``).

    Per population, the EHH of the derived and of the ancestral carriers and of all haplotypes
    at every site within ``window`` bp of each focal site. Phased data required.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    focal : str or list
        Focal sites: ``"CHR:POS,..."``, a list of such strings or of (contig, position).
    window : int
        bp on each side of a focal site.
    maf : float
        Leave out flanking sites with a lower minor allele frequency.
    map : path, optional
        Genetic map (plink .map: chrom, id, cM, bp; or a HapMap-style table with the header
        ``Chromosome Position(bp) Rate(cM/Mb) Map(cM)``); default the physical distance.
    sample_sets : optional
        The populations, as in :func:`diversity`.
    regions : optional
        The sites read (default: the windows of the focal sites).
    regions_overlap, samples, force_samples
        The selection, as in :func:`diversity`.
    {shared}

    Returns
    -------
    Result
        chrom, focal_pos, population, pos, distance, variants, gdistance, ehh_derived,
        ehh_ancestral, ehh.

    Examples
    --------
    >>> import vczstats
    >>> e = vczstats.ehh("phased.vcz", "20:1500000", window=50_000)  # doctest: +SKIP
    >>> e.to_pandas()[["distance", "ehh_derived", "ehh_ancestral"]]  # doctest: +SKIP
    """
    sites = _focal_sites(focal)
    if int(window) < 0:
        raise ValueError("window must not be negative")
    if regions is None:  # read only the windows, as the CLI does
        regions = [(c, max(1, p - int(window)), p + int(window)) for c, p in sites]
    _, table, run, query = _run_family(
        "ehh", store,
        lambda q: _core.make_ehh(q, sites, int(window), float(maf),
                                 "" if map is None else os.fspath(map)),
        _selection(regions, regions_overlap, samples, force_samples, sample_sets,
                   ancestral=ancestral, filters=filters),
        _execution(device, threads, prefetch, progress))
    return Result("ehh", table, run, {"populations": list(query.populations)})


def _scan(kind: str, store: Any, options: Dict[str, Any], selection: Dict[str, Any],
          execution: Dict[str, Any], check: Optional[Callable[[Any], None]] = None) -> Result:
    options = {k: v for k, v in options.items() if v is not None}
    if "map" in options:
        options["map"] = os.fspath(options["map"])
    statistic, table, run, query = _run_family(
        kind, store, lambda q: _core.make_selection_scan(q, kind, options), selection, execution,
        check=check)
    result = Result(kind, table, run, {"populations": list(query.populations)})
    #: The per-window summary of the standardised scores (the CLI's --windows-output).
    result.summary = Result(kind + "_windows", statistic.windows(), run)
    return result


_SCAN_RETURNS = """
    Returns
    -------
    Result
        Per site and population (pair): the CLI's columns (frequencies, integrated EHH, the
        unstandardised and standardised score, the left and right integrals). Its ``summary``
        attribute is the per-window summary of the standardised scores (the CLI's
        ``--windows-output``): chrom, start, end, population, n_scores, frac_gt, frac_lt,
        frac_crit, max_score, min_score.
"""


@_shared_parameters("pops_one", "ancestral", "maf_scan", "cutoff", "gap_scale", "max_gap",
                    "max_extend", "trunc_ok", "map", "bins", "min_bin_sites", "crit",
                    "windows_summary", "selection", "execution")
def ihs(store: Any, *, sample_sets: Optional[SampleSets] = None, ancestral: str = "ref",
        maf: float = 0.05, cutoff: float = 0.05, gap_scale: float = 20_000,
        max_gap: float = 200_000, max_extend: float = 1_000_000, trunc_ok: bool = False,
        map: Optional[PathLike] = None, bins: int = 100, min_bin_sites: int = 20,
        crit: float = 2.0, windows: Any = None, regions: Optional[Regions] = None,
        regions_overlap: str = "record", samples: Optional[SampleList] = None,
        force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None, device: str = "auto", threads: Optional[int] = None,
        prefetch: Optional[int] = None, progress: Any = None) -> Result:
    """iHS per site and population (``vczstats ihs``; Voight et al. 2006, selscan's
    definitions): log10 of the integrated EHH of the derived over the ancestral allele,
    standardised in derived allele frequency bins. Phased data required.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    {shared}
    {returns}
    Examples
    --------
    >>> import vczstats
    >>> r = vczstats.ihs("phased.vcz", sample_sets={{"A": names}})    # doctest: +SKIP
    >>> r.summary.to_pandas().head()                                 # doctest: +SKIP
    """
    return _scan("ihs", store, dict(maf=maf, cutoff=cutoff, gap_scale=gap_scale, max_gap=max_gap,
                                    max_extend=max_extend, trunc_ok=trunc_ok, map=map, bins=bins,
                                    min_bin_sites=min_bin_sites, crit=crit),
                 _selection(regions, regions_overlap, samples, force_samples, sample_sets,
                            windows, ancestral, filters=filters),
                 _execution(device, threads, prefetch, progress))


@_shared_parameters("pops_one", "ancestral", "maf_scan", "gap_scale", "max_gap", "max_extend_nsl",
                    "trunc_ok", "bins", "min_bin_sites", "crit", "windows_summary", "selection",
                    "execution")
def nsl(store: Any, *, sample_sets: Optional[SampleSets] = None, ancestral: str = "ref",
        maf: float = 0.05, gap_scale: float = 20_000, max_gap: float = 200_000,
        max_extend_nsl: int = 100, trunc_ok: bool = False, bins: int = 100,
        min_bin_sites: int = 20, crit: float = 2.0, windows: Any = None,
        regions: Optional[Regions] = None, regions_overlap: str = "record",
        samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
        device: str = "auto", threads: Optional[int] = None, prefetch: Optional[int] = None,
        progress: Any = None) -> Result:
    """nSL per site and population (``vczstats nsl``; Ferrer-Admetlla et al. 2014, selscan's
    definitions): as :func:`ihs` with distances counted in sites. Phased data required.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    {shared}
    {returns}
    Examples
    --------
    >>> import vczstats
    >>> r = vczstats.nsl("phased.vcz")                               # doctest: +SKIP
    """
    return _scan("nsl", store, dict(maf=maf, gap_scale=gap_scale, max_gap=max_gap,
                                    max_extend_nsl=max_extend_nsl, trunc_ok=trunc_ok, bins=bins,
                                    min_bin_sites=min_bin_sites, crit=crit),
                 _selection(regions, regions_overlap, samples, force_samples, sample_sets,
                            windows, ancestral, filters=filters),
                 _execution(device, threads, prefetch, progress))


@_shared_parameters("pops_two", "pairs", "ancestral", "cutoff", "gap_scale", "max_gap",
                    "max_extend", "trunc_ok", "map", "min_bin_sites", "crit", "windows_summary",
                    "selection", "execution")
def xpehh(store: Any, *, sample_sets: SampleSets, pairs: PopPairs = None,
          ancestral: str = "ref", cutoff: float = 0.05, gap_scale: float = 20_000,
          max_gap: float = 200_000, max_extend: float = 1_000_000, trunc_ok: bool = False,
          map: Optional[PathLike] = None, min_bin_sites: int = 20, crit: float = 2.0,
          windows: Any = None, regions: Optional[Regions] = None,
          regions_overlap: str = "record", samples: Optional[SampleList] = None,
          force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None, device: str = "auto", threads: Optional[int] = None,
          prefetch: Optional[int] = None, progress: Any = None) -> Result:
    """XP-EHH per site and pair of populations (``vczstats xpehh``; Sabeti et al. 2007,
    selscan's definitions): log10 of population A's integrated EHH over B's, standardised
    genome-wide. Phased data required.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    {shared}
    {returns}
    Examples
    --------
    >>> import vczstats
    >>> r = vczstats.xpehh("phased.vcz", sample_sets=pops,
    ...                    pairs=[("A", "B")])                      # doctest: +SKIP
    """
    return _scan("xpehh", store, dict(cutoff=cutoff, gap_scale=gap_scale, max_gap=max_gap,
                                      max_extend=max_extend, trunc_ok=trunc_ok, map=map,
                                      min_bin_sites=min_bin_sites, crit=crit,
                                      pairs=_pairs_text(pairs)),
                 _selection(regions, regions_overlap, samples, force_samples, sample_sets,
                            windows, ancestral, filters=filters),
                 _execution(device, threads, prefetch, progress), _check_pairs(pairs, "pairs"))


@_shared_parameters("pops_two", "pairs", "ancestral", "cutoff", "gap_scale", "max_gap",
                    "max_extend_nsl", "trunc_ok", "min_bin_sites", "crit", "windows_summary",
                    "selection", "execution")
def xpnsl(store: Any, *, sample_sets: SampleSets, pairs: PopPairs = None,
          ancestral: str = "ref", cutoff: float = 0.05, gap_scale: float = 20_000,
          max_gap: float = 200_000, max_extend_nsl: int = 100, trunc_ok: bool = False,
          min_bin_sites: int = 20, crit: float = 2.0, windows: Any = None,
          regions: Optional[Regions] = None, regions_overlap: str = "record",
          samples: Optional[SampleList] = None, force_samples: bool = False,
        filters: Optional[Mapping[str, Any]] = None,
          device: str = "auto", threads: Optional[int] = None, prefetch: Optional[int] = None,
          progress: Any = None) -> Result:
    """XP-nSL per site and pair of populations (``vczstats xpnsl``; Szpiech et al. 2021,
    selscan's definitions): :func:`xpehh` with distances counted in sites. Phased data
    required.

    Parameters
    ----------
    store : Store or path
        The VCF Zarr store.
    {shared}
    {returns}
    Examples
    --------
    >>> import vczstats
    >>> r = vczstats.xpnsl("phased.vcz", sample_sets=pops)          # doctest: +SKIP
    """
    return _scan("xpnsl", store, dict(cutoff=cutoff, gap_scale=gap_scale, max_gap=max_gap,
                                      max_extend_nsl=max_extend_nsl, trunc_ok=trunc_ok,
                                      min_bin_sites=min_bin_sites, crit=crit,
                                      pairs=_pairs_text(pairs)),
                 _selection(regions, regions_overlap, samples, force_samples, sample_sets,
                            windows, ancestral, filters=filters),
                 _execution(device, threads, prefetch, progress), _check_pairs(pairs, "pairs"))


for _fn in (ihs, nsl, xpehh, xpnsl):
    _fn.__doc__ = _fn.__doc__.replace("{returns}", _SCAN_RETURNS).replace("{{", "{").replace(
        "}}", "}")
del _fn

FAMILIES = ("ld", "ld_decay", "ld_scores", "ld_stats", "prune", "grm", "king", "distance", "pca",
            "haplotypes", "ehh", "ihs", "nsl", "xpehh", "xpnsl")



def _method(name: str):
    """``Store.<name>(...)``: the function with the store as its first argument (and the
    function's signature without it, so help() and Shift-Tab show the keywords)."""
    import functools
    import inspect

    fn = globals()[name]

    @functools.wraps(fn)
    def method(self: Any, *args: Any, **kwargs: Any):
        return fn(self, *args, **kwargs)

    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    method.__signature__ = sig.replace(parameters=[params[0].replace(name="self")] + params[1:])
    return method


def _add_store_methods() -> None:
    from ._store import Store

    for name in FAMILIES:
        setattr(Store, name, _method(name))


_add_store_methods()

__all__ = list(FAMILIES) + ["SampleMatrix", "PcaResult"]
