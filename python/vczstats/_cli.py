"""The ``vczstats`` console command of the installed package: runs the CLI binary the wheel
carries (``vczstats/bin/vczstats``), or, in a build tree (``PYTHONPATH=build/python``), the one
built beside the package (``build/vczstats``); ``$VCZSTATS_BINARY`` names another. ``python -m
vczstats COMMAND ...`` runs it too, for every command but ``plot``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional


def binary() -> Optional[str]:
    """The path of the vczstats CLI binary, or None when there is none."""
    here = Path(__file__).resolve().parent
    for candidate in (os.environ.get("VCZSTATS_BINARY"), here / "bin" / "vczstats",
                      here.parent.parent / "vczstats"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def main(argv: Optional[List[str]] = None) -> int:
    """Replace this process by the CLI with ``argv`` (default: the command line's)."""
    args = sys.argv[1:] if argv is None else list(argv)
    path = binary()
    if path is None:
        print("vczstats: the CLI binary is not installed with this package (reinstall it with "
              "`pip install ./python`, or set VCZSTATS_BINARY)", file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, ["vczstats", *args])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
