#!/usr/bin/env python3
"""Executes a notebook with Jupyter (`jupyter nbconvert --to notebook --execute`, Debian's
jupyter-nbconvert and python3-ipykernel) on the default data set and checks the executed copy:
no cell raised (no `error` output, nothing on the cells' stderr that says Traceback), every code
cell ran, and every cell that draws (calls `vczstats.plot.`) shows a PNG figure of more than a
blank canvas.

The data set is made in --data by --make-data when absent. Without nbconvert or ipykernel, or
when the data set cannot be made, it prints `skipped: ...` and exits 77 (ctest's skip); under
CI=true it fails instead.

Usage: run_notebook.py --pythonpath BUILD/python --data .data [--make-data SCRIPT]
                       [--out DIR] NOTEBOOK.ipynb
"""

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
JUPYTER_PYTHON = "/usr/bin/python3"  # Debian's jupyter and its python3 kernel run on it


def skip(message: str) -> int:
    if os.environ.get("CI") == "true":
        print(f"run_notebook: error: {message}", file=sys.stderr)
        return 1
    print(f"skipped: {message}")
    return SKIP


def png_size(data: bytes):
    """(width, height) of a PNG, or None when the bytes are not one."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def check(executed: dict) -> list:
    """The failures of an executed notebook (empty when it is good)."""
    failures = []
    figures = 0
    for i, cell in enumerate(executed["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        where = f"cell {i} ({source.splitlines()[0] if source else 'empty'!r})"
        if cell.get("execution_count") is None:
            failures.append(f"{where}: not executed")
        pngs = []
        for out in cell.get("outputs", []):
            if out["output_type"] == "error":
                failures.append(f"{where}: {out['ename']}: {out['evalue']}")
            if out["output_type"] == "stream" and "Traceback" in "".join(out.get("text", "")):
                failures.append(f"{where}: a traceback on {out['name']}")
            png = out.get("data", {}).get("image/png")
            if png:
                pngs.append(base64.b64decode("".join(png)))
        if "vczstats.plot." in source:
            if not pngs:
                failures.append(f"{where}: draws, but shows no PNG figure")
            for data in pngs:
                size = png_size(data)
                # a drawn figure compresses far less than an empty canvas of the same size
                if size is None or size[0] < 200 or size[1] < 150 or len(data) < 8000:
                    failures.append(f"{where}: a blank or broken figure ({size}, "
                                    f"{len(data)} bytes)")
            figures += len(pngs)
    if figures == 0:
        failures.append("the notebook shows no figure")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pythonpath", required=True, help="the build's python folder")
    ap.add_argument("--data", required=True, help="the default data set's folder")
    ap.add_argument("--make-data", metavar="SCRIPT", help="scripts/make-default-data.sh")
    ap.add_argument("--out", help="keep the executed notebook here")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    ap.add_argument("notebook")
    args = ap.parse_args()

    jupyter = shutil.which("jupyter-nbconvert")
    if not jupyter or subprocess.run([JUPYTER_PYTHON, "-c", "import nbconvert, ipykernel"],
                                     capture_output=True).returncode != 0:
        return skip("jupyter nbconvert or ipykernel is missing (run scripts/setup.sh: "
                    "jupyter-nbconvert python3-nbconvert python3-ipykernel)")
    store = os.path.join(args.data, "1kg_chr20.vcz")
    if not os.path.isdir(store) and args.make_data:
        p = subprocess.run(["bash", args.make_data, args.data], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            return skip(f"the default data set could not be made: {p.stderr.strip()}")
    if not os.path.isdir(store):
        return skip(f"the default data set is absent ({store}; bash scripts/make-default-data.sh)")

    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # the kernel's inline one
    env["PYTHONPATH"] = os.path.abspath(args.pythonpath)
    env["VCZSTATS_DATA"] = os.path.abspath(args.data)
    p = subprocess.run([JUPYTER_PYTHON, "-c", "import vczstats._core"], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return skip(f"the package in {args.pythonpath} does not import under {JUPYTER_PYTHON}, "
                    f"the kernel's interpreter (built for another one?): "
                    f"{p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''}")

    out = args.out or tempfile.mkdtemp(prefix="vczstats-notebook-")
    os.makedirs(out, exist_ok=True)
    name = os.path.splitext(os.path.basename(args.notebook))[0] + ".executed.ipynb"
    start = time.monotonic()
    # The kernel starts in the notebook's folder (as in Jupyter), so the notebook's own paths
    # hold; VCZSTATS_DATA names the data set wherever the build is.
    p = subprocess.run([jupyter, "--to", "notebook", "--execute",
                        f"--ExecutePreprocessor.timeout={args.timeout}",
                        "--ExecutePreprocessor.kernel_name=python3",
                        "--output-dir", out, "--output", name, args.notebook],
                       env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if p.returncode != 0:
        # nbconvert stops at the first cell that raises and prints it
        print(p.stderr[-6000:], file=sys.stderr)
        print(f"run_notebook: {args.notebook} failed to execute", file=sys.stderr)
        return 1
    with open(os.path.join(out, name), encoding="utf-8") as f:
        executed = json.load(f)
    failures = check(executed)
    for failure in failures:
        print(f"run_notebook: {args.notebook}: {failure}", file=sys.stderr)
    if failures:
        return 1
    cells = sum(1 for c in executed["cells"] if c["cell_type"] == "code")
    figures = sum(1 for c in executed["cells"] for o in c.get("outputs", [])
                  if "image/png" in o.get("data", {}))
    print(f"run_notebook: {args.notebook}: {cells} code cells ran, {figures} figures, "
          f"{seconds:.1f} s; executed copy {os.path.join(out, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
