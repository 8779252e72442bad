#!/usr/bin/python3
"""The model classes issue 28 measures opscope's cpu device on, exported by
Debian's python3-torch (and python3-torchvision) to ONNX with random weights,
each with one seeded input set beside it:

    /usr/bin/python3 bench/make_torch_models.py OUT_DIR [NAME[:SIZE] ...]

writes OUT_DIR/NAME.onnx and OUT_DIR/NAME.inputs/<input>.npy for each of
resnet18, googlenet, mobilenet_v2 (torchvision, 1x3x224x224), encoder (a
2-layer nn.TransformerEncoder, d_model 256, 4 heads, 64 tokens) and bert (a
BERT-style encoder: token and position embeddings, 2 post-norm layers with
GELU, d_model 256, 128 tokens of int64 ids). SIZE sets a torchvision
model's image side (mobilenet_v2:96, as tests/inspector_ort_test.cc makes it).
Nothing binary is committed.
"""
import os
import sys

import numpy as np
import torch
from torch import nn

ALL = ["resnet18", "googlenet", "mobilenet_v2", "encoder", "bert"]


class Bert(nn.Module):
    def __init__(self, vocab=8000, d=256, heads=4, layers=2, tokens=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, tokens, d) * 0.02)
        self.norm = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, activation="gelu", batch_first=True, dropout=0.0)
        self.layers = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, ids):
        return self.layers(self.norm(self.tok(ids) + self.pos))


def build(name, size):
    """(module, example inputs as a dict name -> tensor)."""
    if name in ("resnet18", "googlenet", "mobilenet_v2"):
        import torchvision
        kwargs = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
        return getattr(torchvision.models, name)(weights=None, **kwargs), {"x": torch.randn(1, 3, size, size)}
    if name == "encoder":
        layer = nn.TransformerEncoderLayer(256, 4, 512, batch_first=True, dropout=0.0)
        return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False), {"x": torch.randn(1, 64, 256)}
    if name == "bert":
        return Bert(), {"ids": torch.randint(0, 8000, (1, 128), dtype=torch.int64)}
    sys.exit(f"make_torch_models.py: unknown model {name!r} (expected one of {', '.join(ALL)})")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    names = sys.argv[2:] or ALL
    os.makedirs(out, exist_ok=True)
    for spec in names:
        name, _, size = spec.partition(":")
        torch.manual_seed(0)
        model, inputs = build(name, int(size) if size else 224)
        model.eval()
        path = os.path.join(out, name + ".onnx")
        # Not under no_grad: there nn.TransformerEncoderLayer takes its fused fast path, which ONNX cannot export.
        torch.onnx.export(model, tuple(inputs.values()), path + ".tmp", opset_version=17,
                          input_names=list(inputs), output_names=["y"])
        os.replace(path + ".tmp", path)
        folder = os.path.join(out, name + ".inputs")
        os.makedirs(folder, exist_ok=True)
        for k, v in inputs.items():
            np.save(os.path.join(folder, k + ".npy"), v.numpy())
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
