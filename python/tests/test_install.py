"""`pip install ./python` works offline: into a fresh virtual environment (seeing Debian's
numpy, pandas, ... through --system-site-packages), with no index, through the in-tree build
backend. The build reuses the configured build tree of this test run (VCZSTATS_BUILD_DIR), so
only the extension target is brought up to date."""

from __future__ import annotations

import os
import subprocess
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
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL")}
    r = subprocess.run([python, "-m", "pip", "install", "--no-index", "--no-cache-dir",
                        "--config-settings", f"build-dir={build}", str(SOURCE / "python")],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
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
