#!/usr/bin/env python3
"""torch_leak.py -- PyTorch with two planted leaks, for run-gpu-tests.sh.

Allocates and frees tensors through PyTorch's allocator (whichever
PYTORCH_CUDA_ALLOC_CONF selects: the caching allocator, expandable segments
or cudaMallocAsync), pins host memory, then plants two leaks by calling the
CUDA runtime that PyTorch itself loaded, through ctypes:

  device: 1 x 5255168 bytes (cudaMalloc, never freed)
  pinned: 1 x 393216 bytes  (cudaHostAlloc, never freed)

The sizes are chosen so PyTorch never asks for them itself (its segments
are multiples of 2 MiB, its pinned blocks powers of two).  PyTorch keeps
its cached segments until exit and never frees them: without suppressions
they are reported as leaks too, so the test asserts the planted ones by
kind and size, not the totals.  Output is deterministic.
"""
import ctypes
import os
import sys

import torch

PLANT_DEVICE = 5 * 2**20 + 12288
PLANT_PINNED = 384 * 1024


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
    sys.exit("torch_leak: cannot find the CUDA runtime PyTorch uses")


def main():
    dev = torch.device("cuda")
    print("torch: allocator backend", torch.cuda.get_allocator_backend())
    a = torch.arange(1 << 20, dtype=torch.int64, device=dev)
    b = a * 3
    c = torch.full((3 << 20,), 7, dtype=torch.uint8, device=dev)
    print("torch: sums", int(b.sum().item()), int(c.sum(dtype=torch.int64).item()))
    del b, c
    big = torch.zeros(64 << 20, dtype=torch.uint8, device=dev)
    print("torch: big", int(big.sum(dtype=torch.int64).item()))
    del big
    torch.cuda.synchronize()
    torch.cuda.empty_cache()   # returns cached segments: exercises the frees

    h = torch.arange(4096, dtype=torch.int32).pin_memory()
    g = h.to(dev, non_blocking=True)
    torch.cuda.synchronize()
    print("torch: pinned round trip", int(g.sum().item()))

    rt = cudart()
    rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    rt.cudaHostAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                                 ctypes.c_uint]
    rt.cudaFree.argtypes = [ctypes.c_void_p]
    tmp = ctypes.c_void_p()
    rc0 = rt.cudaMalloc(ctypes.byref(tmp), 1 << 20)
    rc0 |= rt.cudaFree(tmp)
    leak = ctypes.c_void_p()
    rc1 = rt.cudaMalloc(ctypes.byref(leak), PLANT_DEVICE)
    hleak = ctypes.c_void_p()
    rc2 = rt.cudaHostAlloc(ctypes.byref(hleak), PLANT_PINNED, 0)
    print("torch: cudart calls returned", rc0, rc1, rc2)
    print("torch: planted leaks: device 1 x %d bytes, pinned 1 x %d bytes"
          % (PLANT_DEVICE, PLANT_PINNED))
    return 0 if rc0 == rc1 == rc2 == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
