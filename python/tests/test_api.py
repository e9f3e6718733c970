"""The store object, arguments, errors, progress and the pandas / xarray views."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import vczstats
from conftest import open_zarr, run_cli


def test_store_against_zarr(small_store):
    z = open_zarr(small_store)
    s = vczstats.open(small_store)
    assert list(s.samples) == list(z["sample_id"][:])
    assert s.contigs == list(z["contig_id"][:])
    assert s.num_variants == z["variant_position"].shape[0]
    assert s.ploidy == z["call_genotype"].shape[2]
    assert list(s.contig_lengths) == list(z["contig_length"][:])
    info = s.info()
    arrays = {a["name"]: a for a in info["arrays"]}
    for name in ("call_genotype", "variant_position", "sample_id"):
        assert arrays[name]["shape"] == list(z[name].shape)
        assert arrays[name]["chunks"] == list(z[name].chunks)
    assert arrays["call_genotype"]["dtype"] == "int8"
    assert arrays["call_genotype"]["chunks_total"] == 6 * 3
    assert info["variants"] == 600 and info["samples"] == 40 and info["kind"] == "directory"
    # Phasing against python3-zarr's own read of call_genotype_phased.
    flags = z["call_genotype_phased"][:]
    assert info["phasing"]["calls"] == flags.size
    assert info["phasing"]["unphased_calls"] == int((flags == 0).sum())
    assert "600 variants x 40 samples" in repr(s)


def test_info_agrees_with_cli(cli, small_store):
    want = json.loads(run_cli(cli, "info", small_store, "--format", "json", progress_flag=False))
    got = vczstats.open(small_store).info()
    for key in ("samples", "hidden_samples", "variants", "ploidy", "contigs", "zarr_format",
                "vcf_zarr_version", "kind", "phasing"):
        assert got[key] == want[key], key
    for a, b in zip(got["arrays"], want["arrays"]):
        for key in ("name", "dtype", "shape", "chunks", "codecs", "stored_bytes",
                    "chunks_present", "chunks_total"):
            assert a[key] == b[key], (a["name"], key)


def test_errors_map_to_python_exceptions(small_store, tmp_path):
    with pytest.raises(OSError, match="no such file"):
        vczstats.open(tmp_path / "absent.vcz")
    (tmp_path / "empty.vcz").mkdir()
    with pytest.raises(RuntimeError, match="no Zarr group") as e:  # not VCF Zarr
        vczstats.open(tmp_path / "empty.vcz")
    assert isinstance(e.value, vczstats.FormatError) and isinstance(e.value, vczstats.Error)
    s = vczstats.open(small_store)
    with pytest.raises(ValueError, match="'nobody'"):
        vczstats.diversity(s, samples=["nobody"], progress=False)
    with pytest.raises(vczstats.UsageError, match="region"):
        vczstats.diversity(s, regions="chr1:9-1", progress=False)
    with pytest.raises(ValueError, match="unknown device"):
        vczstats.afdist(s, device="tpu", progress=False)
    with pytest.raises(ValueError, match="two populations|population"):
        vczstats.divergence(s, progress=False)
    with pytest.raises(ValueError, match="outside"):
        vczstats.diversity(s, samples=[400], progress=False)
    with pytest.raises(TypeError, match="windows"):
        vczstats.afdist(s, windows=1000)
    with pytest.raises(ValueError, match="exactly one"):
        vczstats.fstats(s, progress=False)
    if vczstats.gpu_count() == 0:
        with pytest.raises(ValueError, match="GPU"):
            vczstats.afdist(s, device="gpu", progress=False)
        with pytest.raises(ValueError, match="GPU"):
            s.iter_chunks(device="gpu")
    assert issubclass(vczstats.IoError, OSError) and issubclass(vczstats.IoError, vczstats.Error)
    assert not issubclass(vczstats.UsageError, RuntimeError)
    assert issubclass(vczstats.FormatError, RuntimeError)
    assert issubclass(vczstats.CudaError, RuntimeError)


def test_sites_only_store(tmp_path, small_store):
    import shutil

    sites = tmp_path / "sites.vcz"
    shutil.copytree(small_store, sites)
    for name in ("call_genotype", "call_genotype_mask", "call_genotype_phased"):
        shutil.rmtree(sites / name, ignore_errors=True)
    s = vczstats.open(sites)
    with pytest.raises(ValueError, match="no call_genotype"):
        s.iter_chunks()
    # Every statistic counts genotype calls: an error, not a table of zeros.
    for stat in (vczstats.afdist, vczstats.diversity):
        with pytest.raises(vczstats.FormatError, match="no call_genotype"):
            stat(s, progress=False)


def test_progress_callback_and_errors_from_it(small_store):
    calls = []
    r = vczstats.diversity(small_store, progress=lambda d, t, v: calls.append((d, t, v)),
                           threads=1)
    assert len(r) > 0
    assert calls and calls[-1][0] == calls[-1][1] == 6 and calls[-1][2] == 600

    def stop(done, total, variants):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # raised in the C++ run, it ends the run
        vczstats.diversity(small_store, progress=stop, threads=1)
    assert len(vczstats.diversity(small_store, progress=False)) == len(r)  # still usable


def test_plain_progress_bar(small_store, monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    vczstats.afdist(small_store, progress=True, threads=1)
    err = capsys.readouterr().err
    assert "vczstats afdist: [" in err and "100%" in err and "600 variants" in err
    vczstats.afdist(small_store, threads=1)  # progress=None: short runs show nothing
    assert capsys.readouterr().err == ""


def test_windows_arguments(small_store):
    assert vczstats.windows_by_position(10, 5) == vczstats.Windows(size=10, step=5)
    with pytest.raises(ValueError):
        vczstats.windows_by_variant(0)
    with pytest.raises(ValueError):
        vczstats.windows_from_breakpoints([5, 5])
    s = vczstats.open(small_store)
    with pytest.raises(ValueError, match="name the contig"):
        vczstats.diversity(s, windows=[1, 100, 200])  # two contigs: ambiguous
    a = vczstats.diversity(s, windows=[1, 1001, 2001], regions="chr1", progress=False)
    b = vczstats.diversity(s, windows=vczstats.windows_from_intervals(
        [("chr1", 1, 1000), ("chr1", 1001, 2000), ("chr2", 1, 1000)]), regions="chr1",
        progress=False)
    np.testing.assert_array_equal(a["pi_sum"], b["pi_sum"][: len(a)])


def test_regions_forms(small_store):
    s = vczstats.open(small_store)
    a = vczstats.allele_frequencies(s, regions="chr1:100-900,chr2:1-", progress=False)
    b = vczstats.allele_frequencies(s, regions=[("chr1", 100, 900), ("chr2", 1, None)],
                                    progress=False)
    np.testing.assert_array_equal(a["variant"], b["variant"])
    c = vczstats.allele_frequencies(s, regions=["chr1:100-900", "chr2"], progress=False)
    np.testing.assert_array_equal(a["variant"], c["variant"])


def test_pandas_and_xarray_views(small_store, small_pops):
    _, sets = small_pops
    s = vczstats.open(small_store)
    d = s.diversity(sample_sets=sets, windows=1000, progress=False)
    df = d.to_pandas()
    assert list(df.columns) == d.columns and len(df) == len(d)
    assert str(df["population"].dtype) == "category"
    ds = d.to_xarray()
    assert ds.stat_diversity.dims == ("windows", "cohorts")
    assert list(ds.cohorts.values) == ["P0", "P1", "P2"]
    w = d.windows
    assert len(w) == ds.sizes["windows"]
    np.testing.assert_array_equal(ds.window_start.values, w["start"].to_numpy())
    for k, pop in enumerate(["P0", "P1", "P2"]):
        rows = d["population"] == pop
        np.testing.assert_array_equal(ds.stat_diversity.values[:, k], d["pi_sum"][rows])
        np.testing.assert_array_equal(ds.stat_Tajimas_D.values[:, k], d["tajima_d"][rows])
    f = s.allele_frequencies(sample_sets=sets, progress=False).to_xarray()
    counts = f.cohort_allele_count.values
    total = f.variant_obs_ct.values
    assert np.array_equal(np.where(counts >= 0, counts, 0).sum(axis=2), total)
    smp = s.sample_stats(sample_sets=sets, progress=False).to_xarray()
    assert smp.sizes["samples"] == 40 and "sample_call_rate" in smp
    assert "sfs_n" in s.sfs(sample_sets=sets, progress=False).to_xarray().coords
    assert "stat_afdist" in s.afdist(progress=False).to_xarray()
    assert "<vczstats.Result diversity" in repr(d)
    with pytest.raises(KeyError, match="not a column"):
        d["nope"]


def test_ctrl_c_stops_a_run(shared_data):
    """SIGINT while the library computes (GIL released) ends the run with KeyboardInterrupt
    within a work unit or two, not at its end."""
    import signal
    import threading
    import time

    store = vczstats.open(shared_data / "ag1000g" / "gamb.X.8-12Mb.n100.derived.vcz.zip")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    finished = None
    try:
        timer.start()
        vczstats.diversity(store, windows=10_000, threads=1, max_unit_variants=2000,
                           progress=False)
        finished = time.monotonic() - start
        time.sleep(2)  # a run faster than the timer: the interrupt lands here instead
    except KeyboardInterrupt:
        pass
    timer.cancel()
    assert finished is None, f"the run finished in {finished:.2f} s before the signal"
    assert time.monotonic() - start < 5


def test_docstring_examples():
    """The examples in the docstrings that need no data run as written."""
    import doctest

    from vczstats import _args, _result, _stats, _store, plot

    for module in (vczstats, _args, _result, _stats, _store, plot):
        failed, _ = doctest.testmod(module, extraglobs={"vczstats": vczstats})
        assert failed == 0, module.__name__
