#!/usr/bin/env python3
"""see_through_leak.py -- a kept-alive array behind a framework's cache,
for see_through.sh.

usage: see_through_leak.py torch|cupy|jax
       see_through_leak.py --check FRAMEWORK MERGED.json

Runs STEPS training-like steps; each makes temporaries (freed at once)
and appends one array of KEPT_ELEMS float32 (KEPT_BYTES bytes) to a list
that is never emptied: the leak a growing history or a forgotten .detach()
makes.  The process then ends with os._exit, so what is alive is reported
as leaked (Python's finalization would free the list).  Behind a caching
allocator the kept arrays are blocks of the cache's segments, invisible to
the shim; with cuwarden-audit --see-through each is an allocation of its
own: a leak group of STEPS allocations of KEPT_BYTES (a framework may
round the size up a little: up to SLACK bytes more).

--check reads a merged JSON document (cuwarden-audit --json) and prints
one line: "see-through-check: FOUND ..." (the groups, their owner, the
lines of this script in the stack and the Python frames) and exits 0, or
"see-through-check: NOT FOUND ..." and exits 1 (also when no frame of
the stack is a line of this script).
"""
import json
import os
import sys

STEPS = 40
KEPT_ELEMS = 12345            # 49380 bytes: no size a framework picks itself
KEPT_BYTES = KEPT_ELEMS * 4
SLACK = 4096
# The kept arrays.  Module-level, so that they outlive the function that
# made them: a list local to run_torch() dies when it returns, and with it
# (the caches off) every array, freed for real before os._exit -- the first
# GPU runs of this script saw 361 frees of 369 allocations and took it
# for --see-through not working.
KEPT = []


def run_torch():
    import torch
    dev = torch.device("cuda")
    w = torch.randn(256, 256, device=dev, requires_grad=True)
    kept = KEPT
    for step in range(STEPS):
        x = torch.randn(64, 256, device=dev)
        loss = (x @ w).relu().sum()
        loss.backward()
        with torch.no_grad():
            w -= 1e-3 * w.grad
        w.grad = None
        kept.append(torch.full((KEPT_ELEMS,), float(step), device=dev))
    torch.cuda.synchronize()
    return len(kept)


def run_cupy():
    import cupy
    w = cupy.random.standard_normal((256, 256), dtype=cupy.float32)
    kept = KEPT
    for step in range(STEPS):
        x = cupy.random.standard_normal((64, 256), dtype=cupy.float32)
        y = cupy.maximum(x @ w, 0).sum()
        w -= 1e-6 * y
        kept.append(cupy.full((KEPT_ELEMS,), step, dtype=cupy.float32))
    cupy.cuda.Device().synchronize()
    return len(kept)


def run_jax():
    import jax
    import jax.numpy as jnp
    key = jax.random.PRNGKey(0)
    w = jax.random.normal(key, (256, 256), dtype=jnp.float32)
    kept = KEPT
    for step in range(STEPS):
        x = jax.random.normal(jax.random.fold_in(key, step), (64, 256),
                              dtype=jnp.float32)
        w = w - 1e-6 * jnp.maximum(x @ w, 0).sum()
        kept.append(jnp.full((KEPT_ELEMS,), step, dtype=jnp.float32))
    for a in kept:
        a.block_until_ready()
    return len(kept)


def frame_text(fr):
    """A frame of the merged JSON as "function (file:line)"; a Python
    frame is {"python": {"file", "function", "line"}}."""
    py = fr.get("python")
    if py:
        return "%s (%s:%s) [python]" % (py.get("function"), py.get("file"),
                                       py.get("line"))
    return "%s (%s)" % (fr.get("function"), fr.get("module") or
                        fr.get("file"))


def check(framework, path):
    """The kept arrays: STEPS allocations of KEPT_BYTES (up to SLACK more;
    JAX's platform allocator maps each buffer with cuMemCreate, whose
    granularity is 2 MiB), owned by this script, in one group or a few
    (the first allocation of a loop may come by another native path)."""
    with open(path) as f:
        doc = json.load(f)
    me = os.path.basename(__file__)
    top = max(KEPT_BYTES + SLACK, 2 << 20 if framework == "jax" else 0)
    groups = [g for g in doc.get("leaks", [])
              if KEPT_BYTES <= g.get("size", 0) <= top and
              os.path.basename(g.get("owner") or "") == me]
    count = sum(g.get("count", 0) for g in groups)
    if count != STEPS:
        sizes = sorted({(g.get("size"), g.get("count"))
                        for g in doc.get("leaks", [])})[:12]
        print("see-through-check: NOT FOUND: %s: %d of %d allocations of "
              "%d..%d bytes owned by %s (groups, size x count: %s)"
              % (framework, count, STEPS, KEPT_BYTES, top, me, sizes))
        return 1
    found = max(groups, key=lambda g: g.get("count", 0))
    stack = found.get("stack", [])
    lines = sorted({(fr.get("python") or {}).get("line") for fr in stack
                    if me in ((fr.get("python") or {}).get("file") or "")}
                   - {None})
    pyframes = [frame_text(fr) for fr in stack if fr.get("python")]
    print("see-through-check: FOUND: %s: %d allocations in %d group%s, "
          "%d bytes each, kind %s, api %s, owner %s; lines of %s in the "
          "stack: %s; Python frames: %s"
          % (framework, count, len(groups), "" if len(groups) == 1 else "s",
             found["size"], found.get("kind"), found.get("api"),
             found.get("owner"), me, lines or "none",
             " | ".join(pyframes[:4]) or "none"))
    return 0 if lines else 1


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 2 or sys.argv[1] not in ("torch", "cupy", "jax"):
        sys.exit(__doc__)
    n = {"torch": run_torch, "cupy": run_cupy, "jax": run_jax}[sys.argv[1]]()
    print("see_through_leak: %s: %d arrays of %d bytes kept"
          % (sys.argv[1], n, KEPT_BYTES))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
