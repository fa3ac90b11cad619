"""PyTorch DistributedDataParallel (gloo, CPU): the reference bench/net.sh races singa-tui's
data-parallel jobs against.  The nets, batch sizes and learning rates of bench/torch_models.py;
each of N processes trains on its share of the global batch, SGD with momentum, DDP's bucketed
allreduce overlapping the backward pass.

Adapted from the reference script shared/bench/ddp_torch.py, kept here so that users can
reproduce the race without that folder.

Usage (Debian python3-torch, with /usr/bin/python3):
    /usr/bin/python3 bench/ddp_ref.py --procs 2 --model bigmlp --steps 150
--procs N starts N local processes (RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT) as torchrun
would (Debian bookworm's torchrun fails in its elastic agent).  Without --procs, set those four
variables per process (and GLOO_SOCKET_IFNAME where the host has several interfaces).
Options: --global-batch (default the model's batch), --threads T (intra-op and OpenBLAS threads per
process, default 1), --warmup W (untimed steps, default 5), --lr, --momentum, --seed, --bucket-mb,
--powersgd R (PyTorch's own PowerSGD communication hook, rank R, error feedback and warm start,
plain allreduce for the first 2 steps; 0, the default: plain allreduce).  Under the hook the
model goes in one bucket unless --bucket-mb is given: the gloo of Debian's PyTorch aborts with
several buckets there ("op.preamble.length <= op.nbytes").

Prints on rank 0: RESULT images_per_sec=<global images/s> seconds=<timed loop> steps=<n> procs=<N>
params=<floats>: global batch x timed steps / wall time of the timed loop, between two barriers.
"""
import argparse
import os
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--model", required=True, choices=["bigmlp", "smallmlp", "lenet"])
ap.add_argument("--global-batch", type=int, default=None)
ap.add_argument("--steps", type=int, default=150)
ap.add_argument("--warmup", type=int, default=5)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--lr", type=float, default=None)
ap.add_argument("--momentum", type=float, default=0.9)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--bucket-mb", type=float, default=25)
ap.add_argument("--procs", type=int, default=0, help="start this many local processes")
ap.add_argument("--port", type=int, default=29512)
ap.add_argument("--powersgd", type=int, default=0, help="PowerSGD hook of rank R (0: plain allreduce)")
args = ap.parse_args()

if args.procs and "RANK" not in os.environ:
    import subprocess
    kids = []
    for r in range(args.procs):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(args.procs), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(args.port))
        kids.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env=env))
    sys.exit(max(k.wait() for k in kids))

os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
os.environ["OMP_NUM_THREADS"] = str(args.threads)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fmnist  # noqa: E402
from torch_models import build, defaults  # noqa: E402

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.set_num_threads(args.threads)
torch.manual_seed(args.seed)

gbatch = args.global_batch or defaults[args.model][0]
if gbatch % world:
    sys.exit(f"global batch {gbatch} does not split over {world} processes")
batch = gbatch // world
lr = args.lr if args.lr is not None else defaults[args.model][1]

xtr, ytr, _, _ = fmnist.load()
xtr_t, ytr_t = torch.from_numpy(xtr), torch.from_numpy(ytr)
net = build(args.model)
nparams = sum(p.numel() for p in net.parameters())
if args.powersgd and "--bucket-mb" not in sys.argv:
    args.bucket_mb = 4096
model = nn.parallel.DistributedDataParallel(net, bucket_cap_mb=args.bucket_mb)
if args.powersgd:
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook
    state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=args.powersgd,
                                        start_powerSGD_iter=2, use_error_feedback=True, warm_start=True)
    model.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=args.momentum)
lossf = nn.CrossEntropyLoss()
idx = torch.randperm(len(xtr_t), generator=torch.Generator().manual_seed(args.seed))


def step(i):
    lo = ((i * world + rank) * batch) % (len(idx) - batch)
    bi = idx[lo:lo + batch]
    opt.zero_grad(set_to_none=True)
    lossf(model(xtr_t[bi]), ytr_t[bi]).backward()
    opt.step()


for i in range(args.warmup):
    step(i)
dist.barrier()
t0 = time.perf_counter()
for i in range(args.steps):
    step(args.warmup + i)
dist.barrier()
sec = time.perf_counter() - t0
if rank == 0:
    print(f"RESULT images_per_sec={gbatch * args.steps / sec:.0f} seconds={sec:.3f} steps={args.steps} procs={world} "
          f"params={nparams}", flush=True)
dist.destroy_process_group()
