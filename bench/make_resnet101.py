#!/usr/bin/python3
"""A ResNet-101-class network (bottleneck blocks 3, 4, 23, 3; 64 to 2048
channels: 101 weighted layers), random weights, exported by PyTorch to ONNX
to measure what `inspector-cli accuracy` holds of a deep CNN's intermediate
tensors (bench/accuracy_memory.sh).

    /usr/bin/python3 bench/make_resnet101.py OUT.onnx [SIZE]

Needs Debian's python3-torch (setup.sh installs it); nothing binary is committed.
"""
import sys

import torch
from torch import nn


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = 4 * width
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))


def resnet101(classes=1000):
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 23, 2), (512, 3, 2)]:
        for i in range(blocks):
            layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
            cin = 4 * width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def main():
    torch.manual_seed(0)
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 224
    m = resnet101().eval()
    torch.onnx.export(m, torch.randn(1, 3, size, size), sys.argv[1], opset_version=17,
                      input_names=["input"], output_names=["logits"])


if __name__ == "__main__":
    main()
