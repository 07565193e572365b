#!/usr/bin/env python3
"""torch_compile.py -- torch.compile(mode="reduce-overhead") on a small MLP.

Inductor generates Triton kernels, and mode "reduce-overhead" runs them in
CUDA graph trees (captured, then replayed, from PyTorch's private memory
pool).  Four inference batches (no_grad), then six training steps (MSE,
SGD); the outputs and losses are printed rounded to 5 decimal places and
must be the same plain and under the shim (audit and pool mode).
Deterministic: fixed seeds, no TF32, torch.use_deterministic_algorithms,
which also makes Inductor pick kernel configurations without timing them
(a choice by timing may differ between runs, and with it the order of a
reduction).

Caches: Triton's (TRITON_CACHE_DIR) and Inductor's (TORCHINDUCTOR_CACHE_DIR:
its FX graph and autotuning caches) go to a new directory in CW_RUN_DIR
(the run's own directory, set by run-gpu-tests.sh) or, run by hand, in the
working directory.  With a cache left warm by an earlier run, the later
runs (audit, pool) would load compiled kernels where the plain run
compiled them: other work, other CUDA calls, nothing to compare; and a
cache in ~/.triton or /tmp/torchinductor_$USER may come from another
PyTorch.  So every run compiles from scratch, as the first one did.

--probe: compile and run one trivial function, exit 0 when that works (the
script's skip test: torch, triton, a C compiler and Python's headers).
"""
import os
import sys
import tempfile

cache = tempfile.mkdtemp(prefix="compile-cache.",
                         dir=os.environ.get("CW_RUN_DIR") or os.getcwd())
os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
# cuBLAS is deterministic only with a fixed workspace (PyTorch's
# "Reproducibility" notes); read when cuBLAS starts.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402  (after the environment above)

dev = torch.device("cuda")
if len(sys.argv) > 1 and sys.argv[1] == "--probe":
    import triton  # noqa: F401
    f = torch.compile(lambda t: t * 2 + 1)
    sys.exit(0 if f(torch.ones(4, device=dev)).sum().item() == 12 else 1)

torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.use_deterministic_algorithms(True, warn_only=True)

model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                            torch.nn.Linear(128, 128), torch.nn.ReLU(),
                            torch.nn.Linear(128, 8)).to(dev)
cmodel = torch.compile(model, mode="reduce-overhead")
gen = torch.Generator(device=dev).manual_seed(1)
# A graph tree's outputs are overwritten by its next replay: each step
# begins a new one (where PyTorch has the call; each output here is read
# before the next step anyway).
step_begin = getattr(getattr(torch, "compiler", None),
                     "cudagraph_mark_step_begin", None) or (lambda: None)

model.eval()
with torch.no_grad():
    for i in range(4):
        x = torch.randn(32, 64, device=dev, generator=gen)
        step_begin()
        out = cmodel(x)
        print("infer %d: sum %.5f, out[0] %s" % (
            i, out.sum().item(), " ".join("%.5f" % v for v in out[0].tolist())))

model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = torch.nn.MSELoss()
for i in range(6):
    x = torch.randn(32, 64, device=dev, generator=gen)
    y = torch.randn(32, 8, device=dev, generator=gen)
    step_begin()
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(cmodel(x), y)
    loss.backward()
    opt.step()
    print("train %d: loss %.5f" % (i, loss.item()))
torch.cuda.synchronize()
print("compiled (reduce-overhead): 4 inference batches, 6 training steps")
sys.exit(0)
