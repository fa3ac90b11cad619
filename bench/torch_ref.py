"""PyTorch CPU training benchmark on Fashion-MNIST (Debian IDX files): the reference that
bench/run.sh compares singa-tui against.

Adapted from the reference script shared/bench/train_torch.py (same nets, batch sizes, learning
rates, SGD momentum 0.9, thread control and timing), copied here so that users can reproduce the
comparison without that folder.  Additions: --max-batches, --warmup, --no-eval and a machine-readable
"RESULT images_per_sec=..." line at the end (all timed images / all
timed seconds, over the epochs run).

Usage: /usr/bin/python3 bench/torch_ref.py --model {bigmlp,smallmlp,lenet} --threads N --epochs E
        [--blas-threads B] [--batch B] [--lr LR] [--momentum M] [--max-train N] [--time-cap SEC]
        [--no-mkldnn] [--max-batches N] [--warmup K] [--no-eval]

Thread control: OMP_NUM_THREADS is set to --threads and OPENBLAS_NUM_THREADS to --blas-threads
(default --threads) *before* torch is imported (torch.set_num_threads does not reach OpenBLAS's own pthread pool), then
torch.set_num_threads(N) is called too.  On 2 cores, compare against PyTorch's best 2-thread setting:
the better of `OMP_WAIT_POLICY=PASSIVE ... --threads 2` and `--threads 1 --blas-threads 2`.

Throughput = training images / wall time of the training loop (forward, loss, backward, optimizer
step, batch slicing; test evaluation excluded), per epoch.  --warmup K first trains K batches
untimed; --max-batches N stops each epoch after N timed batches.
"""
import argparse
import os
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True, choices=["bigmlp", "smallmlp", "lenet"])
ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads and OMP_NUM_THREADS")
ap.add_argument("--blas-threads", type=int, default=None, help="OPENBLAS_NUM_THREADS (default: --threads)")
ap.add_argument("--epochs", type=int, default=1)
ap.add_argument("--batch", type=int, default=None)
ap.add_argument("--lr", type=float, default=None)
ap.add_argument("--momentum", type=float, default=0.9)
ap.add_argument("--max-train", type=int, default=60000, help="use only the first N (of a fixed shuffle) training images")
ap.add_argument("--time-cap", type=float, default=1e9, help="stop after the epoch during which this many training seconds passed")
ap.add_argument("--no-mkldnn", action="store_true", help="disable oneDNN (conv falls back to im2col + BLAS)")
ap.add_argument("--flush-denormal", action="store_true", help="torch.set_flush_denormal(True) (FTZ/DAZ)")
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--max-batches", type=int, default=0, help="time at most N batches per epoch (0: the whole epoch)")
ap.add_argument("--warmup", type=int, default=0, help="train K batches untimed before the first epoch")
ap.add_argument("--no-eval", action="store_true", help="skip the test-set evaluation after each epoch")
ap.add_argument("--layer-times", action="store_true",
                help="print each module's mean forward and backward ms per timed batch (LAYER lines)")
args = ap.parse_args()

os.environ["OPENBLAS_NUM_THREADS"] = str(args.blas_threads or args.threads)
os.environ["OMP_NUM_THREADS"] = str(args.threads)

import ctypes  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fmnist  # noqa: E402
from torch_models import build, defaults  # noqa: E402

batch = args.batch or defaults[args.model][0]
lr = args.lr if args.lr is not None else defaults[args.model][1]

torch.set_num_threads(args.threads)
torch.manual_seed(args.seed)
if args.flush_denormal:
    print("flush_denormal:", torch.set_flush_denormal(True))
if args.no_mkldnn:
    torch.backends.mkldnn.enabled = False

try:
    ob = ctypes.CDLL("libopenblas.so.0")
    ob.openblas_get_corename.restype = ctypes.c_char_p
    corename = ob.openblas_get_corename().decode()
    ob_threads = ob.openblas_get_num_threads()
except OSError:
    corename, ob_threads = "?", -1


xtr, ytr, xte, yte = fmnist.load()
rng = np.random.default_rng(args.seed)
perm = rng.permutation(len(xtr))[: args.max_train]
xtr_t = torch.from_numpy(xtr[perm].copy())
ytr_t = torch.from_numpy(ytr[perm].copy())
xte_t = torch.from_numpy(xte)
yte_t = torch.from_numpy(yte)
ntr = len(xtr_t)

model = build(args.model)
nparams = sum(p.numel() for p in model.parameters())
opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=args.momentum)
lossf = nn.CrossEntropyLoss()

print(f"torch {torch.__version__} threads={torch.get_num_threads()} openblas_core={corename} "
      f"openblas_threads={ob_threads} mkldnn_enabled={torch.backends.mkldnn.enabled} "
      f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')} "
      f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}")
print(f"model={args.model} params={nparams} batch={batch} lr={lr} momentum={args.momentum} "
      f"train_images={ntr} test_images={len(xte_t)}", flush=True)


def mem():
    """(VmRSS, VmHWM) of this process in MB, from /proc/self/status."""
    d = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                k, v = line.split(":")
                d[k] = int(v.split()[0]) / 1024
    return d.get("VmRSS", 0), d.get("VmHWM", 0)


print("mem after data load + model build: VmRSS %.0f MB, VmHWM %.0f MB" % mem(), flush=True)


def evaluate():
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(xte_t), 1000):
            out = model(xte_t[i:i + 1000])
            correct += (out.argmax(1) == yte_t[i:i + 1000]).sum().item()
    model.train()
    return correct / len(xte_t)


results = []
train_time_total = 0.0
g = torch.Generator().manual_seed(args.seed)


def train_batch(bi):
    xb, yb = xtr_t[bi], ytr_t[bi]
    opt.zero_grad(set_to_none=True)
    loss = lossf(model(xb), yb)
    loss.backward()
    opt.step()
    return loss.item()


if args.warmup > 0:
    widx = torch.randperm(ntr, generator=torch.Generator().manual_seed(args.seed + 1))
    for b in range(min(args.warmup, ntr // batch)):
        train_batch(widx[b * batch:(b + 1) * batch])

# Per-module times: forward between the pre- and post-hooks; backward from the moment the
# gradient of a module's output arrives to the moment the gradient of its input does (for the
# first module, to the end of backward()).
layer_fwd, layer_bwd, timing = {}, {}, {"on": False}
if args.layer_times:
    mods = list(model.children())
    grad_at = {}

    def pre(i):
        def hook(m, inp):
            timing[i] = time.perf_counter()
        return hook

    def post(i):
        def hook(m, inp, out):
            if timing["on"]:
                layer_fwd[i] = layer_fwd.get(i, 0.0) + time.perf_counter() - timing[i]
            if out.requires_grad:
                out.register_hook(lambda g: grad_at.__setitem__(i, time.perf_counter()))
        return hook

    for i, m in enumerate(mods):
        m.register_forward_pre_hook(pre(i))
        m.register_forward_hook(post(i))
    plain_backward = torch.Tensor.backward

    def timed_backward(self, *a, **k):
        grad_at.clear()
        plain_backward(self, *a, **k)
        end = time.perf_counter()
        if timing["on"]:
            for i in range(len(mods)):
                if i in grad_at:
                    layer_bwd[i] = layer_bwd.get(i, 0.0) + grad_at.get(i - 1, end) - grad_at[i]
    torch.Tensor.backward = timed_backward

for ep in range(1, args.epochs + 1):
    timing["on"] = True
    idx = torch.randperm(ntr, generator=g)
    nb = ntr // batch  # drop last partial batch
    if args.max_batches > 0:
        nb = min(nb, args.max_batches)
    loss_sum = 0.0
    t0 = time.perf_counter()
    for b in range(nb):
        loss_sum += train_batch(idx[b * batch:(b + 1) * batch])
    dt = time.perf_counter() - t0
    train_time_total += dt
    te0 = time.perf_counter()
    acc = float("nan") if args.no_eval else evaluate()
    te = time.perf_counter() - te0
    ips = nb * batch / dt
    results.append((ep, dt, ips, loss_sum / nb, acc))
    print(f"epoch {ep}: train {dt:.2f} s, {ips:.0f} images/s, {dt / nb * 1e3:.3f} ms/batch, "
          f"mean train loss {loss_sum / nb:.4f}, test acc {acc * 100:.2f}% (eval {te:.2f} s)", flush=True)
    if train_time_total > args.time_cap:
        print(f"time cap {args.time_cap}s reached after epoch {ep}")
        break

if args.layer_times:
    batches = sum(round(ips * dt) for e, dt, ips, l, a in results) // batch
    for i, m in enumerate(model.children()):
        print(f"LAYER {i} {type(m).__name__} {layer_fwd.get(i, 0.0) * 1e3 / batches:.4f} "
              f"{layer_bwd.get(i, 0.0) * 1e3 / batches:.4f}")
print("mem at end: VmRSS %.0f MB, VmHWM %.0f MB" % mem())
print("EPOCHS " + " | ".join(f"ep{e}: {ips:.0f} img/s, acc {a * 100:.2f}%" for e, dt, ips, l, a in results))
nimg = sum(round(ips * dt) for e, dt, ips, l, a in results)
print(f"RESULT images_per_sec={nimg / train_time_total:.0f} seconds={train_time_total:.3f} batches={nimg // batch} "
      f"threads={args.threads} blas_threads={args.blas_threads or args.threads} openblas_core={corename}")
