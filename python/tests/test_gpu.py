"""Device blocks and statistics on the GPU (skipped without a usable GPU): device arrays equal
the CPU's blocks, CuPy takes them without a copy (when CuPy is installed; otherwise they are
copied back with the CUDA runtime through ctypes), and statistics equal the CPU's."""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest

import vczstats

pytestmark = pytest.mark.skipif(vczstats.gpu_count() == 0,
                                reason="skipped: no usable GPU (or a build without CUDA)")


def to_host(x) -> np.ndarray:
    """A device array's contents, by CuPy when installed, else cudaMemcpy through ctypes."""
    try:
        import cupy

        y = cupy.from_dlpack(x)
        assert y.data.ptr == x.ptr  # no copy
        z = cupy.asarray(x)  # __cuda_array_interface__
        assert z.data.ptr == x.ptr
        return cupy.asnumpy(y)
    except ImportError:
        pass
    cudart = None
    for name in (ctypes.util.find_library("cudart"), "libcudart.so", "libcudart.so.13",
                 "libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so"):
        try:
            cudart = ctypes.CDLL(name) if name else None
        except OSError:
            continue
        if cudart is not None:
            break
    assert cudart is not None, "neither CuPy nor the CUDA runtime library found"
    out = np.empty(x.shape, dtype=x.dtype)
    err = cudart.cudaMemcpy(ctypes.c_void_p(out.ctypes.data), ctypes.c_void_p(x.ptr),
                            ctypes.c_size_t(out.nbytes), 2)  # cudaMemcpyDeviceToHost
    assert err == 0, err
    return out


def test_device_chunks_equal_host_chunks(small_store):
    store = vczstats.open(small_store)
    samples = [store.samples[i] for i in (1, 17, 33)]
    host = list(store.iter_chunks("chr1:500-2500", samples=samples))
    with store.iter_chunks("chr1:500-2500", samples=samples, device="gpu", threads=2) as it:
        assert it.device == "gpu:0"
        device = list(it)
    assert len(device) == len(host)
    for d, h in zip(device, host):
        assert isinstance(d.genotypes, vczstats.DeviceArray)
        assert d.genotypes.__dlpack_device__() == (2, 0)
        cai = d.genotypes.__cuda_array_interface__
        assert cai["shape"] == h.genotypes.shape and cai["typestr"] == "|i1"
        np.testing.assert_array_equal(to_host(d.genotypes), h.genotypes)
        np.testing.assert_array_equal(d.positions, h.positions)
    whole = store.materialize("chr1:500-2500", samples=samples, device="gpu")
    np.testing.assert_array_equal(to_host(whole.genotypes),
                                  np.concatenate([h.genotypes for h in host]))


def test_statistics_equal_on_both_devices(small_store, small_pops):
    _, sets = small_pops
    store = vczstats.open(small_store)
    for fn in (vczstats.diversity, vczstats.divergence):
        cpu = fn(store, sample_sets=sets, windows=1000, device="cpu", progress=False)
        gpu = fn(store, sample_sets=sets, windows=1000, device="gpu", progress=False)
        assert gpu.run["device"].startswith("gpu 0"), gpu.run["device"]
        for name in cpu.columns:
            np.testing.assert_array_equal(cpu[name], gpu[name])


@pytest.mark.skipif(vczstats.gpu_count() < 2, reason="skipped: fewer than two GPUs")
def test_statistics_shared_among_gpus_equal_the_cpu(small_store, small_pops):
    """device="gpu:0,1": one process shares the run among two GPUs, a thread each, and merges the
    shares in order: the rows of one CPU process."""
    _, sets = small_pops
    store = vczstats.open(small_store)
    for fn in (vczstats.diversity, vczstats.divergence):
        cpu = fn(store, sample_sets=sets, windows=1000, device="cpu", progress=False)
        for device in ("gpu:0,1", "gpu:all"):
            gpu = fn(store, sample_sets=sets, windows=1000, device=device, progress=False)
            assert "shares on threads of one process" in gpu.run["device"], gpu.run["device"]
            for name in cpu.columns:
                np.testing.assert_array_equal(cpu[name], gpu[name])
