#!/usr/bin/python3
"""Count filters in Python: allele_frequencies and diversity with and without filters on the
same store, seconds per call (wall and the process's CPU).

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_filters.py [STORE] [-n RUNS]
       [-t THREADS]
  STORE      default ../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip
  -n RUNS    timed calls of each case after one untimed (warm page cache); min and median
  -t THREADS vczstats' threads (default 2)

The filters are {"maf": 0.05, "geno": 0.1, "hwe": 1e-4}. Run it with one build's module and
then another's (PYTHONPATH) to compare them: the filtered calls' rows must agree.
"""

import argparse
import os
import resource
import statistics
import time

import vczstats

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "shared", "data", "ag1000g",
                       "gamb.X.8-12Mb.n100.derived.vcz.zip")
FILTERS = {"maf": 0.05, "geno": 0.1, "hwe": 1e-4}


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("store", nargs="?", default=DEFAULT)
    p.add_argument("-n", type=int, default=5)
    p.add_argument("-t", type=int, default=2)
    a = p.parse_args()
    s = vczstats.open(a.store)
    cases = [("allele_frequencies", vczstats.allele_frequencies, {}),
             ("diversity(windows=100_000)", vczstats.diversity, {"windows": 100_000})]
    print("| call | filters | rows | wall min | wall median | CPU min | CPU median |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name, fn, kwargs in cases:
        for filters in (None, FILTERS):
            fn(s, threads=a.t, progress=False, filters=filters, **kwargs)  # warm the cache
            walls, cpus = [], []
            for _ in range(a.n):
                t, c = time.perf_counter(), cpu_seconds()
                r = fn(s, threads=a.t, progress=False, filters=filters, **kwargs)
                walls.append(time.perf_counter() - t)
                cpus.append(cpu_seconds() - c)
            print(f"| {name} | {'yes' if filters else 'no'} | {len(r)} | {min(walls):.3f} | "
                  f"{statistics.median(walls):.3f} | {min(cpus):.3f} | "
                  f"{statistics.median(cpus):.3f} |", flush=True)


if __name__ == "__main__":
    main()
