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
one line: "see-through-check: FOUND ..." (with the group's owner, whether
its stack names this script, and its first frames) and exits 0, or
"see-through-check: NOT FOUND ..." and exits 1.
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


def check(framework, path):
    with open(path) as f:
        doc = json.load(f)
    me = os.path.basename(__file__)
    found = None
    for g in doc.get("leaks", []):
        if (g.get("count") == STEPS and
                KEPT_BYTES <= g.get("size", 0) <= KEPT_BYTES + SLACK):
            found = g
            break
    if found is None:
        sizes = sorted({(g.get("size"), g.get("count"))
                        for g in doc.get("leaks", [])})[:12]
        print("see-through-check: NOT FOUND: %s: no leak group of %d x "
              "%d..%d bytes (groups, size x count: %s)"
              % (framework, STEPS, KEPT_BYTES, KEPT_BYTES + SLACK, sizes))
        return 1
    stack = found.get("stack", [])
    names = any(me in (fr.get("file") or "") or me in (fr.get("function") or "")
                for fr in stack)
    frames = " | ".join("%s (%s:%s)" % (fr.get("function"), fr.get("file"),
                                         fr.get("line"))
                        for fr in stack[:6])
    print("see-through-check: FOUND: %s: %d x %d bytes, kind %s, api %s, "
          "owner %s; stack names %s: %s; first frames: %s"
          % (framework, found["count"], found["size"], found.get("kind"),
             found.get("api"), found.get("owner"), me,
             "yes" if names else "no", frames))
    return 0


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
