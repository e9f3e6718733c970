"""Streaming access (iter_chunks, materialize) against python3-zarr's reading of the same
arrays; errors raised in the C++ producer threads; the GIL released while they work."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import vczstats
from conftest import make_store, open_zarr


def zarr_selection(z, contig=None, start=None, end=None, samples=None):
    """(genotypes, positions, variant indices) by python3-zarr: variants whose POS is in
    [start, end] of the contig (regions_overlap="pos"), samples in store order."""
    pos = z["variant_position"][:]
    keep = np.ones(len(pos), dtype=bool)
    if contig is not None:
        c = list(z["contig_id"][:]).index(contig)
        keep &= z["variant_contig"][:] == c
        if start is not None:
            keep &= (pos >= start) & (pos <= end)
    idx = np.flatnonzero(keep)
    names = list(z["sample_id"][:])
    cols = sorted(names.index(s) for s in samples) if samples is not None else slice(None)
    gt = z["call_genotype"].get_orthogonal_selection((idx, cols, slice(None))) if len(idx) \
        else np.zeros((0, len(names) if samples is None else len(samples), 2), np.int8)
    return gt, pos[idx], idx


def check_chunks(chunks, gt, pos, idx):
    got = [c for c in chunks]
    assert sum(len(c) for c in got) == len(pos)
    np.testing.assert_array_equal(np.concatenate([c.genotypes for c in got]), gt)
    np.testing.assert_array_equal(np.concatenate([c.positions for c in got]), pos)
    np.testing.assert_array_equal(np.concatenate([c.variant_index for c in got]), idx)
    return got


def test_whole_store(small_store):
    z = open_zarr(small_store)
    store = vczstats.open(small_store)
    it = store.iter_chunks()
    assert len(it) == 6 and it.num_variants == 600  # one chunk per variant chunk
    got = check_chunks(it, *zarr_selection(z))
    assert all(c.genotypes.dtype == np.int8 and c.genotypes.flags.c_contiguous for c in got)
    assert got[0].samples == list(z["sample_id"][:])
    assert "cpu" in repr(it)


@pytest.mark.parametrize("threads,prefetch", [(1, 1), (2, 0), (4, 3)])
def test_region_and_samples(small_store, threads, prefetch):
    """A region across chunk boundaries and a sample subset across the three sample chunks
    (given out of order: blocks come in store order)."""
    z = open_zarr(small_store)
    store = vczstats.open(small_store)
    samples = [store.samples[i] for i in (33, 2, 17, 5, 39, 16)]
    it = store.iter_chunks("chr1:700-2300", samples=samples, threads=threads,
                           prefetch=prefetch, regions_overlap="pos")
    gt, pos, idx = zarr_selection(z, "chr1", 700, 2300, samples)
    got = check_chunks(it, gt, pos, idx)
    assert len(got) >= 2
    assert got[0].samples == [store.samples[i] for i in sorted((33, 2, 17, 5, 39, 16))]
    whole = store.materialize("chr1:700-2300", samples=samples, regions_overlap="pos")
    np.testing.assert_array_equal(whole.genotypes, gt)
    np.testing.assert_array_equal(whole.positions, pos)
    assert whole.genotypes.base is not None  # a view of the C++ block: no copy


def test_sample_indices_and_wider_integers(tmp_path):
    path = make_store(tmp_path, "wide", samples=12, variants=150, contigs=1, dtype="int16",
                      samples_chunk=5, variants_chunk=40, multiallelic=0.3)
    z = open_zarr(path)
    store = vczstats.open(path)
    chunks = list(store.iter_chunks(samples=[11, 0, 6]))
    assert chunks[0].genotypes.dtype == np.int16
    gt, pos, idx = zarr_selection(z, samples=[store.samples[i] for i in (0, 6, 11)])
    np.testing.assert_array_equal(np.concatenate([c.genotypes for c in chunks]), gt)
    dosage = chunks[0].alt_dosage()
    g = chunks[0].genotypes
    assert dosage[0, 0] == (-1 if (g[0, 0] == -1).any() else int((g[0, 0] > 0).sum()))


def test_zip_store_from_shared_data(shared_data):
    path = shared_data / "ag1000g" / "gamb.X.8-12Mb.n100.derived.vcz.zip"
    z = open_zarr(path)
    store = vczstats.open(path)
    samples = list(store.samples[[3, 50, 99]])
    gt, pos, idx = zarr_selection(z, "X", 9_000_000, 9_050_000, samples)
    assert len(pos) > 1000
    check_chunks(store.iter_chunks("X:9000000-9050000", samples=samples, regions_overlap="pos"),
                 gt, pos, idx)


def test_empty_selection(small_store):
    store = vczstats.open(small_store)
    it = store.iter_chunks("chr1:999999-1000000")
    assert len(it) == 0 and list(it) == []
    assert store.materialize("chr1:999999-1000000").genotypes.shape == (0, 40, 2)


def test_producer_error_surfaces(small_store, tmp_path):
    """A corrupt chunk met by a producer thread raises in Python with the library's message."""
    broken = tmp_path / "broken.vcz"
    shutil.copytree(small_store, broken)
    chunk = broken / "call_genotype" / "3.1.0"
    chunk.write_bytes(b"not a blosc frame" * 4)
    store = vczstats.open(broken)
    with pytest.raises(RuntimeError) as e:
        for _ in store.iter_chunks(threads=2):
            pass
    assert "call_genotype" in str(e.value)
    assert isinstance(e.value, vczstats.FormatError)
    with pytest.raises(vczstats.FormatError):
        vczstats.diversity(store, progress=False)
    # the iterator is usable up to the broken chunk, and close() ends it early
    with store.iter_chunks(threads=1, prefetch=1) as it:
        assert len(next(it)) == 100


GIL_SCRIPT = r"""
import os, sys, threading, time
import vczstats

store, fifo, what = vczstats.open(sys.argv[1]), sys.argv[2], sys.argv[3]
outcome = []

def work():
    try:
        if what == "materialize":
            store.materialize(threads=1)
        else:
            vczstats.diversity(store, threads=1, progress=False)
        outcome.append("ok")
    except Exception as e:  # the empty chunk read from the FIFO
        outcome.append(type(e).__name__)

t = threading.Thread(target=work)
t.start()
deadline = time.monotonic() + 60
fd = None
while t.is_alive():  # this Python code runs only while the worker's C++ call has released the GIL
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # succeeds once a reader waits
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit("the library never opened the chunk")
        time.sleep(0.01)
if fd is not None:
    os.close(fd)
t.join()
# A library that refuses a chunk that is not a regular file (issue 16) ends the call at once
# with an IoError/FormatError instead of blocking on the FIFO; the GIL is then not exercised.
print(outcome[0])
"""


@pytest.mark.parametrize("what", ["materialize", "diversity"])
def test_gil_released(small_store, tmp_path, what):
    """A chunk file that is a FIFO blocks the library's reader thread until someone opens it for
    writing. The test's main thread does that while the library call runs in another Python
    thread: possible only if the call released the GIL (else the two wait for each other, and
    the subprocess times out)."""
    import os
    import subprocess
    import sys

    store = tmp_path / "fifo.vcz"
    shutil.copytree(small_store, store)
    chunk = store / "call_genotype" / "2.0.0"
    chunk.unlink()
    os.mkfifo(chunk)
    r = subprocess.run([sys.executable, "-c", GIL_SCRIPT, str(store), str(chunk), what],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() in ("ok", "FormatError", "IoError"), r.stdout
