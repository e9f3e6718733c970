"""vczstats: population-genetics statistics straight from VCF Zarr stores.

The C++ library streams genotype chunks through CPU threads or NVIDIA GPUs; this package binds
it. Results are numpy columns with pandas and xarray (sgkit-style) views; genotype blocks can be
streamed to numpy or, on the GPU, to CuPy/PyTorch through DLPack.

>>> import vczstats
>>> store = vczstats.open("1kg_chr20.vcz")                              # doctest: +SKIP
>>> pops = {"EUR1": store.samples[:250], "EUR2": store.samples[250:]}   # doctest: +SKIP
>>> d = vczstats.diversity(store, sample_sets=pops, windows=100_000)     # doctest: +SKIP
>>> d.to_pandas()[["chrom", "start", "end", "population", "pi_per_bp"]]  # doctest: +SKIP
>>> fst = vczstats.divergence(store, sample_sets=pops, windows=100_000)  # doctest: +SKIP
>>> vczstats.plot.windows(fst, "hudson_fst")                             # doctest: +SKIP

Errors are ``vczstats.UsageError`` (a ``ValueError``), ``vczstats.IoError`` (an ``OSError``),
``vczstats.FormatError`` and ``vczstats.CudaError`` (``RuntimeError`` s), all ``vczstats.Error``,
with the library's messages.

Under ``mpirun -n K python script.py`` each computing function spreads over the K ranks, as the
CLI does; rank 0 gets the result, the other ranks ``None`` (``vczstats.mpi_rank()``).
"""

from ._core import CudaError, Error, FormatError, InternalError, IoError, UsageError, __version__
from ._args import (Windows, windows_by_position, windows_by_variant, windows_from_breakpoints,
                    windows_from_intervals)
from ._result import Result
from ._tables import read_table
from ._stats import (afdist, allele_frequencies, divergence, diversity, fstats, genotype_counts,
                     hardy_weinberg, sample_stats, scan_statistics, sfs, sfs_array,
                     variant_missingness, window_stats)
from ._store import Chunk, ChunkIterator, Store, open
from ._families import (PcaResult, SampleMatrix, distance, ehh, grm, haplotypes, ihs, king, ld,
                        ld_decay, ld_scores, ld_stats, nsl, pca, prune, xpehh, xpnsl)
from ._core import DeviceArray
from ._mpi import mpi_rank, mpi_size


def gpu_count() -> int:
    """Number of usable CUDA devices (0 without a GPU, a driver or the CUDA backend)."""
    from . import _core

    return _core.gpu_count()[0]


def __getattr__(name: str):
    # matplotlib is imported only when plots are used.
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module 'vczstats' has no attribute {name!r}")


__all__ = [
    "open", "Store", "Chunk", "ChunkIterator", "DeviceArray", "Result", "Windows",
    "windows_by_position", "windows_by_variant", "windows_from_breakpoints",
    "windows_from_intervals", "afdist", "allele_frequencies", "genotype_counts",
    "hardy_weinberg", "variant_missingness", "sample_stats", "diversity", "divergence",
    "window_stats", "scan_statistics", "read_table", "sfs", "sfs_array", "fstats", "gpu_count", "plot",
    "ld", "ld_decay", "ld_scores", "ld_stats", "prune", "grm", "king", "distance", "pca", "haplotypes", "ehh", "ihs", "nsl", "xpehh",
    "xpnsl", "SampleMatrix", "PcaResult", "UsageError", "IoError", "FormatError", "CudaError",
    "InternalError", "Error", "mpi_rank", "mpi_size", "__version__",
]
