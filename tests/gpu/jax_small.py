#!/usr/bin/env python3
"""jax_small.py -- a small JAX program, for run-gpu-tests.sh.

No planted bug: under the shim it must not crash, must print the same,
must show no bad free, and the shim must see allocations.  The script that
runs it sets XLA_PYTHON_CLIENT_PREALLOCATE=false (JAX would otherwise take
75% of the GPU at start).  Output is deterministic.
"""
import sys

import jax
import jax.numpy as jnp


def main():
    print("jax: devices", [d.platform for d in jax.devices()])
    x = jnp.arange(1 << 20, dtype=jnp.int32)
    print("jax: sum", int((x % 7).sum()))
    m = jnp.ones((512, 512), dtype=jnp.float32)
    z = m @ m
    print("jax: matmul", float(z[0, 0]))
    f = jax.jit(lambda v: (v * 2 + 1).sum())
    print("jax: jit", int(f(jnp.arange(1000, dtype=jnp.int32))))
    del x, m, z
    return 0


if __name__ == "__main__":
    sys.exit(main())
