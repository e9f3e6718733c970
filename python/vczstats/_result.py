"""Results of statistics: named numpy columns, with pandas and xarray views.

Column names are those of the CLI's TSV header. ``to_xarray()`` reshapes windowed results to
sgkit's dimensions (``windows``, ``cohorts``, ``cohorts_0``/``cohorts_1``, ``variants``,
``samples``) and names (``stat_diversity``, ``stat_divergence``, ``stat_Fst``,
``stat_Tajimas_D``, ``stat_watterson_theta``, ``stat_pbs``, ``variant_hwe_p_value``, ...).
Window coordinates are positions: ``window_start``/``window_end`` are 1-based inclusive bases
(sgkit's ``window_start``/``window_stop`` are variant indices).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional

import numpy as np

# sgkit's names for our columns (and the scan's statistics); others become stat_<name>.
STAT_NAMES = {
    "pi_sum": "stat_diversity",
    "pi": "stat_diversity",
    "theta_w": "stat_watterson_theta",
    "tajima_d": "stat_Tajimas_D",
    "dxy_sum": "stat_divergence",
    "dxy": "stat_divergence",
    "hudson_fst": "stat_Fst",
    "fst_hudson": "stat_Fst",
    "pbs": "stat_pbs",
}
WINDOW_KEYS = ("chrom", "start", "end")


class Column:
    """One column of a result table as the core returns it."""

    def __init__(self, d: Dict[str, Any]):
        self.name: str = d["name"]
        self.kind: str = d["kind"]
        self.values: np.ndarray = d["values"]
        self.labels: Optional[List[str]] = d["labels"]
        self.offsets: Optional[np.ndarray] = d["offsets"]
        self.single_precision: bool = d["single_precision"]

    def __len__(self) -> int:
        if self.offsets is not None:
            return len(self.offsets) - 1
        return len(self.values)

    def array(self) -> np.ndarray:
        """Labels as strings; lists padded to a 2-D array (-1 / NaN padding)."""
        if self.kind == "label":
            labels = np.asarray(self.labels if self.labels else [], dtype=object)
            return labels[self.values] if len(self.values) else np.array([], dtype=object)
        if self.offsets is not None:
            lengths = np.diff(self.offsets)
            width = int(lengths.max()) if len(lengths) else 0
            fill = -1 if self.kind == "int_list" else np.nan
            out = np.full((len(lengths), width), fill, dtype=self.values.dtype)
            for r, (a, b) in enumerate(zip(self.offsets[:-1], self.offsets[1:])):
                out[r, : b - a] = self.values[a:b]
            return out
        return self.values

    def lists(self) -> List[np.ndarray]:
        """A list column as one array per row."""
        assert self.offsets is not None
        return [self.values[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:])]


class Result:
    """The table a statistic returns: ``result["pi_sum"]`` is a numpy array, ``result.columns``
    the names, ``result.to_pandas()`` a DataFrame, ``result.to_xarray()`` an sgkit-style
    Dataset. ``result.note`` says how sites were polarised and windows counted; ``result.run``
    what the run did (device, timings).

    >>> import vczstats
    >>> store = vczstats.open("1kg_chr20.vcz")                       # doctest: +SKIP
    >>> d = vczstats.diversity(store, windows=100_000)                # doctest: +SKIP
    >>> d["pi_per_bp"][:3], d.windows.head(3)                          # doctest: +SKIP
    >>> d.to_xarray().stat_Tajimas_D                                   # doctest: +SKIP
    """

    def __init__(self, kind: str, table: Dict[str, Any], run: Optional[Dict[str, Any]] = None,
                 options: Optional[Dict[str, Any]] = None):
        self.kind = kind
        self.note: str = table.get("note", "")
        self.run: Dict[str, Any] = run or {}
        self.options: Dict[str, Any] = options or {}
        self._columns: Dict[str, Column] = {}
        for c in table["columns"]:
            self._columns[c["name"]] = Column(c)
        # Per-site tables: ID, REF and ALT after pos.
        self._fields = {k: np.asarray(table[k], dtype=object) for k in ("id", "ref", "alt")
                        if k in table}

    # ---- columns ----------------------------------------------------------------------------
    @property
    def columns(self) -> List[str]:
        """Column names, in the CLI's order."""
        names = list(self._columns)
        if self._fields and "pos" in names:
            i = names.index("pos") + 1
            names[i:i] = list(self._fields)
        return names

    def __len__(self) -> int:
        return len(next(iter(self._columns.values()))) if self._columns else 0

    def __contains__(self, name: str) -> bool:
        return name in self._columns or name in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self._fields:
            return self._fields[name]
        if name not in self._columns:
            raise KeyError(f"{name!r} is not a column of this {self.kind} result "
                           f"(columns: {', '.join(self.columns)})")
        return self._columns[name].array()

    def column(self, name: str) -> Column:
        """The raw column (kind, values, labels, list offsets)."""
        return self._columns[name]

    def to_dict(self) -> Dict[str, np.ndarray]:
        """Every column as a numpy array."""
        return {name: self[name] for name in self.columns}

    @property
    def windows(self):
        """The windows of a windowed result (a DataFrame of chrom, start, end), in order."""
        if not all(k in self._columns for k in WINDOW_KEYS):
            raise AttributeError(f"a {self.kind} result has no windows")
        df = self.to_pandas()[list(WINDOW_KEYS)]
        return df.drop_duplicates().reset_index(drop=True)

    # ---- pandas -----------------------------------------------------------------------------
    def to_pandas(self):
        """A pandas DataFrame with the CLI's columns; labels are categoricals, list columns
        hold one numpy array per row."""
        import pandas as pd

        data = {}
        for name in self.columns:
            if name in self._fields:
                data[name] = self._fields[name]
                continue
            c = self._columns[name]
            if c.kind == "label":
                data[name] = pd.Categorical.from_codes(c.values, categories=c.labels or [])
            elif c.offsets is not None:
                data[name] = pd.Series(c.lists(), dtype=object)
            else:
                data[name] = c.values
        return pd.DataFrame(data)

    to_dataframe = to_pandas

    # ---- xarray -----------------------------------------------------------------------------
    def to_xarray(self):
        """An xarray Dataset with sgkit's names and dimensions (see the module docstring)."""
        import xarray as xr

        builder = {
            "diversity": self._xr_per_population,
            "divergence": self._xr_divergence,
            "scan": self._xr_scan,
            "sfs": self._xr_sfs,
            "afdist": self._xr_afdist,
            "sample_stats": self._xr_samples,
        }.get(self.kind)
        if self.kind.startswith("site:"):
            builder = self._xr_sites
        if builder is None:
            ds = xr.Dataset.from_dataframe(self.to_pandas())
            ds = ds.rename({"index": self.kind}) if "index" in ds.dims else ds
        else:
            ds = builder(xr)
        ds.attrs.update(kind=self.kind, note=self.note)
        return ds

    def _window_index(self):
        """(index of each row's window, window coordinates) in order of first appearance."""
        chrom, start, end = (self[k] for k in WINDOW_KEYS)
        keys = list(zip(chrom, start, end))
        order: Dict[Any, int] = {}
        idx = np.array([order.setdefault(k, len(order)) for k in keys], dtype=np.int64)
        w = list(order)
        coords = {
            "window_contig": ("windows", np.array([k[0] for k in w], dtype=object)),
            "window_start": ("windows", np.array([k[1] for k in w], dtype=np.int64)),
            "window_end": ("windows", np.array([k[2] for k in w], dtype=np.int64)),
        }
        return idx, len(w), coords

    def _value_columns(self, skip) -> List[str]:
        return [n for n, c in self._columns.items()
                if n not in skip and c.kind in ("int", "float")]

    def _xr_per_population(self, xr):
        win, nw, coords = self._window_index()
        pop = self._columns["population"]
        cohorts = pop.labels or []
        data = {}
        for name in self._value_columns(set(WINDOW_KEYS) | {"population"}):
            a = np.full((nw, len(cohorts)), np.nan)
            a[win, pop.values] = self[name]
            data[STAT_NAMES.get(name, "stat_" + name)] = (("windows", "cohorts"), a)
        coords["cohorts"] = ("cohorts", np.array(cohorts, dtype=object))
        return xr.Dataset(data, coords=coords)

    def _xr_divergence(self, xr):
        win, nw, coords = self._window_index()
        p1, p2 = self._columns["pop1"], self._columns["pop2"]
        cohorts = p1.labels or []
        k = len(cohorts)
        data = {}
        swap = {"pi1_sum": "pi2_sum", "pi2_sum": "pi1_sum"}
        for name in self._value_columns(set(WINDOW_KEYS) | {"pop1", "pop2"}):
            a = np.full((nw, k, k), np.nan)
            a[win, p1.values, p2.values] = self[name]
            a[win, p2.values, p1.values] = self[swap.get(name, name)]
            data[STAT_NAMES.get(name, "stat_" + name)] = (
                ("windows", "cohorts_0", "cohorts_1"), a)
        names = np.array(cohorts, dtype=object)
        coords.update(cohorts_0=("cohorts_0", names), cohorts_1=("cohorts_1", names))
        return xr.Dataset(data, coords=coords)

    def _xr_scan(self, xr):
        win, nw, coords = self._window_index()
        stat = self["statistic"]
        pops = self["populations"]
        value = self["value"]
        names: List[str] = []
        for p in pops:
            for n in str(p).split(","):
                if n not in names:
                    names.append(n)
        index = {n: i for i, n in enumerate(names)}
        data = {}
        for s in dict.fromkeys(stat):
            rows = np.flatnonzero(stat == s)
            arity = len(str(pops[rows[0]]).split(","))
            dims = ("windows",) + (("cohorts",) if arity == 1 else
                                   tuple(f"cohorts_{i}" for i in range(arity)))
            a = np.full((nw,) + (len(names),) * arity, np.nan)
            for r in rows:
                at = tuple(index[n] for n in str(pops[r]).split(","))
                a[(win[r],) + at] = value[r]
                if arity == 2 and s != "pbs":  # pairwise statistics are symmetric
                    a[(win[r],) + at[::-1]] = value[r]
            data[STAT_NAMES.get(s, "stat_" + s)] = (dims, a)
        arr = np.array(names, dtype=object)
        coords.update({d: (d, arr) for d in ("cohorts", "cohorts_0", "cohorts_1", "cohorts_2")
                       if any(d in v[0] for v in data.values())})
        return xr.Dataset(data, coords=coords)

    def _xr_sfs(self, xr):
        if "pop1" in self._columns:  # joint spectrum
            c1, c2 = [n for n in self._columns if n.endswith("1") and n not in ("pop1", "n1")], \
                [n for n in self._columns if n.endswith("2") and n not in ("pop2", "n2")]
            i, j = self[c1[0]], self[c2[0]]
            a = np.zeros((int(i.max()) + 1 if len(i) else 0, int(j.max()) + 1 if len(j) else 0),
                         dtype=np.int64)
            a[i, j] = self["count"]
            return xr.Dataset({"stat_joint_sfs": ((c1[0], c2[0]), a)},
                              attrs={"pop1": str(self["pop1"][0]) if len(self) else "",
                                     "pop2": str(self["pop2"][0]) if len(self) else ""})
        axis = "folded" if "folded" in self._columns else "derived"
        pops, ns, k = self["population"], self["n"], self[axis]
        spectra = list(dict.fromkeys(zip(pops, ns)))
        width = int(k.max()) + 1 if len(k) else 0
        one_per_pop = len({p for p, _ in spectra}) == len(spectra)
        dim = "cohorts" if one_per_pop else "spectra"
        at = {s: i for i, s in enumerate(spectra)}
        row = np.array([at[s] for s in zip(pops, ns)], dtype=np.int64)
        data = {}
        for name in ("count", "scaled"):
            if name in self._columns:
                a = np.full((len(spectra), width), np.nan)
                a[row, k] = self[name]
                data["stat_sfs" if name == "count" else "stat_sfs_scaled"] = ((dim, axis), a)
        coords = {dim: (dim, np.array([p for p, _ in spectra], dtype=object)),
                  "sfs_n": (dim, np.array([n for _, n in spectra], dtype=np.int64)),
                  axis: (axis, np.arange(width))}
        return xr.Dataset(data, coords=coords)

    def _xr_afdist(self, xr):
        return xr.Dataset({"stat_afdist": (("bins",), self["prob_dist"])},
                          coords={"bin_start": ("bins", self["start"]),
                                  "bin_stop": ("bins", self["stop"])})

    def _xr_sites(self, xr):
        variant = self["variant"]
        vindex = list(dict.fromkeys(variant.tolist()))
        at = {v: i for i, v in enumerate(vindex)}
        row = np.array([at[v] for v in variant.tolist()], dtype=np.int64)
        pop = self._columns["population"]
        cohorts = pop.labels or []
        first = np.zeros(len(vindex), dtype=np.int64)
        first[row[::-1]] = np.arange(len(row))[::-1]  # a row of each variant
        coords = {
            "variant_index": ("variants", np.array(vindex, dtype=np.int64)),
            "variant_contig": ("variants", self["contig"][first]),
            "variant_position": ("variants", self["pos"][first]),
            "cohorts": ("cohorts", np.array(cohorts, dtype=object)),
        }
        for f in ("id", "ref", "alt"):
            if f in self._fields:
                coords[f"variant_{f}"] = ("variants", self._fields[f][first])
        shape = (len(vindex), len(cohorts))
        dims = ("variants", "cohorts")

        def grid(values, fill=np.nan):
            a = np.full(shape + values.shape[1:], fill,
                        dtype=np.float64 if fill is np.nan else values.dtype)
            a[row, pop.values] = values
            return a

        data = {}
        for name, c in self._columns.items():
            if name in ("variant", "contig", "pos", "population"):
                continue
            if c.offsets is None:
                data["variant_" + name] = (dims, grid(self[name]))
        kind = self.kind.split(":", 1)[1]
        if kind == "freq":
            alts = self["alt_cts"]
            counts = np.concatenate([(self["obs_ct"] - np.maximum(alts, 0).sum(axis=1))[:, None],
                                     alts], axis=1)
            counts = grid(counts, fill=-1)
            total = grid(self["obs_ct"])
            data["cohort_allele_count"] = (dims + ("alleles",), counts)
            with np.errstate(invalid="ignore", divide="ignore"):
                freq = np.where(counts >= 0, counts / total[..., None], np.nan)
            data["cohort_allele_frequency"] = (dims + ("alleles",), freq)
        elif kind == "geno-counts":
            g = {n: grid(self[n]) for n in ("hom_ref_ct", "het_ref_alt_ct", "two_alt_geno_ct",
                                             "hom_alt_ct", "het_alt_ct")}
            data["variant_n_hom_ref"] = (dims, g["hom_ref_ct"])
            data["variant_n_het"] = (dims, g["het_ref_alt_ct"] + g["het_alt_ct"])
            data["variant_n_hom_alt"] = (dims, g["hom_alt_ct"])
            data["variant_n_non_ref"] = (dims, g["het_ref_alt_ct"] + g["two_alt_geno_ct"])
            data["variant_n_called"] = (dims, g["hom_ref_ct"] + g["het_ref_alt_ct"] +
                                        g["two_alt_geno_ct"])
        elif kind == "hardy":
            data["variant_hwe_p_value"] = (dims, grid(self["p_hwe"]))
        elif kind == "missing":
            data["variant_n_called"] = (dims, grid(self["obs_ct"] - self["missing_ct"]))
            data["variant_call_rate"] = (dims, 1 - grid(self["f_miss"]))
        return xr.Dataset(data, coords=coords)

    def _xr_samples(self, xr):
        pop = self._columns["population"]
        coords = {"sample_id": ("samples", self["sample"]),
                  "sample_cohort": ("samples", pop.values),
                  "cohorts": ("cohorts", np.array(pop.labels or [], dtype=object))}
        data = {"sample_" + n: (("samples",), self[n])
                for n in self._value_columns({"sample", "population"})}
        data["sample_n_called"] = (("samples",), self["obs_ct"] - self["missing_ct"])
        data["sample_call_rate"] = (("samples",), 1 - self["f_miss"])
        return xr.Dataset(data, coords=coords)

    # ---- display ----------------------------------------------------------------------------
    def __repr__(self) -> str:
        head = f"<vczstats.Result {self.kind}: {len(self)} rows x {len(self.columns)} columns>"
        try:
            return head + "\n" + repr(self.to_pandas().head(10))
        except ImportError:
            return head

    def _repr_html_(self) -> str:
        return self.to_pandas()._repr_html_()
