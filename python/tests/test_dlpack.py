"""The protocol objects of device blocks: DLPack capsules (read back with ctypes, and consumed
by numpy's from_dlpack on the host), __dlpack_device__ and __cuda_array_interface__. Device
blocks themselves are tested on a GPU (test_gpu.py); these fields are the same object's."""

from __future__ import annotations

import ctypes
import gc
import sys

import numpy as np
import pytest

import vczstats
from vczstats import _core


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]

api = ctypes.pythonapi
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def managed(capsule) -> DLManagedTensor:
    return DLManagedTensor.from_address(api.PyCapsule_GetPointer(capsule, b"dltensor"))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_capsule_fields(dtype):
    a = np.arange(24, dtype=dtype).reshape(4, 3, 2)
    x = _core._device_array_over(a, 2, 3)  # labelled CUDA device 3 (never dereferenced)
    cap = x.__dlpack__(stream=7)
    assert api.PyCapsule_IsValid(cap, b"dltensor")
    t = managed(cap).dl_tensor
    assert t.data == a.ctypes.data
    assert (t.device.device_type, t.device.device_id) == (2, 3)
    assert t.ndim == 3 and [t.shape[i] for i in range(3)] == [4, 3, 2]
    assert not t.strides  # C order
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (0, 8 * a.itemsize, 1)
    assert t.byte_offset == 0
    assert x.__dlpack_device__() == (2, 3)
    assert x.shape == (4, 3, 2) and x.dtype == dtype and x.device == "gpu:3"
    assert x.nbytes == a.nbytes and x.ptr == a.ctypes.data and len(x) == 4


def test_cuda_array_interface_fields():
    a = np.zeros((5, 2, 2), dtype=np.int16)
    x = _core._device_array_over(a, 2, 0)
    cai = x.__cuda_array_interface__
    assert cai["shape"] == (5, 2, 2)
    assert cai["typestr"] == "<i2"
    assert cai["data"] == (a.ctypes.data, False)
    assert cai["strides"] is None and cai["version"] == 3
    assert "stream" not in cai  # the data is complete when handed out
    with pytest.raises(TypeError, match="cupy"):
        np.asarray(x)  # device memory has no host view


def test_host_arrays():
    a = np.arange(12, dtype=np.int8).reshape(2, 3, 2)
    x = _core._device_array_over(a, 1, 0)
    assert not hasattr(x, "__cuda_array_interface__")
    assert x.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(x)  # numpy consumes our capsule
    np.testing.assert_array_equal(b, a)
    a[1, 2, 1] = 99  # no copy: the consumer sees the producer's memory
    assert b[1, 2, 1] == 99
    np.testing.assert_array_equal(np.asarray(x), a)
    with pytest.raises(BufferError):
        x.__dlpack__(stream=1)


def test_capsule_ownership():
    """The capsule keeps the memory's owner alive; the deleter (by the consumer after renaming
    the capsule, or the capsule's destructor) releases it once."""
    a = np.arange(6, dtype=np.int8)
    base = sys.getrefcount(a)
    x = _core._device_array_over(a, 1, 0)
    assert sys.getrefcount(a) == base + 1
    cap = x.__dlpack__()
    del x
    gc.collect()
    assert sys.getrefcount(a) == base + 1  # held by the capsule now
    del cap  # never consumed: the capsule's destructor calls the deleter
    gc.collect()
    assert sys.getrefcount(a) == base

    cap = _core._device_array_over(a, 1, 0).__dlpack__()
    m = managed(cap)
    api.PyCapsule_SetName(cap, b"used_dltensor")  # what a consumer does
    del cap
    gc.collect()
    assert sys.getrefcount(a) == base + 1  # consumed: the consumer must call the deleter
    m.deleter(ctypes.pointer(m))
    assert sys.getrefcount(a) == base


def test_block_arrays_own_their_memory(small_store):
    store = vczstats.open(small_store)
    chunk = next(iter(store.iter_chunks(threads=1)))
    g = chunk.genotypes
    copy = g.copy()
    del chunk
    gc.collect()
    np.testing.assert_array_equal(g, copy)  # the block's memory lives as long as the array
    y = np.from_dlpack(g)  # numpy's own DLPack export of a block
    np.testing.assert_array_equal(y, copy)
