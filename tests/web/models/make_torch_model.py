#!/usr/bin/python3
"""Exports a small PyTorch model to ONNX the way users' models arrive: named
submodules (a conv stem, residual blocks, an attention head and a classifier),
so the export carries PyTorch's scope names ("/blocks/blocks.0/conv1/Conv"),
its Constant nodes (shapes, scales) and Identity nodes (a tied weight).

    /usr/bin/python3 tests/web/models/make_torch_model.py OUT.onnx

Needs Debian's python3-torch (setup.sh installs it); the model is made at
test time, nothing binary is committed.
"""
import sys

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.scale = d ** -0.5

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        w = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * self.scale, dim=-1)
        return self.out(torch.matmul(w, v))


class Net(nn.Module):
    def __init__(self, c=8, d=16, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU())
        self.blocks = nn.Sequential(*[Block(c) for _ in range(6)])
        self.proj = nn.Linear(c, d)
        self.attn = Attention(d)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)
        self.aux = nn.Linear(d, classes)
        self.aux.weight = self.head.weight  # tied: exported through an Identity

    def forward(self, x):
        x = self.blocks(self.stem(x))  # [1, c, 8, 8]
        b, c, h, w = x.shape
        tokens = x.reshape(b, c, h * w).transpose(1, 2)  # [1, 64, c]
        t = self.norm(self.attn(self.proj(tokens)) + self.proj(tokens))
        pooled = t.mean(dim=1)
        return self.head(pooled) + self.aux(pooled)


def main():
    torch.manual_seed(0)
    model = Net().eval()
    x = torch.randn(1, 3, 8, 8)
    torch.onnx.export(model, x, sys.argv[1], opset_version=17, input_names=["image"], output_names=["logits"],
                      do_constant_folding=False)


if __name__ == "__main__":
    main()
