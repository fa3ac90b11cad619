"""The reference nets (bench/torch_ref.py, bench/ddp_ref.py): bench/bigmlp.lua, smallmlp.lua and
lenet.lua in PyTorch, with their default batch size and learning rate."""
import torch.nn as nn

defaults = {"bigmlp": (64, 0.001), "smallmlp": (128, 0.01), "lenet": (64, 0.01)}  # batch, lr


def build(name):
    if name == "bigmlp":
        dims = [784, 2500, 2000, 1500, 1000, 500, 10]
        layers = []
        for i in range(len(dims) - 1):
            layers.append(nn.Linear(dims[i], dims[i + 1]))
            if i < len(dims) - 2:
                layers.append(nn.Tanh())
        return nn.Sequential(*layers)
    if name == "smallmlp":
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
    if name == "lenet":
        return nn.Sequential(
            nn.Unflatten(1, (1, 28, 28)),
            nn.Conv2d(1, 20, 5), nn.MaxPool2d(2),
            nn.Conv2d(20, 50, 5), nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(800, 500), nn.ReLU(),
            nn.Linear(500, 10))
    raise ValueError(name)
