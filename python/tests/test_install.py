"""`pip install ./python` works offline: into a fresh virtual environment (seeing Debian's
numpy, pandas, ... through --system-site-packages), with no index, no build isolation and no
dependency resolution, through the in-tree build backend. The build reuses the configured build
tree of this test run (VCZSTATS_BUILD_DIR), so only the extension target is brought up to date,
and takes under a minute (issue 32: `pip install ./python` after scripts/build.sh); the wall
time is printed and written to <build>/pip-install-seconds.txt."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import SOURCE, TOOLS_PYTHON


def test_pip_install_offline(tmp_path, small_store):
    build = os.environ.get("VCZSTATS_BUILD_DIR")
    if not build or not (Path(build) / "CMakeCache.txt").exists():
        pytest.skip("skipped: VCZSTATS_BUILD_DIR names no configured build (ctest sets it)")
    venv = tmp_path / "venv"
    subprocess.run([TOOLS_PYTHON, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    python = str(venv / "bin" / "python")
    # VCZSTATS_BINARY would name the build's CLI to the installed command: not here
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PIP_INDEX_URL", "VCZSTATS_BINARY")}
    start = time.monotonic()
    r = subprocess.run([python, "-m", "pip", "install", "--no-index", "--no-cache-dir",
                        "--no-build-isolation", "--no-deps",
                        "--config-settings", f"build-dir={build}", str(SOURCE / "python")],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    seconds = time.monotonic() - start
    assert r.returncode == 0, r.stdout + r.stderr
    print(f"pip install ./python: {seconds:.1f} s")
    (Path(build) / "pip-install-seconds.txt").write_text(f"{seconds:.1f}\n")
    assert seconds < 60, f"pip install ./python took {seconds:.0f} s (issue 32: under a minute)"
    script = ("import vczstats, sys; s = vczstats.open(sys.argv[1]); "
              "d = vczstats.diversity(s, windows=1000, progress=False); "
              "print(vczstats.__file__); print(len(d), d['pi_sum'].sum())")
    r = subprocess.run([python, "-c", script, str(small_store)], capture_output=True,
                       text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    where, numbers = r.stdout.split("\n")[:2]
    assert where.startswith(str(venv)), where  # the installed copy, not the build tree
    import vczstats

    d = vczstats.diversity(small_store, windows=1000, progress=False)
    assert numbers == f"{len(d)} {d['pi_sum'].sum()}"
    r = subprocess.run([python, "-m", "pip", "show", "-f", "vczstats"], capture_output=True,
                       text=True, env=env)
    assert "vczstats/_core" in r.stdout and "vczstats/plot.py" in r.stdout
    # the console command: the CLI the wheel carries, the same numbers as the built one
    command = venv / "bin" / "vczstats"
    assert command.exists(), "the wheel installed no vczstats command"
    r = subprocess.run([str(command), "--help"], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert r.returncode == 0 and "diversity" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([str(command), "diversity", str(small_store), "--no-progress"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    cli = Path(build) / "vczstats"
    want = subprocess.run([str(cli), "diversity", str(small_store), "--no-progress"],
                          capture_output=True, text=True).stdout
    assert r.stdout == want and len(want.splitlines()) > 1
    r = subprocess.run([python, "-m", "vczstats", "info", str(small_store)], capture_output=True,
                       text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0 and "samples" in r.stdout, r.stderr


def test_relative_build_dir_is_from_the_repository(tmp_path):
    """`-C build-dir=DIR` with a relative DIR names <repo>/DIR, never python/DIR (where pip runs
    the backend); without it, scripts/build.sh's build/ is reused when configured."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "vczstats_build", SOURCE / "python" / "build_backend" / "vczstats_build.py")
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    old = os.getcwd()
    os.chdir(SOURCE / "python")  # as pip does
    try:
        assert backend._build_dir("build-x") == str(SOURCE / "build-x")
        assert backend._build_dir(str(tmp_path)) == str(tmp_path)
        default = backend._build_dir(None)
    finally:
        os.chdir(old)
    configured = (SOURCE / "build" / "CMakeCache.txt").exists()
    assert default in (str(SOURCE / "build"), str(SOURCE / "build-python"))
    if not configured:
        assert default == str(SOURCE / "build-python")
