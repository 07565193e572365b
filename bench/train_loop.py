"""train_loop.py -- a small PyTorch training loop, timed.

Run plain, under the shim (audit mode) and under compute-sanitizer by
bench/run-gpu-bench.sh.  usage: python3 train_loop.py [steps] [warmup]
prints: train-loop: S steps: T ms/step (total X s) loss L; windows of 100
steps: best B, median M ms/step
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
    # Timed in windows of 100 steps (a synchronise at each end): the
    # best and the median window are steadier figures than the mean when
    # the machine is shared, and comparing runs uses them.
    windows = []
    t0 = time.perf_counter()
    done = 0
    while done < steps:
        n = min(100, steps - done)
        w0 = time.perf_counter()
        for _ in range(n):
            loss = step()
        torch.cuda.synchronize()
        windows.append((time.perf_counter() - w0) * 1e3 / n)
        done += n
    t1 = time.perf_counter()
    windows.sort()
    print("train-loop: %d steps: %.3f ms/step (total %.2f s) loss %.3f; "
          "windows of 100 steps: best %.3f, median %.3f ms/step"
          % (steps, (t1 - t0) * 1e3 / steps, t1 - t0, loss.item(),
             windows[0], windows[len(windows) // 2]))


if __name__ == "__main__":
    main()
