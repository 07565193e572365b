"""Allocations made from Python through ctypes, for check_python.sh.

usage: py_frames.py EXPECT.json

Calls the (simulated) driver's cuMemAlloc_v2 through ctypes from nested
functions, a method, a thread and a generator, and frees all but the
planted leaks (sizes 41001 to 41005).  For each leak it writes
to EXPECT.json the Python frames at the call, innermost first, as
[file, qualified name, line], taken on the line of the call itself, which
the report's Python frames must equal.
"""
import ctypes
import json
import sys
import threading

cu = ctypes.CDLL("libcuda.so.1")
expect = {}


def where():
    f, out = sys._getframe(1), []
    while f is not None:
        out.append([f.f_code.co_filename, f.f_code.co_qualname, f.f_lineno])
        f = f.f_back
    return out


def alloc(size, leak):
    p = ctypes.c_uint64()
    w = where(); rc = cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size))  # noqa: E702
    assert rc == 0, rc
    if leak:
        expect[str(size)] = w
    else:
        assert cu.cuMemFree_v2(ctypes.c_uint64(p.value)) == 0


def outer():
    def inner():
        alloc(41001, True)
        alloc(5000, False)
    middle(inner)


def middle(fn):
    fn()


class Model:
    def forward(self):
        alloc(41002, True)


def worker():
    alloc(41003, True)


def chunks():
    for size in (41004, 5001):
        alloc(size, size == 41004)
        yield size


# Code far from its first line (long-form entries of the location table,
# lines that go back), with names and a file name that are not ASCII
# (str objects of 1, 2 and 4 bytes a character).
GENERATED = ("\n" * 3000 + "def gr\u00f6\u00dfe(f):\n" +
             "    x = (1,\n" + "\n" * 300 + "    )\n" +
             "    def \u51fd\u6570():\n" +
             "        f()\n" +
             "    \u51fd\u6570()\n")


def far():
    ns = {}
    exec(compile(GENERATED, "gen/\u00fcn\u00efcode_\u51fd\u6570_\U0001f600.py",
                 "exec"), ns)
    ns["gr\u00f6\u00dfe"](lambda: alloc(41005, True))


def main():
    ctx = ctypes.c_void_p()
    assert cu.cuInit(0) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert cu.cuCtxSetCurrent(ctx) == 0
    outer()
    Model().forward()
    t = threading.Thread(target=lambda: (cu.cuCtxSetCurrent(ctx), worker()))
    t.start()
    t.join()
    for _ in chunks():
        pass
    far()
    with open(sys.argv[1], "w") as f:
        json.dump(expect, f)


main()
