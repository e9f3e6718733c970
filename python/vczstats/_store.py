"""Stores and streaming access to their genotypes."""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional

import numpy as np

from . import _core, _stats
from ._args import PathLike, QueryArgs, Regions, SampleList


@dataclass
class Chunk:
    """One block of genotypes: the selected variants of one work unit (a variant chunk of the
    store, or the part a region selects) × the selected samples.

    ``genotypes`` is ``(variants, samples, ploidy)`` signed integers of the store's width
    (allele index; -1 missing; -2 fill for a lower ploidy): a numpy array on the CPU, a
    :class:`DeviceArray` on the GPU (``cupy.from_dlpack(chunk.genotypes)`` takes it without a
    copy). ``positions`` are 1-based POS, ``contig`` indices into ``Store.contigs`` and
    ``variant_index`` global variant indices, all numpy arrays.
    """

    genotypes: Any
    positions: np.ndarray
    contig: np.ndarray
    variant_index: np.ndarray
    samples: List[str]

    def __len__(self) -> int:
        return len(self.positions)

    def alt_dosage(self) -> np.ndarray:
        """Copies of non-REF alleles per (variant, sample): int8, -1 where a call has a missing
        allele (fill -2 alleles are ignored). Host arrays only."""
        g = np.asarray(self.genotypes)
        present = g >= 0
        dosage = ((g > 0) & present).sum(axis=2, dtype=np.int8)
        missing = (g == -1).any(axis=2)
        dosage[missing] = -1
        return dosage


def _chunk(d: Dict[str, Any], samples: List[str]) -> Chunk:
    return Chunk(d["genotypes"], d["position"], d["contig"], d["variant"], samples)


class ChunkIterator:
    """Iterates over the :class:`Chunk` blocks of a store in genome order. Decoding, sample
    gathering and (on the GPU) the host-to-device copy run in C++ threads ahead of the
    consumer, without the GIL; an error in those threads is raised here with its message.

    Use it in a ``for`` loop or a ``with`` block (``close()`` stops the threads early).
    """

    def __init__(self, query: "_core.Query", device: str, threads: int, prefetch: int):
        self._query = query
        self._stream = _core.BlockStream(query, threads=threads, prefetch=prefetch,
                                         device=device)
        self.samples: List[str] = list(query.samples)
        self.device: str = self._stream.device
        self.dtype = self._stream.dtype
        self.ploidy: int = self._stream.ploidy
        #: Selected variants over all chunks.
        self.num_variants: int = self._stream.variants

    def __len__(self) -> int:
        return len(self._stream)

    def __iter__(self) -> Iterator[Chunk]:
        return self

    def __next__(self) -> Chunk:
        d = self._stream.next()
        if d is None:
            raise StopIteration
        return _chunk(d, self.samples)

    def close(self) -> None:
        """Stop the producer threads (they finish the block in hand)."""
        self._stream.close()

    def __enter__(self) -> "ChunkIterator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<vczstats.ChunkIterator {len(self)} chunks, {self.num_variants} variants x "
                f"{len(self.samples)} samples x {self.ploidy}, {self.dtype}, {self.device}>")


class Store:
    """A VCF Zarr store (directory or zip), opened with :func:`open`.

    >>> store = vczstats.open("1kg_chr20.vcz")                        # doctest: +SKIP
    >>> store.num_variants, len(store.samples), store.contigs         # doctest: +SKIP
    (24990, 503, ['20'])
    >>> store.diversity(windows=100_000).to_pandas().head()          # doctest: +SKIP
    """

    def __init__(self, path: PathLike):
        self.path: str = os.fspath(path)
        self._store = _core.VczStore(self.path)

    @property
    def samples(self) -> np.ndarray:
        """Sample IDs (hidden, empty IDs left out), in store order."""
        return np.asarray(self._store.samples, dtype=object)

    @property
    def num_samples(self) -> int:
        return len(self._store.samples)

    @property
    def contigs(self) -> List[str]:
        return list(self._store.contigs)

    @property
    def contig_lengths(self) -> Optional[np.ndarray]:
        """Lengths of the contigs, 0 where unknown; None when the store has none."""
        lengths = self._store.contig_lengths
        return None if lengths is None else np.asarray(lengths, dtype=np.int64)

    @property
    def num_variants(self) -> int:
        return self._store.num_variants

    @property
    def ploidy(self) -> int:
        return self._store.ploidy

    def info(self) -> Dict[str, Any]:
        """What the store holds, as ``vczstats info --format json``: samples, variants, ploidy,
        contigs, phasing, and every array's dtype, shape, chunks, codecs, stored bytes."""
        s = self._store
        return {
            "store": self.path,
            "kind": "directory" if os.path.isdir(self.path) else "zip",
            "zarr_format": s.zarr_format,
            "vcf_zarr_version": s.vcf_zarr_version,
            "source": s.source,
            "samples": len(s.samples),
            "hidden_samples": s.hidden_samples,
            "variants": s.num_variants,
            "ploidy": s.ploidy,
            "contigs": list(s.contigs),
            "contig_lengths": s.contig_lengths,
            "phasing": s.phasing(),
            "arrays": s.arrays(),
        }

    def __repr__(self) -> str:
        if not hasattr(self, "_store"):  # opening failed
            return f"<vczstats.Store {self.path!r} (not open)>"
        return (f"<vczstats.Store {self.path!r}: {self.num_variants} variants x "
                f"{self.num_samples} samples, ploidy {self.ploidy}, "
                f"{len(self.contigs)} contig(s)>")

    # ---- streaming ----------------------------------------------------------------------------
    def _query(self, region: Optional[Regions], samples: Optional[SampleList],
               regions_overlap: str = "record") -> "_core.Query":
        return QueryArgs(self, regions=region, samples=samples,
                         regions_overlap=regions_overlap).query()

    def iter_chunks(self, region: Optional[Regions] = None, samples: Optional[SampleList] = None,
                    *, device: str = "cpu", prefetch: Optional[int] = None,
                    threads: Optional[int] = None,
                    regions_overlap: str = "record") -> ChunkIterator:
        """Genotype blocks of the selected variants and samples, in genome order (one per
        variant chunk, or the part of it a region selects). Samples come in store order
        (``iterator.samples`` lists them).

        ``device="gpu"`` (or ``"gpu:N"``) yields device arrays exposing ``__dlpack__`` and
        ``__cuda_array_interface__``; ``prefetch`` bounds the blocks decoded ahead (default
        twice the threads).

        >>> for chunk in store.iter_chunks("20:1-2000000", samples=["HG00096"]):  # doctest: +SKIP
        ...     g = chunk.genotypes               # (variants, samples, ploidy) int8
        >>> with store.iter_chunks(device="gpu") as it:                            # doctest: +SKIP
        ...     for chunk in it:
        ...         x = cupy.from_dlpack(chunk.genotypes)
        """
        return ChunkIterator(self._query(region, samples, regions_overlap), device,
                             int(threads or 0), int(prefetch or 0))

    def materialize(self, region: Optional[Regions] = None, samples: Optional[SampleList] = None,
                    *, device: str = "cpu", threads: Optional[int] = None,
                    regions_overlap: str = "record") -> Chunk:
        """Every selected variant in one :class:`Chunk` (decoded on C++ threads)."""
        q = self._query(region, samples, regions_overlap)
        d = _core.materialize(q, threads=int(threads or 0), device=device)
        return _chunk(d, list(q.samples))


#: The statistic functions that are also Store methods (``store.diversity(...)`` is
#: ``vczstats.diversity(store, ...)``).
STATISTICS = ("afdist", "allele_frequencies", "genotype_counts", "hardy_weinberg",
              "variant_missingness", "sample_stats", "diversity", "divergence", "window_stats",
              "sfs", "fstats")


def _method(name: str):
    fn = getattr(_stats, name)

    def method(self: Store, *args: Any, **kwargs: Any):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    method.__signature__ = inspect.signature(fn)  # the bound method drops the store
    return method


for _name in STATISTICS:
    setattr(Store, _name, _method(_name))
del _name


def open(path: PathLike) -> Store:  # noqa: A001 (tskit.load / zarr.open style)
    """Open a VCF Zarr store (a directory or a ``.zip``).

    Raises :class:`OSError` (``vczstats.IoError``) when it cannot be read and
    :class:`RuntimeError` (``vczstats.FormatError``) when it is not VCF Zarr.

    >>> store = vczstats.open("1kg_chr20.vcz")                        # doctest: +SKIP
    >>> store.info()["variants"]                                      # doctest: +SKIP
    24990
    """
    return Store(path)
