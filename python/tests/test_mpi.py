"""The package under mpirun (vczstats._mpi): every family gives rank 0 the result of one process,
byte for byte (the matrix family too: each rank computes a stripe of the matrix's rows, whose
cells are one process's doubles), and the other ranks None; a failure on one rank raises on every
rank and ends the job."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_store

HERE = Path(__file__).resolve().parent


def _mpirun():
    path = shutil.which("mpirun")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("mpirun is missing (scripts/setup.sh installs openmpi-bin)")
        pytest.skip("skipped: no mpirun (Debian's openmpi-bin)")
    import vczstats

    if not hasattr(vczstats._core, "mpi_ranks"):
        pytest.skip("skipped: this build of the package has no MPI driver")
    return [path, "--allow-run-as-root", "--oversubscribe", "-n"]


def _run(args, **kw):
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=600, **kw)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Phased (for the haplotype scans), with missing calls elsewhere left out."""
    return make_store(tmp_path_factory.mktemp("mpi"), "mpi", samples=30, variants=500,
                      missing=0.0, multiallelic=0.0, phased=1.0, seed=11, variants_chunk=40)


def test_every_family_under_mpirun_gives_one_process_result(store, tmp_path):
    mpirun = _mpirun()
    script = str(HERE / "mpi" / "every_family.py")
    one = tmp_path / "one"
    one.mkdir()
    r = _run([sys.executable, script, str(store), str(one)])
    assert r.returncode == 0, r.stderr
    names = sorted(os.listdir(one))
    assert len(names) == 24
    for k in (2, 3):
        many = tmp_path / f"many{k}"
        many.mkdir()
        r = _run(mpirun + [str(k), sys.executable, script, str(store), str(many)])
        assert r.returncode == 0, r.stdout + r.stderr
        assert sorted(os.listdir(many)) == names  # rank 0 alone wrote, and everything
        for rank in range(k):
            assert f"rank {rank} of {k}: 24 runs" in r.stdout
        for name in names:
            want, got = (one / name).read_bytes(), (many / name).read_bytes()
            assert len(want) > 0
            assert got == want, f"mpirun -n {k}: {name} differs"


def test_a_failure_on_one_rank_raises_on_every_rank(store, tmp_path):
    mpirun = _mpirun()
    code = (
        "import sys, vczstats\n"
        "bad = sys.argv[1] if vczstats.mpi_rank() == 0 else sys.argv[2]\n"
        "try:\n"
        "    vczstats.diversity(bad, progress=False)\n"
        "except vczstats.Error as e:\n"
        "    print(f'rank {vczstats.mpi_rank()} raised: {e}')\n"
        "try:\n"
        "    vczstats.diversity(sys.argv[1], progress=False)\n"
        "except vczstats.Error as e:\n"
        "    print(f'rank {vczstats.mpi_rank()} again: {e}')\n")
    r = _run(mpirun + ["2", sys.executable, "-c", code, str(store), str(tmp_path / "absent.vcz")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rank 1 raised:" in r.stdout and "absent.vcz" in r.stdout
    assert "rank 0 raised: stopped under MPI" in r.stdout
    assert "rank 0 again: MPI ended" in r.stdout and "rank 1 again: MPI ended" in r.stdout
