"""Progress bars for long runs: tqdm when it is installed, else a plain bar on stderr."""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, Union

ProgressFn = Callable[[int, int, int], None]

#: Seconds a run must last before ``progress=None`` shows a bar.
DELAY = 2.0


class _PlainBar:
    """A one-line bar on stderr, redrawn at most ten times a second."""

    def __init__(self, desc: str, delay: float):
        self.desc = desc
        self.start = time.monotonic()
        self.delay = delay
        self.shown = False
        self.last = 0.0

    def update(self, done: int, total: int, variants: int) -> None:
        now = time.monotonic()
        if now - self.start < self.delay and done != total:
            return
        if done != total and now - self.last < 0.1:
            return
        if done == total and not self.shown and now - self.start < self.delay:
            return  # a short run: no bar at all
        self.last = now
        self.shown = True
        width = 30
        fill = width * done // total if total else width
        pct = 100 * done // total if total else 100
        sys.stderr.write(
            f"\r{self.desc}: [{'=' * fill}{' ' * (width - fill)}] {pct:3d}% "
            f"{variants} variants {now - self.start:.1f} s"
        )
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    def close(self) -> None:
        pass


class _TqdmBar:
    def __init__(self, desc: str, delay: float):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=None, desc=desc, unit="unit", delay=delay, leave=False)

    def update(self, done: int, total: int, variants: int) -> None:
        if self.bar.total != total:
            self.bar.total = total
        self.bar.set_postfix(variants=variants, refresh=False)
        self.bar.update(done - self.bar.n)  # draws only after the delay

    def close(self) -> None:
        self.bar.close()


class Progress:
    """The progress callback of one run (a context manager that closes the bar).

    ``progress`` is True (always show), False (never), None (show when the run lasts more
    than :data:`DELAY` seconds) or a callable ``fn(done_units, total_units, variants)``.
    """

    def __init__(self, progress: Union[None, bool, ProgressFn], desc: str = "vczstats"):
        self.fn: Optional[ProgressFn] = None
        self.bar = None
        if callable(progress) and not isinstance(progress, bool):
            self.fn = progress
        elif progress is not False:
            delay = 0.0 if progress else DELAY
            try:
                self.bar = _TqdmBar(desc, delay)
            except ImportError:
                self.bar = _PlainBar(desc, delay)
            self.fn = self.bar.update

    def __enter__(self) -> Optional[ProgressFn]:
        return self.fn

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()
