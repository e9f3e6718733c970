#!/usr/bin/env python3
"""Run a command under an address-space limit and record its peak resident memory.

Usage: peak_rss.py OUT_FILE LIMIT_KIB -- COMMAND [ARGS...]

LIMIT_KIB 0: no limit; else the command runs as under `ulimit -v LIMIT_KIB`. The command's
stdout and stderr pass through; OUT_FILE receives its peak RSS in KiB (ru_maxrss); the exit
status is the command's (128 + N when signal N killed it).
"""

import resource
import subprocess
import sys


def main():
    out, limit = sys.argv[1], int(sys.argv[2])
    cmd = sys.argv[sys.argv.index("--") + 1:]

    def limit_memory():
        if limit > 0:
            resource.setrlimit(resource.RLIMIT_AS, (limit * 1024, limit * 1024))

    r = subprocess.run(cmd, preexec_fn=limit_memory)
    with open(out, "w") as f:
        f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
    sys.exit(r.returncode if r.returncode >= 0 else 128 - r.returncode)


if __name__ == "__main__":
    main()
