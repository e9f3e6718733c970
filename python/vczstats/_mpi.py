"""Runs under ``mpirun``/``srun``: every computing function spreads its run over the ranks as the
CLI does (the library's Runner), the ranks making the same calls in the same order; rank 0 gets
the result and the other ranks ``None``. MPI starts at the first run (or :func:`mpi_rank`) and
ends at exit; after a failed run every rank raises and MPI has ended for the process."""

import atexit
import functools
from typing import Any, Callable

from . import _core


class _OtherRank(Exception):
    """Raised by a run on an MPI rank other than 0, which gets no result (see :func:`rank0`)."""


def mpi_rank() -> int:
    """This process's MPI rank under an MPI launcher (``mpirun -n K python script.py``), else 0.

    >>> if vczstats.mpi_rank() == 0:                 # doctest: +SKIP
    ...     print(vczstats.diversity(store))         # doctest: +SKIP
    """
    return int(_core.mpi_ranks()[0])


def mpi_size() -> int:
    """The number of MPI ranks under an MPI launcher, else 1."""
    return int(_core.mpi_ranks()[1])


def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` of a computing function: ``None`` on the MPI ranks other than 0
    (their share is merged on 0). An error raised before or after the run (a store that does not
    open, a bad argument) ends MPI on every rank, as a failed run does, so that no rank waits for
    this one."""
    try:
        return fn(*args, **kwargs)
    except _OtherRank:
        return None
    except BaseException as e:
        _core._mpi_fail(f"{type(e).__name__}: {e}")
        raise


def rank0(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run through :func:`call`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return call(fn, *args, **kwargs)

    return wrapper


atexit.register(_core._end_mpi)
