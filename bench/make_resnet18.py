#!/usr/bin/python3
"""A ResNet-18-class network (4 stages of 2 basic blocks, 64 to 512 channels),
random weights, exported by PyTorch to ONNX for the accuracy benchmark.

    /usr/bin/python3 bench/make_resnet18.py OUT.onnx [SIZE]

Needs Debian's python3-torch (setup.sh installs it); nothing binary is committed.
"""
import sys

import torch
from torch import nn


def block(cin, cout, stride):
    body = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
    skip = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
        nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
    return body, skip


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body, self.skip = block(cin, cout, stride)

    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))


def resnet18(classes=1000):
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes)]
    return nn.Sequential(*layers)


def main():
    torch.manual_seed(0)
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 224
    m = resnet18().eval()
    torch.onnx.export(m, torch.randn(1, 3, size, size), sys.argv[1], opset_version=17,
                      input_names=["input"], output_names=["logits"])


if __name__ == "__main__":
    main()
