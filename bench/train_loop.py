"""train_loop.py -- a small PyTorch training loop, timed.

Run plain, under the shim (audit mode) and under compute-sanitizer by
bench/run-gpu-bench.sh.  usage: python3 train_loop.py [steps] [warmup]
prints: train-loop: S steps: T ms/step (total X s)
"""
import sys
import time

import torch


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(),
        torch.nn.Linear(64 * 16, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        # fresh tensors every step: the allocator is exercised
        x = torch.randn(64, 3, 32, 32, device=dev)
        y = torch.randint(0, 10, (64,), device=dev)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    print("train-loop: %d steps: %.3f ms/step (total %.2f s) loss %.3f"
          % (steps, (t1 - t0) * 1e3 / steps, t1 - t0, loss.item()))


if __name__ == "__main__":
    main()
