"""Load Fashion-MNIST from the Debian package dataset-fashion-mnist (gzipped IDX files).

Copied from the reference benchmark folder (shared/bench/fmnist.py) so that bench/torch_ref.py runs
without it; the only change: $SINGA_BENCH_DATA overrides the folder, as in bench/common.lua."""
import gzip
import os
import numpy as np

DIR = os.environ.get("SINGA_BENCH_DATA", "/usr/share/datasets/fashion-mnist").rstrip("/")


def _read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load():
    """Returns (xtr, ytr, xte, yte): images float32 in [0,1] shape (N,784), labels int64."""
    xtr = _read_idx(f"{DIR}/train-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255.0
    ytr = _read_idx(f"{DIR}/train-labels-idx1-ubyte.gz").astype(np.int64)
    xte = _read_idx(f"{DIR}/t10k-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255.0
    yte = _read_idx(f"{DIR}/t10k-labels-idx1-ubyte.gz").astype(np.int64)
    return xtr, ytr, xte, yte


if __name__ == "__main__":
    xtr, ytr, xte, yte = load()
    print(xtr.shape, ytr.shape, xte.shape, yte.shape, xtr.dtype, xtr.min(), xtr.max(),
          np.bincount(ytr), np.bincount(yte))
