#!/usr/bin/env python3
"""cupy_leak.py -- CuPy with two planted leaks, for run-gpu-tests.sh.

Computes with CuPy arrays (its memory pool), frees the pool's blocks, and
plants through cupy.cuda.runtime:

  device: 1 x 3153920 bytes (runtime.malloc, never freed)
  pinned: 1 x 327680 bytes  (runtime.hostAlloc, never freed)

A managed buffer and a device buffer are allocated and freed.  CuPy's pool
may keep blocks until exit; the test asserts the planted leaks by kind and
size.  Output is deterministic.
"""
import sys

import cupy as cp
import cupy.cuda.runtime as rt

PLANT_DEVICE = 3 * 2**20 + 8192
PLANT_PINNED = 320 * 1024


def main():
    x = cp.arange(1 << 20, dtype=cp.int64)
    y = x * 5
    print("cupy: sum", int(y.sum()))
    del x, y
    cp.cuda.Device(0).synchronize()
    cp.get_default_memory_pool().free_all_blocks()

    q = rt.malloc(1 << 20)
    rt.memset(q, 0, 1 << 20)
    rt.free(q)
    m = rt.mallocManaged(1 << 16, 1)   # cudaMemAttachGlobal
    rt.free(m)

    rt.malloc(PLANT_DEVICE)
    rt.hostAlloc(PLANT_PINNED, 0)
    print("cupy: planted leaks: device 1 x %d bytes, pinned 1 x %d bytes"
          % (PLANT_DEVICE, PLANT_PINNED))
    return 0


if __name__ == "__main__":
    sys.exit(main())
