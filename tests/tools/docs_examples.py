#!/usr/bin/env python3
"""Runs the command blocks of the documentation pages and checks the output they show.

Runnable blocks:
- ```console blocks: each `$ ` line is a shell command (a trailing backslash continues it on the
  next line); the lines after it, up to the next `$ `, are the output the page shows. A line
  `...` stands for any number of lines (at the start: the shown lines may begin anywhere; at
  the end: more may follow); without it the shown lines are the whole output. Lines are
  compared field by field (whitespace, then commas): text exactly, numbers within a relative
  1e-6 or half a unit of the last digit the page shows (so a page may round).
- ```pycon blocks: `>>> ` examples, run as one doctest per page (ELLIPSIS, NORMALIZE_WHITESPACE).
A MyST comment line `% doctest: skip REASON` just before a block leaves it out (said in the log).

Each page runs in its own temporary directory holding a link `.data` to the repository's
.data/, with the binary's folder first on PATH and the Python package on PYTHONPATH, so pages
use the paths a user types from the repository root. Without the default data set (which
--make-data makes) the test prints `skipped: ...` and exits 77 (ctest's skip), and under CI=true fails instead.

Usage: docs_examples.py --bin build/vczstats [--pythonpath build/python] [--data .data]
       [--show] PAGE.md...       (--show prints what each command printed)
"""

import argparse
import doctest
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


class Block:
    def __init__(self, page, line, lang, lines, directive):
        self.page, self.line, self.lang, self.lines, self.directive = (page, line, lang, lines,
                                                                       directive)

    def where(self):
        return f"{self.page}:{self.line}"


def parse_blocks(path):
    blocks = []
    with open(path, encoding="utf-8") as f:
        text = f.read().splitlines()
    i = 0
    directive = None
    while i < len(text):
        line = text[i]
        m = re.match(r"^(`{3,})(\w+)\s*$", line)
        if m:
            fence, lang = m.group(1), m.group(2)
            j = i + 1
            while j < len(text) and text[j].strip() != fence:
                j += 1
            if lang in ("console", "pycon"):
                blocks.append(Block(path, i + 1, lang, text[i + 1:j], directive))
            directive = None
            i = j + 1
            continue
        d = re.match(r"^%\s*doctest:\s*(.*)$", line)
        if d:
            directive = d.group(1).strip()
        elif line.strip():
            directive = None if not line.startswith("%") else directive
        i += 1
    return blocks


def console_commands(block):
    """[(command, [shown output lines]), ...]"""
    out = []
    lines = block.lines
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            cmd = lines[i][2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            out.append([cmd, []])
        elif out:
            out[-1][1].append(lines[i])
        i += 1
    return out


def _number(s):
    try:
        return float(s)
    except ValueError:
        return None


def _decimals(s):
    m = re.match(r"^[-+]?\d*\.(\d+)$", s)
    return len(m.group(1)) if m else 0


def fields_match(shown, actual):
    a, b = shown.split(), actual.split()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        xs, ys = x.split(","), y.split(",")
        if len(xs) != len(ys):
            return False
        for u, v in zip(xs, ys):
            if u == v:
                continue
            p, q = _number(u), _number(v)
            if p is None or q is None or math.isnan(p) or math.isnan(q):
                return False
            tol = max(1e-6 * max(abs(p), abs(q)), 0.5 * 10 ** -_decimals(u) if "e" not in u.lower()
                      and "." in u else 0)
            if abs(p - q) > tol:
                return False
    return True


def output_matches(shown, actual):
    """Whether the shown lines (with `...` elisions) match the actual output lines."""
    while shown and not shown[-1].strip():
        shown = shown[:-1]
    if not shown:
        return True, ""
    segments, cur, anchored_start = [], [], True
    for k, line in enumerate(shown):
        if line.strip() in ("...", "…"):
            if k == 0:
                anchored_start = False
            if cur:
                segments.append(cur)
            cur = []
        else:
            cur.append(line)
    anchored_end = shown[-1].strip() not in ("...", "…")
    if cur:
        segments.append(cur)
    pos = 0
    for s, seg in enumerate(segments):
        found = None
        last = len(actual) - len(seg)
        starts = [pos] if (s == 0 and anchored_start) else range(pos, last + 1)
        for st in starts:
            if st <= last and all(fields_match(seg[k], actual[st + k]) for k in range(len(seg))):
                found = st
                break
        if found is None:
            return False, f"shown lines not found in order (from {seg[0]!r}, {len(seg)} line(s))"
        pos = found + len(seg)
    if anchored_end and pos != len(actual):
        return False, f"output has {len(actual) - pos} more line(s) than shown (end with ...?)"
    return True, ""


def python_ok(env):
    p = subprocess.run([sys.executable, "-c", "import vczstats"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.returncode == 0


def run_page(page, blocks, env, data, show):
    failures, skipped, ran = [], [], 0
    work = tempfile.mkdtemp(prefix="vczstats-docs-")
    try:
        os.symlink(os.path.abspath(data), os.path.join(work, ".data"))
        pycon = []
        for b in blocks:
            if b.directive and b.directive.startswith("skip"):
                skipped.append(f"{b.where()}: {b.directive}")
                continue
            if b.lang == "pycon":
                pycon.append(b)
                continue
            for cmd, shown in console_commands(b):
                ran += 1
                p = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, timeout=600)
                actual = p.stdout.splitlines()
                if show:
                    print(f"--- {b.where()}: $ {cmd}\n{p.stdout}{p.stderr}", end="")
                if p.returncode != 0:
                    failures.append(f"{b.where()}: `{cmd}` exited {p.returncode}: "
                                    f"{p.stderr.strip()[-500:]}")
                    continue
                ok, why = output_matches(shown, actual)
                if not ok:
                    failures.append(f"{b.where()}: `{cmd}`: {why}\n  printed:\n    " +
                                    "\n    ".join(actual[:40]))
        if pycon and not python_ok(env):
            if os.environ.get("CI") == "true":
                failures.append(f"{page}: the Python package does not import "
                                f"(PYTHONPATH={env['PYTHONPATH']})")
            else:
                skipped.append(f"{page}: Python examples: the package does not import (build "
                               "the vczstats_python target)")
            pycon = []
        if pycon:
            ran += 1
            text = "\n".join("\n".join(b.lines) for b in pycon) + "\n"
            test = doctest.DocTestParser().get_doctest(text, {}, page, page, 0)
            flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
            runner = doctest.DocTestRunner(optionflags=flags, verbose=False)
            old_cwd, old_path = os.getcwd(), list(sys.path)
            os.chdir(work)
            sys.path.insert(0, env["PYTHONPATH"].split(os.pathsep)[0])
            out = []
            try:
                runner.run(test, out=out.append)
            finally:
                os.chdir(old_cwd)
                sys.path[:] = old_path
            if runner.failures:
                failures.append(f"{page}: Python examples failed:\n" + "".join(out))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ran, failures, skipped


def self_test():
    """The matcher's own checks: it must reject what differs, and accept what the pages allow."""
    out = ["h\tx", "a\t0.123456789", "b\t2", "c\t1e-7,NA"]
    cases = [
        (["h\tx", "a\t0.123456789", "b\t2", "c\t1e-7,NA"], True),   # the whole output
        (["h\tx", "a\t0.1235", "b\t2", "c\t1e-7,NA"], True),        # rounded on the page
        (["h\tx", "a\t0.1234", "b\t2", "c\t1e-7,NA"], False),       # rounded wrongly
        (["h\tx", "a\t0.123456789", "b\t3", "c\t1e-7,NA"], False),  # another value
        (["h\tx", "a\t0.123456789"], False),                          # output goes on
        (["h\tx", "a\t0.123456789", "..."], True),                    # ... it may
        (["...", "b\t2", "..."], True),                                # an excerpt
        (["...", "b\t2", "a\t0.123456789", "..."], False),            # out of order
        (["h\tx", "b\t2", "..."], False),                             # a line skipped
        (["h\tx", "a\t0.123456789", "b\t2", "c\t1e-7"], False),     # a field missing
        (["h\tx", "a\t0.123456789", "b\t2", "c\t2e-7,NA"], False),  # a list item differs
        (["h\ty", "..."], False),                                      # a header differs
    ]
    bad = [(shown, want) for shown, want in cases if output_matches(shown, out)[0] != want]
    for shown, want in bad:
        print(f"self-test: {shown!r} should {'match' if want else 'not match'}", file=sys.stderr)
    blocks = console_commands(Block("t", 1, "console", ["$ a \\", "  b", "x", "$ c"], None))
    if blocks != [["a  b", ["x"]], ["c", []]]:
        print(f"self-test: console parsing gave {blocks!r}", file=sys.stderr)
        bad.append(blocks)
    print(f"docs_examples self-test: {len(cases) + 1 - len(bad)} of {len(cases) + 1} passed")
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--pythonpath", default="")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", ".data"))
    ap.add_argument("--make-data", metavar="SCRIPT",
                    help="make the default data set with SCRIPT (scripts/make-default-data.sh) "
                         "into --data when it is absent")
    ap.add_argument("--show", action="store_true")
    ap.add_argument("pages", nargs="+")
    args = ap.parse_args()
    ci = os.environ.get("CI") == "true"
    store = os.path.join(args.data, "1kg_chr20.vcz")
    if not os.path.isdir(store) and args.make_data:
        p = subprocess.run(["bash", args.make_data, args.data], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        print(p.stdout.strip())
    if not os.path.isdir(store):
        msg = f"{store} is absent (bash scripts/make-default-data.sh makes it)"
        if ci:
            print(f"docs_examples: error: {msg}; CI=true needs it", file=sys.stderr)
            return 1
        print(f"skipped: {msg}")
        return SKIP
    env = dict(os.environ)
    bindir = os.path.dirname(os.path.abspath(args.bin))
    # `python3` in the pages is this interpreter (Debian's, with numpy), not a pyenv shim's.
    env["PATH"] = os.pathsep.join([bindir, os.path.dirname(sys.executable), env.get("PATH", "")])
    pp = os.path.abspath(args.pythonpath) if args.pythonpath else ""
    env["PYTHONPATH"] = pp + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["MPLBACKEND"] = "Agg"
    total, all_failures, all_skipped = 0, [], []
    for page in args.pages:
        blocks = parse_blocks(page)
        if not blocks:
            all_failures.append(f"{page}: no runnable blocks (```console or ```pycon)")
            continue
        ran, failures, skipped = run_page(page, blocks, env, args.data, args.show)
        total += ran
        all_failures += failures
        all_skipped += skipped
        print(f"{page}: {ran} command(s) run, {len(failures)} failed, {len(skipped)} block(s) "
              "skipped")
    for s in all_skipped:
        print(f"skipped block: {s}")
    for f in all_failures:
        print(f"FAILED {f}", file=sys.stderr)
    print(f"docs_examples: {total} command(s), {len(all_failures)} failure(s)")
    return 1 if all_failures else 0


if __name__ == "__main__":
    sys.exit(main())
