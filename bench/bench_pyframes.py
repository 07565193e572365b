"""What Python frames add to a stack capture (bench/bench_pyframes.c).

usage: bench_pyframes.py MODULE.so [DEPTH [ITERATIONS]]

Recurses DEPTH Python frames deep (default 50), then times, side by side
in one run, a capture with Python frames off and on.  Prints ns per
capture, best of 5 rounds.
"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.bench_capture.restype = ctypes.c_double
lib.bench_capture.argtypes = [ctypes.c_int, ctypes.c_int,
                              ctypes.POINTER(ctypes.c_int)]
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 50
iters = int(sys.argv[3]) if len(sys.argv) > 3 else 20000


def measure():
    nf = ctypes.c_int()
    rows = []
    for on in (0, 1):
        best = min(lib.bench_capture(iters, on, ctypes.byref(nf))
                   for _ in range(5))
        rows.append((best, nf.value))
    py = lib.bench_python_frames()
    print("python frames on the stack: %d (python %d.%d)"
          % (py, sys.version_info[0], sys.version_info[1]))
    print("%-34s %10s %8s" % ("capture (stack already stored)",
                              "ns/call", "frames"))
    print("%-34s %10.0f %8d" % ("native only (python frames off)",
                                rows[0][0], rows[0][1]))
    print("%-34s %10.0f %8d" % ("with python frames", rows[1][0],
                                rows[1][1]))
    print("%-34s %10.0f" % ("added by python frames",
                            rows[1][0] - rows[0][0]))


def down(n):
    if n <= 1:
        measure()
    else:
        down(n - 1)


down(depth)
