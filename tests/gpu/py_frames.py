"""Python frames on a real GPU (doc/stacks.md, "Python frames").

Run (from a build tree; CPython 3.11, 3.12 or 3.13):

  tools/cuwarden-audit --json /tmp/pyf.json -- \
      python3 tests/gpu/py_frames.py /tmp/pyf.expect.json
  python3 tests/gpu/py_frames.py --check /tmp/pyf.json /tmp/pyf.expect.json

The first allocates through ctypes from the real driver (libcuda.so.1's
cuMemAlloc_v2) from nested functions, a method, a thread and a generator,
frees all but the planted leaks (sizes 3 MiB + 1 .. + 4), and writes the
Python frames at each planted call, innermost first, [file, qualified name,
line], taken on the line of the call itself.  If torch is importable it
also allocates a tensor from a function of this file and keeps it (torch's
caching allocator: reported, not asserted).  The audit exits 23 (leaks).

The second checks the merged JSON: every planted leak's Python frames equal
the interpreter's own, its owner is this file, and prints each planted
leak's frames and the torch allocation's owner and frames.  Exit 0 when
all hold.
"""
import ctypes
import json
import sys
import threading

MIB = 1 << 20
PLANTED = [3 * MIB + k for k in (1, 2, 3, 4)]


def where():
    f, out = sys._getframe(1), []
    while f is not None:
        out.append([f.f_code.co_filename, f.f_code.co_qualname, f.f_lineno])
        f = f.f_back
    return out


class Driver:
    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.ctx = ctypes.c_void_p()
        dev = ctypes.c_int()
        assert self.cu.cuInit(0) == 0
        assert self.cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
        assert self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx),
                                                dev) == 0
        self.expect = {}

    def bind(self):
        assert self.cu.cuCtxSetCurrent(self.ctx) == 0

    def alloc(self, size, leak):
        p = ctypes.c_uint64()
        w = where(); rc = self.cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size))  # noqa: E702
        assert rc == 0, rc
        if leak:
            self.expect[str(size)] = w
        else:
            assert self.cu.cuMemFree_v2(ctypes.c_uint64(p.value)) == 0


def outer(d):
    def inner():
        d.alloc(PLANTED[0], True)
        d.alloc(MIB, False)
    middle(inner)


def middle(fn):
    fn()


class Model:
    def forward(self, d):
        d.alloc(PLANTED[1], True)


def worker(d):
    d.bind()
    d.alloc(PLANTED[2], True)


def chunks(d):
    for size in (PLANTED[3], MIB):
        d.alloc(size, size == PLANTED[3])
        yield size


kept = []


def torch_tensor():
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    w = where(); kept.append(torch.empty(5 * MIB + 7, dtype=torch.uint8, device="cuda"))  # noqa: E702
    return w


def run(expect_path):
    d = Driver()
    d.bind()
    outer(d)
    Model().forward(d)
    t = threading.Thread(target=worker, args=(d,))
    t.start()
    t.join()
    for _ in chunks(d):
        pass
    tw = torch_tensor()
    with open(expect_path, "w") as f:
        json.dump({"planted": d.expect, "torch": tw}, f)


def pyframes(stack):
    return [[f["python"]["file"], f["python"]["function"],
             f["python"]["line"]] for f in stack if "python" in f]


def check(merged_path, expect_path):
    with open(merged_path) as f:
        doc = json.load(f)
    with open(expect_path) as f:
        exp = json.load(f)
    me = __file__
    bad = 0
    for size in PLANTED:
        got = [g for g in doc["leaks"] if g["size"] == size]
        if len(got) != 1:
            print("FAIL: %d leak groups of size %d" % (len(got), size))
            bad += 1
            continue
        g = got[0]
        frames = pyframes(g["stack"])
        want = exp["planted"][str(size)]
        print("leak %d: owner %s" % (size, g["owner"]))
        for fr in frames:
            print("    %s:%d %s" % (fr[0], fr[2], fr[1]))
        if frames != want:
            print("FAIL: leak %d: python frames differ, want:" % size)
            for fr in want:
                print("    %s:%d %s" % (fr[0], fr[2], fr[1]))
            bad += 1
        if not g["owner"].endswith("py_frames.py"):
            print("FAIL: leak %d: owner %s, want %s" % (size, g["owner"], me))
            bad += 1
    if exp.get("torch"):
        tl = [g for g in doc["leaks"] + doc.get("suppressed", [])
              if isinstance(g, dict) and any(
                  "python" in f and f["python"]["function"] == "torch_tensor"
                  for f in g.get("stack", []))]
        print("torch: %d group(s) with torch_tensor's frame" % len(tl))
        for g in tl:
            print("  owner %s, %d bytes; python frames %s" % (
                g.get("owner"), g.get("bytes", 0), pyframes(g["stack"])[:3]))
    for p in doc.get("processes", []):
        if "python" in p:
            print("process %s: python %s" % (p.get("pid"), p["python"]))
    print("FAIL: %d" % bad if bad else "PASS: python frames of every planted leak")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    run(sys.argv[1])
