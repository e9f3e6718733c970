"""Fixtures of the vczstats Python tests: small random stores made by the repository's
independent tools (tests/tools/random_vcf.py, converted by tests/tools/vcf2vcz.py with
python3-zarr), the CLI (the reference for "same numbers as the CLI"), python3-zarr readers, the
default data set and the project's shared data when present."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("VCZSTATS_SOURCE_DIR", HERE.parent.parent))
TOOLS = SOURCE / "tests" / "tools"
# The interpreter with numpy, zarr and numcodecs from Debian (tests/tools need them).
TOOLS_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def _cli_path():
    path = os.environ.get("VCZSTATS_BINARY") or str(SOURCE / "build" / "vczstats")
    return path if os.path.exists(path) else None


@pytest.fixture(scope="session")
def cli():
    """The vczstats CLI built from the same sources (skips when it is not built)."""
    path = _cli_path()
    if path is None:
        pytest.skip("skipped: the vczstats CLI is not built (set VCZSTATS_BINARY)")
    return path


def run_cli(cli, *args, progress_flag=True):
    """Run the CLI; its stdout."""
    flags = ["--no-progress"] if progress_flag else []
    r = subprocess.run([cli, *map(str, args), *flags], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"vczstats {' '.join(map(str, args))} failed: {r.stderr}")
    return r.stdout


def make_store(tmp: Path, name: str, *, samples=40, variants=600, contigs=2, seed=3,
               missing=0.05, multiallelic=0.1, ploidy=2, mixed_ploidy=0.0,
               variants_chunk=100, samples_chunk=16, zip_store=False, dtype="int8", phased=0.0):
    """A random VCF (tests/tools/random_vcf.py) converted to VCZ (tests/tools/vcf2vcz.py)."""
    vcf = tmp / f"{name}.vcf"
    out = tmp / (f"{name}.vcz.zip" if zip_store else f"{name}.vcz")
    subprocess.run([TOOLS_PYTHON, str(TOOLS / "random_vcf.py"), "--seed", str(seed),
                    "--samples", str(samples), "--variants", str(variants), "--contigs",
                    str(contigs), "--missing", str(missing), "--multiallelic", str(multiallelic),
                    "--ploidy", str(ploidy), "--mixed-ploidy", str(mixed_ploidy),
                    "--phased", str(phased), "-o", str(vcf)], check=True)
    cmd = [TOOLS_PYTHON, str(TOOLS / "vcf2vcz.py"), str(vcf), str(out), "--variants-chunk-size",
           str(variants_chunk), "--samples-chunk-size", str(samples_chunk),
           "--genotype-dtype", dtype]
    if zip_store:
        cmd.append("--zip")
    subprocess.run(cmd, check=True, capture_output=True)
    return out


@pytest.fixture(scope="session")
def small_store(tmp_path_factory):
    """40 diploid samples (3 sample chunks) x 600 variants (6 variant chunks) on 2 contigs,
    5% missing alleles, 10% multi-allelic sites."""
    # The GPU machine's Debian-less image cannot run the tools (no python3-zarr there): it takes
    # a store of the same kind that scripts/fetch-gpu-deps.sh made beforehand.
    prepared = os.environ.get("VCZSTATS_TEST_STORES")
    if prepared and subprocess.run([TOOLS_PYTHON, "-c", "import zarr, numpy"],
                                   capture_output=True).returncode != 0:
        return Path(prepared) / "missing_multi.vcz"
    return make_store(tmp_path_factory.mktemp("small"), "small")


@pytest.fixture(scope="session")
def small_pops(small_store, tmp_path_factory):
    """Three populations interleaved across the sample chunks: (file, {pop: [samples]})."""
    import vczstats

    names = [str(n) for n in vczstats.open(small_store).samples]
    sets = {f"P{k}": [n for i, n in enumerate(names) if i % 3 == k] for k in range(3)}
    path = tmp_path_factory.mktemp("pops") / "pops.tsv"
    with open(path, "w") as f:
        f.write("sample\tpopulation\n")
        for i, n in enumerate(names):
            f.write(f"{n}\tP{i % 3}\n")
    return path, sets


def open_zarr(path):
    """python3-zarr's view of a store (directory or zip)."""
    import zarr

    path = str(path)
    if path.endswith(".zip"):
        return zarr.open_group(zarr.ZipStore(path, mode="r"), mode="r")
    return zarr.open_group(path, mode="r")


@pytest.fixture(scope="session")
def default_store():
    """The README's default data set (scripts/make-default-data.sh), when it was built."""
    path = SOURCE / ".data" / "1kg_chr20.vcz"
    if not (path / "call_genotype" / ".zarray").exists():
        pytest.skip("skipped: the default data set is absent (bash scripts/make-default-data.sh)")
    return path


@pytest.fixture(scope="session")
def shared_data():
    path = SOURCE.parent / "shared" / "data"
    if not path.is_dir():
        pytest.skip("skipped: ../shared/data is absent")
    return path
