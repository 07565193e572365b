"""Many Python threads allocating at once through ctypes, for
check_python.sh: the (code, offset) cache and the location table under
concurrent first sightings.  8 threads, each 300 allocations and frees from
one of 6 call paths of different depths; nothing leaks but one planted
allocation per thread (size 60000 + thread number)."""
import ctypes
import threading

cu = ctypes.CDLL("libcuda.so.1")
ctx = ctypes.c_void_p()
assert cu.cuInit(0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0


def one(size, free=True):
    p = ctypes.c_uint64()
    assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size)) == 0
    if free:
        assert cu.cuMemFree_v2(ctypes.c_uint64(p.value)) == 0


def deep(n, size):
    if n == 0:
        one(size)
    else:
        deep(n - 1, size)


def work(k):
    assert cu.cuCtxSetCurrent(ctx) == 0
    for i in range(300):
        deep((i + k) % 6, 256 + i)
    one(60000 + k, False)


ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in ts:
    t.start()
for t in ts:
    t.join()
