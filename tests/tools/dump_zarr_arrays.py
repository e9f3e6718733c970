#!/usr/bin/env python3
"""Dump arrays of a Zarr v2 store as zarr-python reads them, for comparison in the tests.

Usage: dump_zarr_arrays.py STORE OUTDIR ARRAY[:START:STOP] ...

STORE is a directory or a .zip. START:STOP slices the first dimension. For each argument,
OUTDIR gets NAME.bin (numeric, little-endian, bool as uint8) or NAME.json (strings), where NAME
is the argument with ':' replaced by '_', and OUTDIR/manifest.json lists them with dtype and
shape.
"""

import json
import os
import sys

import numpy as np
import zarr


def main():
    store_path, outdir, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(outdir, exist_ok=True)
    store = zarr.ZipStore(store_path, mode="r") if store_path.endswith(".zip") else store_path
    group = zarr.open_group(store, mode="r")
    manifest = []
    for spec in specs:
        name, *bounds = spec.split(":")
        array = group[name]
        start, stop = (int(bounds[0]), int(bounds[1])) if bounds else (0, array.shape[0])
        values = array[start:stop]
        out = spec.replace(":", "_")
        if values.dtype.kind in "OUS":
            path = out + ".json"
            flat = [v.decode() if isinstance(v, bytes) else str(v) for v in values.reshape(-1)]
            with open(os.path.join(outdir, path), "w") as f:
                json.dump(flat, f)
        else:
            path = out + ".bin"
            canonical = values.astype(np.uint8) if values.dtype.kind == "b" else values.astype(
                values.dtype.newbyteorder("<"))
            with open(os.path.join(outdir, path), "wb") as f:
                f.write(np.ascontiguousarray(canonical).tobytes())
        manifest.append({"array": name, "start": start, "stop": stop, "file": path,
                         "shape": list(values.shape)})
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
