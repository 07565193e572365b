#!/usr/bin/env python3
"""torch_timeline.py -- a PyTorch training loop with a planted steady
growth, for cuwarden-audit --timeline (doc/audit.md, "Memory over time",
"Growing"; the lead's command is in tests/gpu/README.md).

A small MLP is trained for STEPS steps (forward, backward, SGD), each step
synchronized and about as long as the next.  Each step also keeps a 4 MiB
tensor in a list (the "history" a training loop forgets to clear): through
PyTorch's caching allocator that is a new 20 MiB segment every 5 steps, so
the driver-level memory grows steadily.  At the end the list is dropped and
the cache emptied: that growth leaves no leak, only the timeline shows it.
Prints the first and last loss and the bytes kept.

With CW_HOLD=READY:GO (two FIFOs), it holds still half way: writes "1" to
READY, then waits for a line on GO (tests/gpu/timeline_more.sh takes a
snapshot there).
"""
import os
import sys

import torch

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 300
KEEP = 4 * 2**20  # bytes kept per step


def main():
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
        torch.nn.Linear(4096, 1024)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(256, 1024, device=dev)
    y = torch.randn(256, 1024, device=dev)
    history = []
    first = last = None
    hold = os.environ.get("CW_HOLD", "")
    for step in range(STEPS):
        if hold and step == STEPS // 2:
            ready, go = hold.split(":")
            with open(ready, "w") as f:
                f.write("1\n")
            with open(go) as f:
                f.readline()
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        history.append(torch.empty(KEEP // 4, dtype=torch.float32, device=dev))
        torch.cuda.synchronize()
        last = loss.item()
        if first is None:
            first = last
    kept = sum(t.numel() * t.element_size() for t in history)
    del history
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    print("steps %d first loss %.4f last loss %.4f kept %d bytes" %
          (STEPS, first, last, kept))


if __name__ == "__main__":
    main()
