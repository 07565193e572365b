#!/usr/bin/env python3
"""torchrun_ranks.py -- one rank of a 2-rank torchrun job on one GPU (gloo),
for tests/gpu/torchrun_ranks.sh.

Both ranks use device 0 (one GPU), run a few steps of a tiny model and an
all_reduce over gloo (on CPU tensors: NCCL wants a GPU per rank), then
plant leaks through the CUDA runtime PyTorch loaded (ctypes), one API each
so that they stay separate groups:

  every rank: device 1 x 3158016 bytes (cudaMalloc, never freed)
  rank 1:     pinned 1 x 393216 bytes  (cudaHostAlloc, never freed)

The sizes are ones PyTorch never asks for itself (its segments are
multiples of 2 MiB, its pinned blocks powers of two).  Prints one line
per rank; exits 0.
"""
import ctypes
import os
import sys

import torch
import torch.distributed as dist

EVERY = 3 * 2**20 + 12288
RANK1 = 384 * 1024


def cudart():
    """The CUDA runtime PyTorch loaded (so the leak goes through it)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libcudart.so"):
                return ctypes.CDLL(path)
    for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    sys.exit("torchrun_ranks: cannot find the CUDA runtime PyTorch uses")


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(0)
    torch.manual_seed(0)
    model = torch.nn.Linear(256, 256).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(5):
        x = torch.randn(64, 256, device="cuda")
        loss = model(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    torch.cuda.synchronize()
    rt = cudart()
    p = ctypes.c_void_p()
    if rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(EVERY)) != 0:
        sys.exit("torchrun_ranks: cudaMalloc failed")
    if rank == 1:
        h = ctypes.c_void_p()
        if rt.cudaHostAlloc(ctypes.byref(h), ctypes.c_size_t(RANK1), 0) != 0:
            sys.exit("torchrun_ranks: cudaHostAlloc failed")
    print("rank %d of %d: all_reduce %.0f" % (rank, world, t.item()), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
