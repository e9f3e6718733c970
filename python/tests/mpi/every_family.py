"""Run by test_mpi.py, alone and under mpirun: every family of the package on one store, each
result saved by rank 0 (exact text of its table, or the matrix's bytes) to OUT/<name>; the other
ranks check that they got None."""

import pickle
import sys

import numpy as np

import vczstats

path, out = sys.argv[1], sys.argv[2]
store = vczstats.open(path)
names = [str(n) for n in store.samples]
sets = {"A": names[:14], "B": names[14:]}
common = dict(progress=False, threads=1)
runs = {
    "afdist": lambda: vczstats.afdist(store, **common),
    "freq": lambda: vczstats.allele_frequencies(store, sample_sets=sets, **common),
    "hardy": lambda: vczstats.hardy_weinberg(store, **common),
    "sample_stats": lambda: vczstats.sample_stats(store, **common),
    "diversity": lambda: vczstats.diversity(store, sample_sets=sets, windows=500, **common),
    "divergence": lambda: vczstats.divergence(store, sample_sets=sets, windows=500, **common),
    "sfs": lambda: vczstats.sfs(store, sample_sets=sets, **common),
    "sfs_array": lambda: vczstats.sfs_array(store, project=8, sample_sets=sets,
                                            joint=("A", "B"), **common),
    "filtered": lambda: vczstats.diversity(store, filters={"maf": 0.1, "hwe": 1e-4}, **common),
    "ld": lambda: vczstats.ld(store, window_variants=10, min_r2=0.0, **common),
    "ld_decay": lambda: vczstats.ld_decay(store, [0, 500, 2000], sample_sets=sets, **common),
    "ld_scores": lambda: vczstats.ld_scores(store, window_variants=5, **common),
    "ld_stats": lambda: vczstats.ld_stats(store, "0,500,2kb", sample_sets=sets, **common),
    "prune": lambda: vczstats.prune(store, window=20, step=3, r2=0.1, **common),
    "king": lambda: vczstats.king(store, **common),
    "king_table": lambda: vczstats.king(store, table=True, min_kinship=-0.1, **common),
    "distance_ibs": lambda: vczstats.distance(store, metric="ibs", flat_missing=True, **common),
    "grm": lambda: vczstats.grm(store, **common),
    "distance": lambda: vczstats.distance(store, **common),
    "pca": lambda: vczstats.pca(store, components=3, method="exact", **common),
    "pca_approx": lambda: vczstats.pca(store, components=2, method="approx", **common),
    "haplotypes": lambda: vczstats.haplotypes(store, windows=1000, **common),
    "ihs": lambda: vczstats.ihs(store, maf=0.01, bins=10, min_bin_sites=2, **common),
    "xpehh": lambda: vczstats.xpehh(store, sample_sets=sets, **common),
}


def exact(value):
    """Bytes that differ when any number differs (dicts: moments.LD's of ld_stats)."""
    if isinstance(value, dict):
        return b"".join(repr(k).encode() + exact(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(exact(v) for v in value) + b"]"
    if isinstance(value, np.ndarray):
        return repr(value.dtype).encode() + np.ascontiguousarray(value).tobytes()
    if isinstance(value, float):
        return value.hex().encode()
    return repr(value).encode()


rank = vczstats.mpi_rank()
for name, run in runs.items():
    r = run()
    if rank != 0:
        assert r is None, f"rank {rank}: {name} gave a result"
        continue
    if isinstance(r, tuple):  # sfs_array
        data = np.ma.getdata(r[0]).tobytes() + repr(r[1]).encode()
    elif isinstance(r, vczstats.SampleMatrix):
        data = pickle.dumps(np.asarray(r))
    elif hasattr(r, "eigenvalues"):  # pca
        data = exact([np.asarray(r.projection), np.asarray(r.eigenvalues)])
    elif hasattr(r, "to_pandas"):
        data = r.to_pandas().to_csv().encode()
    else:
        data = exact(r)
    with open(f"{out}/{name}", "wb") as f:
        f.write(data)
print(f"rank {rank} of {vczstats.mpi_size()}: {len(runs)} runs")
