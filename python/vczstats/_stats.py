"""One function per statistic family, over the library's statistic objects and compute() (the
library's Runner: count filters are applied as the CLI applies them).

Every function takes a store (a :class:`~vczstats.Store` or a path) and keyword arguments:

- selection: ``regions`` (``"chr:beg-end,..."`` or ``(contig, start, end)`` tuples, 1-based
  inclusive), ``regions_overlap`` (``"record"``, as ``bcftools -r``, or ``"pos"``),
  ``samples`` (names or indices), ``sample_sets`` (populations: ``{name: samples}``,
  ``{sample: name}``, a list of sample lists, a DataFrame with ``sample`` and ``population``
  columns, or a populations file as the CLI's ``-P``), ``force_samples``;
- site filters: ``filters`` (``{"maf": 0.05, "geno": 0.1, "hwe": 1e-6, ...}``, keyed as the
  CLI's options; docs/filters.md). The count filters among them are decided as the CLI decides
  them: inside the statistic's own pass for the per-site statistics (site tables, sfs, the
  windowed statistics, fstats: the store is read once), by a counting pass first for the others;
- windowed statistics: ``windows`` (None: per region or contig; an int: bp windows;
  ``(size, step)``; :func:`~vczstats.windows_by_variant`; breakpoints; a BED file),
  ``ancestral`` (``"ref"``, ``"aa"`` or an ancestral FASTA), ``accessible`` (a BED mask);
- execution: ``device`` (``"cpu"``, ``"gpu"``, ``"gpu:N"``, several GPUs sharing the run as
  ``"gpu:0,1"`` or ``"gpu:all"``, ``"auto"``), ``threads``,
  ``prefetch``, ``progress`` (None: a bar on runs longer than 2 s; True; False; or a callable
  ``fn(done_units, total_units, variants)``).

Results are :class:`~vczstats.Result` tables with the CLI's columns. The GIL is released while
the genotypes are read and reduced. Definitions: tests/tools/POPGEN.md of the repository.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._args import QueryArgs, keyword_signature, python_errors
from ._mpi import _OtherRank, rank0
from ._progress import Progress
from ._result import Result

Pairs = Union[None, str, Sequence[Tuple[str, str]]]
WINDOWED = ("diversity", "divergence", "scan")


def _store_of(store: Any):
    from ._store import Store

    if isinstance(store, Store):
        return store
    if isinstance(store, (str, os.PathLike)):
        return Store(store)
    raise TypeError(f"expected a vczstats.Store or a path, not {type(store).__name__}")


def _pairs(pairs: Pairs) -> str:
    if pairs is None:
        return ""
    if isinstance(pairs, str):
        return pairs
    return ";".join(f"{a},{b}" for a, b in pairs)


def _names(names: Union[None, str, Sequence[str]], argument: str = "") -> str:
    """Population names as the library's comma-separated list: "A,B", ("A", "B"), or one
    such tuple in a list ([("A", "B")], as divergence's pairs are given)."""
    if names is None:
        return ""
    if isinstance(names, str):
        return names
    names = list(names)
    if names and all(isinstance(n, (tuple, list)) for n in names):
        if len(names) != 1:
            raise ValueError(f"{argument or 'populations'}: one statistic per call, e.g. "
                             f"{tuple(names[0])!r}, not {len(names)}")
        names = list(names[0])
    return ",".join(map(str, names))


def _run(kind: str, store: Any, make: Callable[[Any], Any], *, device: str = "auto",
         threads: Optional[int] = None, prefetch: Optional[int] = None, progress: Any = None,
         site_fields: bool = False, **selection: Any) -> Result:
    """Build the query, compute the statistic make(query) builds (make is called again when a
    counting pass filtered the query first), return its table as a Result."""
    if kind not in WINDOWED:
        for option in ("windows", "accessible"):
            if selection.get(option) is not None:
                raise TypeError(f"{kind.split(':')[-1]} takes no {option}= (windowed statistics: "
                                "diversity, divergence, window_stats)")
    s = _store_of(store)
    args = QueryArgs(s, **selection)
    query = args.query()
    with python_errors():
        with Progress(progress, desc=f"vczstats {kind.split(':')[-1]}") as fn:
            table, run, _ = _core.compute(query, make, threads=int(threads or 0),
                                          prefetch=int(prefetch or 0), device=device,
                                          progress=fn, site_fields=site_fields)
    if table is None:  # an MPI rank other than 0: its share went to rank 0
        raise _OtherRank()
    run["warnings"] = list(query.warnings) + list(run["warnings"])
    for w in run["warnings"]:  # e.g. regions on contigs the store lacks
        warnings.warn(w, stacklevel=3)
    return Result(kind, table, run, {"populations": list(query.populations)})


@keyword_signature()
def afdist(store: Any, *, bins: int = 10, method: str = "bcftools", **kwargs: Any) -> Result:
    """The distribution of genotype probabilities given the allele frequency (``vczstats
    afdist``; ``method="bcftools"`` reproduces ``bcftools +fill-tags | +af-dist``,
    ``"zarr-afdist"`` the VCF Zarr publication's definition). Columns: start, stop, prob_dist.

    >>> r = vczstats.afdist("1kg_chr20.vcz", bins=10)                  # doctest: +SKIP
    >>> r["prob_dist"].sum()                                           # doctest: +SKIP
    """
    return _run("afdist", store, lambda q: _core.make_afdist(q, method, int(bins)), **kwargs)


def _site_table(kind: str, kind_name: str, doc: str):
    def fn(store: Any, **kwargs: Any) -> Result:
        return _run("site:" + kind, store, lambda q: _core.make_site_table(q, kind),
                    site_fields=True, **kwargs)

    fn.__doc__ = doc
    fn.__name__ = fn.__qualname__ = kind_name
    return keyword_signature()(fn)


allele_frequencies = _site_table("freq", "allele_frequencies",
                      """Allele counts and frequencies per site and
population (``vczstats freq``, plink2 ``--freq counts``). Columns: variant, contig, pos, id, ref,
alt, population, alt_cts, obs_ct, alt_freqs (list columns for multi-allelic sites).

>>> f = vczstats.allele_frequencies(store, sample_sets=pops)  # doctest: +SKIP
>>> f.to_xarray().cohort_allele_frequency                       # doctest: +SKIP
""")

genotype_counts = _site_table("geno-counts", "genotype_counts",
                      """Genotype counts per site and population
(``vczstats geno-counts``, plink2 ``--geno-counts``): hom_ref_ct, het_ref_alt_ct,
two_alt_geno_ct, hom_alt_ct, het_alt_ct, missing_ct.""")

hardy_weinberg = _site_table("hardy", "hardy_weinberg",
                      """Hardy-Weinberg equilibrium of REF against the other
alleles per site and population (``vczstats hardy``, the REF row of plink2 ``--hardy``):
hom_ref_ct, het_ref_ct, two_alt_ct, o_het, e_het, p_hwe (exact test), f.""")

variant_missingness = _site_table("missing", "variant_missingness",
                      """Missing genotypes per site and population
(``vczstats missing``, plink2 ``--missing`` .vmiss): missing_ct, obs_ct, f_miss.""")


@keyword_signature()
def sample_stats(store: Any, **kwargs: Any) -> Result:
    """Per-sample missingness and inbreeding coefficient (``vczstats sample-stats``, plink2
    ``--missing`` .smiss and ``--het``): sample, population, missing_ct, obs_ct, f_miss, o_hom,
    e_hom, het_obs_ct, f."""
    return _run("sample_stats", store, _core.make_sample_stats, **kwargs)


@keyword_signature(windowed=True)
def diversity(store: Any, **kwargs: Any) -> Result:
    """Diversity per window and population (``vczstats diversity``): n_sites, n_seg, pi_sum,
    pi_per_bp, theta_w, theta_w_per_bp, n_max, tajima_d, singletons, and the unfolded
    statistics polarised by ``ancestral`` (theta_pi_u, theta_h, theta_l, fay_wu_h,
    fay_wu_h_norm, zeng_e).

    >>> d = vczstats.diversity("1kg_chr20.vcz", windows=(100_000, 50_000))  # doctest: +SKIP
    >>> d.to_xarray()["stat_Tajimas_D"]                                     # doctest: +SKIP
    """
    return _run("diversity", store, _core.make_diversity, **kwargs)


@keyword_signature(windowed=True)
def divergence(store: Any, *, pairs: Pairs = None, **kwargs: Any) -> Result:
    """Divergence per window and pair of populations (``vczstats divergence``; ``pairs``:
    ``[("A", "B"), ...]`` or ``"A,B;C,D"``, default every pair): dxy, da, Hudson Fst,
    Weir & Cockerham Fst, Nei's Gst. Needs ``sample_sets`` with two populations or more.

    >>> dv = vczstats.divergence(store, sample_sets=pops, windows=50_000)  # doctest: +SKIP
    >>> dv.to_xarray().stat_Fst.sel(cohorts_0="A", cohorts_1="B")          # doctest: +SKIP
    """
    return _run("divergence", store, lambda q: _core.make_divergence(q, _pairs(pairs)),
                **kwargs)


@keyword_signature(windowed=True)
def window_stats(store: Any, statistics: Union[str, Sequence[str]] = (
        "pi", "theta_w", "tajima_d", "dxy", "fst_hudson"), *, pairs: Pairs = None,
        pbs: Union[None, str, Sequence[str]] = None, **kwargs: Any) -> Result:
    """Several windowed statistics in one pass (``vczstats stats``), long format: chrom, start,
    end, statistic, populations, value. Statistics: see :func:`scan_statistics`; ``pbs``
    names the three populations A, B, C of the population branch statistic of A."""
    names = [s for s in (statistics.split(",") if isinstance(statistics, str) else statistics)]
    return _run("scan", store,
                lambda q: _core.make_scan(q, list(names), _pairs(pairs), _names(pbs)), **kwargs)


def scan_statistics() -> Dict[str, str]:
    """The statistics :func:`window_stats` knows, with what they are."""
    return {name: help for name, _pairwise, help in _core.scan_statistics()}


@keyword_signature()
def sfs(store: Any, *, folded: bool = False, scaled: bool = False,
        joint: Union[None, str, Sequence[str]] = None,
        project: Union[None, int, str, Dict[str, int]] = None, project_preview: bool = False,
        memory: int = 1024, **kwargs: Any) -> Result:
    """Site frequency spectra per population (``vczstats sfs``): population, n, derived (or
    folded), count[, scaled]; ``joint=("A", "B")`` gives the 2-D spectrum of two populations.
    Biallelic sites where every member has a complete call; polarised by ``ancestral``.

    ``project=N`` (or ``{"A": N, "B": M}``, or ``"A=N,B=M"``): project every site with at least
    N called alleles to N by hypergeometric sampling (``sfs --project``; counts are floats;
    ``joint`` takes 1 to 4 populations; sites left out are counted in ``result.note``).
    ``project_preview=True``: population, n, sites, segregating_sites (``--project-preview``).
    :func:`sfs_array` gives the spectrum as dadi and moments hold it.

    >>> s = vczstats.sfs(store, folded=True)                          # doctest: +SKIP
    >>> vczstats.plot.sfs(s)                                          # doctest: +SKIP
    >>> p = vczstats.sfs(store, project=20, joint=("A", "B"))          # doctest: +SKIP
    """
    return _run("sfs", store,
                lambda q: _core.make_sfs(q, bool(folded), bool(scaled), _names(joint),
                                         _projection(project), bool(project_preview),
                                         int(memory)), **kwargs)


def _projection(project: Union[None, int, str, Dict[str, int]]) -> str:
    if project is None:
        return ""
    if isinstance(project, dict):
        return ",".join(f"{k}={int(v)}" for k, v in project.items())
    return str(project)


def sfs_array(store: Any, *, project: Union[int, str, Dict[str, int]],
              joint: Union[None, str, Sequence[str]] = None, folded: bool = False,
              **kwargs: Any) -> Tuple[Any, List[str]]:
    """The projected spectrum as a dense ``numpy.ma.MaskedArray`` of shape (N1+1, ..., NK+1)
    in the order of ``joint`` (or of the one population of the query), and the population
    names: the array of ``vczstats sfs --project ... --format fs``. Masked: the corners
    (no derived allele, all derived); ``folded=True`` folds as ``dadi.Spectrum.fold()`` (an
    entry past half the alleles moves onto its mirror image and is masked; one at exactly
    half is averaged with its mirror image). ``dadi.Spectrum(a, pop_ids=names)`` or
    ``moments.Spectrum(a, pop_ids=names)`` take it.

    >>> a, pops = vczstats.sfs_array(store, project=20, joint=("A", "B"))  # doctest: +SKIP
    """
    r = sfs(store, project=project, joint=joint, **kwargs)
    if r is None:  # an MPI rank other than 0
        return None
    if "pop1" in r.columns:
        k = sum(1 for c in r.columns if c.startswith("derived"))
        names = [str(r[f"pop{i + 1}"][0]) for i in range(k)]
        sizes = [int(r[f"n{i + 1}"][0]) for i in range(k)]
        index = tuple(r[f"derived{i + 1}"] for i in range(k))
    else:
        pops = r["population"]
        if len(set(pops)) != 1:
            raise ValueError("sfs_array: one spectrum: give joint=(...) or select one population")
        names, sizes, index = [str(pops[0])], [int(r["n"][0])], (r["derived"],)
    data = np.zeros([n + 1 for n in sizes])
    data[index] = r["count"]
    mask = np.zeros(data.shape, dtype=bool)
    mask.flat[0] = mask.flat[-1] = True
    if folded:  # dadi's Spectrum.fold, step by step
        flip = tuple(slice(None, None, -1) for _ in sizes)
        total = np.indices(data.shape).sum(axis=0)
        samples = sum(sizes)
        past = total > samples // 2
        out = data + np.where(past, data, 0)[flip]
        out[past] = 0
        middle = np.where(2 * total == samples, data, 0)
        out += -0.5 * middle + 0.5 * middle[flip]
        mask = mask | mask[flip] | past
        data = out
    return np.ma.masked_array(data, mask=mask), names


@keyword_signature()
def fstats(store: Any, *, f2: Union[None, str, Sequence[str]] = None,
           f3: Union[None, str, Sequence[str]] = None,
           d: Union[None, str, Sequence[str]] = None, blocks: int = 0,
           **kwargs: Any) -> Result:
    """Patterson's f2(A,B), f3(C;A,B) or D(A,B;C,D) (``vczstats fstats``; exactly one), with a
    block-jackknife standard error over ``blocks`` biallelic sites per block: stat, pops,
    n_sites, n_defined, num_sum, den_sum, estimate, n_blocks, se, z."""
    return _run("fstats", store,
                lambda q: _core.make_fstats(q, _names(f2, "f2"), _names(f3, "f3"),
                                            _names(d, "d"), int(blocks)),
                **kwargs)


__all__: List[str] = [
    "afdist", "allele_frequencies", "genotype_counts", "hardy_weinberg", "variant_missingness",
    "sample_stats", "diversity", "divergence", "window_stats", "scan_statistics", "sfs", "sfs_array",
    "fstats",
]
