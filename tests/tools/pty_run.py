#!/usr/bin/python3
"""Run a command on a pseudo-terminal, as a user's shell would.

Usage: pty_run.py COMMAND [ARGS...]

The command's stdin, stdout and stderr are the slave side of a new pty (use `sh -c '... 2>FILE'`
to send one of them elsewhere). Everything the command writes to the terminal is copied to this
script's stdout, byte for byte ("\\n" arrives as "\\r\\n", the terminal's translation); the exit
status is the command's (128 + N when signal N ended it).
"""
import os
import pty
import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    master, slave = pty.openpty()
    child = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave,
                             close_fds=True)
    os.close(slave)
    out = sys.stdout.buffer
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every holder of the slave side has closed it
            break
        if not data:
            break
        out.write(data)
    out.flush()
    os.close(master)
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
