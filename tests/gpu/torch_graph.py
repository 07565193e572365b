#!/usr/bin/env python3
"""torch_graph.py -- a training step captured into a CUDA graph and replayed.

PyTorch's whole-network capture (torch.cuda.graph, the pattern of
torch.compile(mode="reduce-overhead") and CUDA graph trees): warm-up steps
on a side stream, one captured step (forward, backward, optimizer) in
global capture mode, then 20 replays on fresh data.  The printed losses are
deterministic; a run under the shim (audit or pool mode) must print the
same lines and exit 0.  Pool mode once broke the capture: the pools' helper
thread synchronised the context while the capture was on
(cudaErrorStreamCaptureInvalidated).
"""
import sys

import torch

torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = torch.nn.CrossEntropyLoss()
x = torch.randn(64, 256, device=dev)
y = torch.randint(0, 10, (64,), device=dev)

side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()
torch.cuda.current_stream().wait_stream(side)

g = torch.cuda.CUDAGraph()
opt.zero_grad(set_to_none=True)
with torch.cuda.graph(g):
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()

gen = torch.Generator(device=dev).manual_seed(1)
for i in range(20):
    x.copy_(torch.randn(64, 256, device=dev, generator=gen))
    y.copy_(torch.randint(0, 10, (64,), device=dev, generator=gen))
    g.replay()
    if i % 5 == 4:
        print("step %d loss %.6f" % (i + 1, loss.item()))
torch.cuda.synchronize()
print("graph replays: 20")
sys.exit(0)
