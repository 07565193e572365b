#!/usr/bin/env python3
"""torch_oom.py -- PyTorch running out of device memory, for the OOM report.

Holds 4 GiB tensors made by grow() until PyTorch's caching allocator can
get no more (torch.cuda.OutOfMemoryError: its cudaMalloc was refused with
CUDA_ERROR_OUT_OF_MEMORY, and its retry after emptying its cache too),
prints how many it held, frees them and exits 0.  Under the shim the
first refused cudaMalloc writes the OOM report: the request (4 GiB,
device, cuMemAlloc_v2 through PyTorch's libcudart), the device's free and
total memory, and the live set (PyTorch's segments, every tensor held).
Output is deterministic for one GPU model (the count depends on its
memory).
"""
import sys

import torch

CHUNK = 4 << 30


def grow(held):
    held.append(torch.empty(CHUNK, dtype=torch.uint8, device="cuda"))


def main():
    held = []
    try:
        while len(held) < 4096:
            grow(held)
    except torch.cuda.OutOfMemoryError:
        print(f"out of memory after {len(held)} tensors of {CHUNK} bytes")
    else:
        sys.exit("torch_oom: never ran out of memory")
    del held
    torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
