"""Arguments shared by every statistic: sample sets, samples, regions and windows, turned into
the keyword arguments of ``_core.make_query``."""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._mpi import call as mpi_call

PathLike = Union[str, "os.PathLike[str]"]
#: Samples by name or by index into ``Store.samples``.
SampleList = Union[str, Sequence[Union[str, int]], np.ndarray]
#: ``{population: samples}``, ``{sample: population}``, a list of sample lists, a pandas
#: DataFrame with columns ``sample`` and ``population``, or a populations file (as ``-P``).
SampleSets = Union[Mapping[str, Any], Sequence[Any], PathLike, Any]
#: ``"chr:beg-end,..."``, a list of such strings, or ``(contig, start, end)`` tuples (1-based,
#: inclusive; start/end may be None).
Regions = Union[str, Sequence[Union[str, Tuple[str, Optional[int], Optional[int]]]]]


@dataclass(frozen=True)
class Windows:
    """How sites are grouped into windows (build one with :func:`windows_by_position`,
    :func:`windows_by_variant` or :func:`windows_from_breakpoints`).

    Without windows, a statistic gives one row per region (``regions=``) or per contig.
    ``span`` says where bp windows start and end: ``"data"`` (default, as scikit-allel) from the
    first to the last selected site of each contig (a region's own bounds where it gives them),
    the last window ending at the last site; ``"contig"`` from base 1 to the contig length (as
    vcftools). ``Windows(span="contig")`` alone gives one window per contig over its length.
    """

    size: int = 0
    step: int = 0
    variants: int = 0
    file: Optional[str] = None
    intervals: Optional[Tuple[Tuple[str, int, int], ...]] = None
    span: str = "data"


def windows_by_position(size: int, step: Optional[int] = None, span: str = "data") -> Windows:
    """Windows of ``size`` bp every ``step`` bp (default: ``size``), 1-based inclusive, from the
    first selected site of each contig to its last (``span="data"``, scikit-allel's default; a
    region's own bounds with ``regions=``) or from base 1 to the contig length
    (``span="contig"``, vcftools); the last window ends at the span's end (sgkit's
    ``window_by_position``; the CLI's ``--window-size/--window-step/--window-span``).

    >>> windows_by_position(100_000, 50_000)
    Windows(size=100000, step=50000, variants=0, file=None, intervals=None, span='data')
    """
    if int(size) <= 0 or (step is not None and int(step) <= 0):
        raise ValueError("window size and step must be positive")
    if span not in ("data", "contig"):
        raise ValueError(f"window span must be 'data' or 'contig', not {span!r}")
    return Windows(size=int(size), step=int(step or 0), span=span)


def windows_by_variant(n: int) -> Windows:
    """Windows of ``n`` consecutive sites (sgkit's ``window_by_variant``; the CLI's
    ``--window-variants``). ``windows_by_variant(1)`` gives per-site values."""
    if int(n) <= 0:
        raise ValueError("windows_by_variant: n must be positive")
    return Windows(variants=int(n))


def windows_from_breakpoints(breakpoints: Union[Mapping[str, Sequence[int]], Sequence[int]],
                             contig: Optional[str] = None) -> Windows:
    """Explicit windows between consecutive breakpoints, tskit style: window i covers
    ``[b[i], b[i+1])`` (1-based positions, so ``[b[i], b[i+1] - 1]`` inclusive).

    ``breakpoints`` is a sequence for one contig (``contig`` names it; by default the store's
    only contig) or a mapping ``{contig: breakpoints}``.

    >>> windows_from_breakpoints({"20": [1, 1_000_001, 2_000_001]}).intervals
    (('20', 1, 1000000), ('20', 1000001, 2000000))
    """
    if isinstance(breakpoints, Mapping):
        items = list(breakpoints.items())
    else:
        items = [(contig, breakpoints)]
    intervals = []
    for name, points in items:
        b = np.asarray(points, dtype=np.int64)
        if b.ndim != 1 or len(b) < 2:
            raise ValueError("breakpoints: at least two positions per contig are needed")
        if np.any(np.diff(b) <= 0) or b[0] < 1:
            raise ValueError("breakpoints must be increasing positions >= 1")
        intervals += [(name, int(s), int(e) - 1) for s, e in zip(b[:-1], b[1:])]
    return Windows(intervals=tuple(intervals))


def windows_from_intervals(intervals: Iterable[Tuple[str, int, int]]) -> Windows:
    """Explicit windows ``(contig, start, end)``, 1-based inclusive; they may overlap (the CLI's
    ``--windows-file``)."""
    return Windows(intervals=tuple((str(c), int(s), int(e)) for c, s, e in intervals))


def _to_windows(windows: Any) -> Optional[Windows]:
    if windows is None or isinstance(windows, Windows):
        return windows
    if isinstance(windows, (int, np.integer)):
        return windows_by_position(int(windows))
    if isinstance(windows, tuple) and len(windows) == 2 and all(
            isinstance(w, (int, np.integer)) for w in windows):
        return windows_by_position(int(windows[0]), int(windows[1]))
    if isinstance(windows, (str, os.PathLike)):
        return Windows(file=os.fspath(windows))
    if isinstance(windows, Mapping) or isinstance(windows, (list, np.ndarray)):
        return windows_from_breakpoints(windows)
    raise TypeError(
        "windows: None, a bp size, (size, step), a Windows object, breakpoints or a BED file, "
        f"not {type(windows).__name__}")


class QueryArgs:
    """The keyword arguments of ``_core.make_query`` for one call, and the temporary files
    (explicit windows) that must live as long as the query is built."""

    def __init__(self, store: "Any", *, regions: Optional[Regions] = None,
                 regions_overlap: str = "record", samples: Optional[SampleList] = None,
                 sample_sets: Optional[SampleSets] = None, force_samples: bool = False,
                 pop_column: str = "", windows: Any = None, ancestral: str = "ref",
                 accessible: Optional[PathLike] = None, max_unit_variants: int = 0,
                 filters: Optional[Mapping[str, Any]] = None):
        self.store = store
        self.kwargs: Dict[str, Any] = {"store": store.path}
        self._tmp: Optional[tempfile.TemporaryDirectory] = None
        self.kwargs["regions"] = _regions(regions)
        self.kwargs["regions_overlap"] = regions_overlap
        if samples is not None:
            self.kwargs["samples"] = _sample_names(store, samples, "samples")
            if not force_samples:
                _check_known(store, self.kwargs["samples"], "samples")
        self.kwargs["force_samples"] = bool(force_samples)
        if pop_column and not isinstance(sample_sets, (str, os.PathLike)):
            raise ValueError("pop_column names a column of a populations file: give sample_sets "
                             "as the file's path")
        if sample_sets is not None:
            if isinstance(sample_sets, (str, os.PathLike)):
                self.kwargs["pops_file"] = os.fspath(sample_sets)
                self.kwargs["pop_column"] = pop_column
            else:
                self.kwargs["pops"] = _population_entries(store, sample_sets)
                _check_entries(store, self.kwargs["pops"], force_samples)
        w = _to_windows(windows)
        if w is not None:
            self.kwargs.update(window_size=w.size, window_step=w.step, window_variants=w.variants,
                               window_span=w.span)
            if w.file:
                self.kwargs["windows_file"] = w.file
            if w.intervals:
                self.kwargs["windows_file"] = self._intervals_file(w.intervals, regions)
        self.kwargs["ancestral"] = os.fspath(ancestral)
        if accessible is not None:
            self.kwargs["accessible"] = os.fspath(accessible)
        self.kwargs["max_unit_variants"] = int(max_unit_variants)
        # Site filters, keyed as the CLI's options (docs/filters.md): {"maf": 0.01, ...}.
        if filters:
            self.kwargs["filters"] = dict(filters)

    def _intervals_file(self, intervals: Sequence[Tuple[Optional[str], int, int]],
                        regions: Optional[Regions]) -> str:
        # Breakpoints without a contig: the store's only contig, or the regions' only one.
        contigs = self.store.contigs
        named = {r.split(":")[0] for r in _regions(regions).split(",") if r}
        if len(named) == 1:
            contigs = sorted(named)
        self._tmp = tempfile.TemporaryDirectory(prefix="vczstats-windows-")
        path = os.path.join(self._tmp.name, "windows.tsv")  # CHROM BEG END, 1-based inclusive
        with open(path, "w") as f:
            for contig, start, end in intervals:
                if contig is None:
                    if len(contigs) != 1:
                        raise ValueError("breakpoints: name the contig ({contig: breakpoints}) or "
                                         "give regions on one contig (the store has "
                                         f"{len(contigs)} contigs)")
                    contig = contigs[0]
                f.write(f"{contig}\t{start}\t{end}\n")
        return path

    def query(self) -> "_core.Query":
        try:
            return _core.make_query(**self.kwargs)
        except _core.UsageError as e:
            raise _core.UsageError(python_terms(str(e))) from None
        finally:
            if self._tmp is not None:
                self._tmp.cleanup()


def _regions(regions: Optional[Regions]) -> str:
    if regions is None:
        return ""
    if isinstance(regions, str):
        return regions
    parts = []
    for r in regions:
        if isinstance(r, str):
            parts.append(r)
            continue
        contig, start, end = (tuple(r) + (None, None))[:3]
        if start is None and end is None:
            parts.append(str(contig))
        else:
            begin = 1 if start is None else start
            parts.append(f"{contig}:{begin}-{'' if end is None else end}")
    return ",".join(parts)


def _sample_names(store: Any, samples: Any, what: str) -> List[str]:
    """Names of samples given by name or by index into store.samples."""
    if isinstance(samples, str):
        return [s for s in samples.split(",") if s]
    names = store.samples
    out = []
    for s in np.asarray(samples, dtype=object).ravel():
        if isinstance(s, (int, np.integer)):
            if not 0 <= int(s) < len(names):
                raise ValueError(f"{what}: sample index {int(s)} is outside 0..{len(names) - 1}")
            out.append(names[int(s)])
        else:
            out.append(str(s))
    if not out:
        raise ValueError(f"{what}: no sample named")
    return out


def _population_entries(store: Any, sets: Any) -> List[Tuple[str, str]]:
    """(sample, population) pairs, populations in the order given."""
    try:  # a pandas DataFrame with sample and population columns
        import pandas as pd

        if isinstance(sets, pd.DataFrame):
            return [(str(s), str(p)) for s, p in zip(sets["sample"], sets["population"])]
        if isinstance(sets, pd.Series):
            return [(str(s), str(p)) for s, p in sets.items()]
    except ImportError:
        pass
    if isinstance(sets, Mapping):
        values = list(sets.values())
        if values and all(isinstance(v, str) for v in values):  # {sample: population}
            return [(str(s), p) for s, p in sets.items()]
        return [(name, str(pop)) for pop, members in sets.items()
                for name in _sample_names(store, members, f"sample_sets[{pop!r}]")]
    entries = []
    for k, members in enumerate(sets):
        entries += [(name, str(k)) for name in _sample_names(store, members, f"sample_sets[{k}]")]
    return entries


#: The CLI's options that the library's messages quote, and the Python arguments they are.
_CLI_TERMS = (
    ("(use --force-samples to ignore unknown samples)", "(force_samples=True ignores unknown "
     "samples)"),
    ("(-P/--pops FILE)", "(give sample_sets)"), ("the -P populations", "the sample_sets"),
    ("(give -P)", "(give sample_sets)"), ("-P/--pops", "sample_sets"), ("--pops", "sample_sets"),
    ("-r/--regions", "regions"), ("-R/--regions-file", "regions (a file)"),
    ("-s/--samples", "samples"), ("--force-samples", "force_samples"),
    ("--window-size", "windows"), ("--window-step", "windows (size, step)"),
    ("--window-variants", "windows_by_variant()"), ("--windows-file", "windows (a file)"),
    ("--ancestral", "ancestral"), ("--accessible", "accessible"), ("--pairs", "pairs"),
    ("--joint:", "joint:"), ("--f2:", "f2:"), ("--f3:", "f3:"), ("--d:", "d:"),
)


@contextlib.contextmanager
def python_errors() -> Iterator[None]:
    """Re-raise the library's usage errors with the CLI's option names in Python terms."""
    try:
        yield
    except _core.UsageError as e:
        raise _core.UsageError(python_terms(str(e))) from None


def python_terms(message: str) -> str:
    """A library message with the CLI's option names replaced by the Python arguments."""
    for cli, python in _CLI_TERMS:
        message = message.replace(cli, python)
    return message


def _check_known(store: Any, names: Sequence[str], what: str) -> None:
    """Every name (but a leading '^name', which excludes) is a sample of the store."""
    known = set(map(str, store.samples))
    for k, name in enumerate(names):
        if k == 0 and name.startswith("^"):
            name = name[1:]
        if name not in known:
            raise _core.UsageError(f"{what}: {name!r} is not a sample of {store.path} "
                                   "(force_samples=True ignores unknown samples)")


def _check_entries(store: Any, entries: Sequence[Tuple[str, str]], force_samples: bool) -> None:
    """Populations given in memory: known samples (unless force_samples), each in one set."""
    known = set(map(str, store.samples))
    seen: Dict[str, str] = {}
    for sample, pop in entries:
        if sample not in known and not force_samples:
            raise _core.UsageError(f"sample_sets[{pop!r}]: {sample!r} is not a sample of "
                                   f"{store.path} (force_samples=True ignores unknown samples)")
        if sample in seen:
            raise _core.UsageError(f"sample_sets: sample {sample!r} is listed twice "
                                   f"(in {seen[sample]!r} and in {pop!r})")
        seen[sample] = pop


def _keyword(name: str, default: Any, annotation: Any) -> "inspect.Parameter":
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=annotation)


#: The selection and execution keywords every statistic function takes (QueryArgs and compute).
_COMMON = (
    ("regions", None, "Optional[Regions]"), ("regions_overlap", "record", "str"),
    ("samples", None, "Optional[SampleList]"), ("sample_sets", None, "Optional[SampleSets]"),
    ("force_samples", False, "bool"), ("pop_column", "", "str"), ("ancestral", "ref", "str"),
    ("max_unit_variants", 0, "int"), ("device", "auto", "str"),
    ("threads", None, "Optional[int]"), ("prefetch", None, "Optional[int]"),
    ("progress", None, "Any"), ("filters", None, "Optional[Mapping[str, Any]]"),
)
_WINDOWED = (("windows", None, "Any"), ("accessible", None, "Optional[PathLike]"))


def keyword_signature(windowed: bool = False):
    """A decorator for ``fn(store, ..., **kwargs)``: its signature gets the shared keywords
    instead of ``**kwargs`` (help(), Shift-Tab and the API docs show them), and an unknown
    keyword raises TypeError naming the function and the keyword before anything is read."""

    def decorate(fn):
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.kind != inspect.Parameter.VAR_KEYWORD]
        names = {p.name for p in own}
        extra = [_keyword(*k) for k in (_WINDOWED if windowed else ()) + _COMMON
                 if k[0] not in names]
        full = sig.replace(parameters=own + extra)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any):
            try:
                full.bind(*args, **kwargs)
            except TypeError as e:  # e.g. "got an unexpected keyword argument 'sample_set'"
                raise TypeError(f"{fn.__name__}() {e}") from None
            return mpi_call(fn, *args, **kwargs)  # under MPI: None on ranks but 0

        del wrapper.__wrapped__  # inspect shows the full signature, not fn's
        wrapper.__signature__ = full
        return wrapper

    return decorate
