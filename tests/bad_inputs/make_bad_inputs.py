#!/usr/bin/env python3
"""Writes the bad-input corpus into OUT/ and OUT/manifest.tsv (issue 11).

Nothing here is committed as a file: every bad input is made from the
repository's example models and from arrays numpy writes, so the corpus
follows the formats as they change. Each manifest line is

    TOOL<TAB>EXPECT<TAB>FILE<TAB>WHAT

TOOL is how the file is fed: `model` (inspector-cli run FILE), `npy`
(ops-debug run --op Relu --inputs FILE), `npz` (ops-debug compare FILE FILE).
EXPECT is `2` (refused: exit 2, one line on stderr, nothing written) or
`0|2` for a random mutation that may still be a valid input (then it either
runs, or is refused the same way; never a crash). WHAT says what is wrong.

    /usr/bin/python3 tests/bad_inputs/make_bad_inputs.py OUT [SEED]
"""
import io
import os
import random
import struct
import sys
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "..", "examples", "models")

out = sys.argv[1]
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 11)
os.makedirs(out, exist_ok=True)
manifest = []


def put(name, data, tool, expect, what):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    manifest.append((tool, expect, name, what))


def relu_model(**kw):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, kw.get("dims", [4, 4]))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, kw.get("dims", [4, 4]))
    node = helper.make_node(kw.get("op", "Relu"), kw.get("inputs", ["x"]), ["y"], name="/relu", **kw.get("attrs", {}))
    g = helper.make_graph([node], "g", [x], [y], kw.get("inits", []))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", kw.get("opset", 13))])
    m.ir_version = kw.get("ir", 8)
    return m


# ---------------------------------------------------------------- ONNX, truncated
for model in ("two_branch", "const_if", "resnet_small", "transformer_block"):
    data = open(os.path.join(MODELS, model + ".onnx"), "rb").read()
    cuts = sorted({1, 2, 7, len(data) // 3, len(data) // 2, len(data) - 1} | {rng.randrange(1, len(data)) for _ in range(6)})
    for cut in cuts:
        put(f"trunc_{model}_{cut}.onnx", data[:cut], "model", "2", f"{model}.onnx cut to {cut} of {len(data)} bytes")

# ---------------------------------------------------------------- ONNX, byte-mutated
for model in ("two_branch", "const_if", "resnet_small"):
    data = bytearray(open(os.path.join(MODELS, model + ".onnx"), "rb").read())
    for i in range(12):
        m = bytearray(data)
        for _ in range(rng.randrange(1, 9)):
            m[rng.randrange(len(m))] = rng.randrange(256)
        put(f"mut_{model}_{i}.onnx", bytes(m), "model", "0|2", f"{model}.onnx with random bytes replaced")

# ---------------------------------------------------------------- ONNX, edited by hand
def edited(name, m, what):
    put(name + ".onnx", m.SerializeToString(), "model", "2", what)

edited("ir0", relu_model(ir=0), "ir_version 0")
edited("opset_minus1", relu_model(opset=-1), "opset -1")
edited("opset_99", relu_model(opset=99), "opset 99")
edited("opset_2e62", relu_model(opset=2**62), "opset 2^62")
m = relu_model(); m.graph.ClearField("output"); edited("no_outputs", m, "a graph with no outputs")
w = helper.make_tensor("w", TensorProto.FLOAT, [4, 4], [1.0] * 16)
edited("init_twice", relu_model(op="Add", inputs=["x", "w"], inits=[w, w]), "an initializer listed twice")
m = relu_model(op="LeakyRelu", attrs={"alpha": 0.1}); m.graph.node[0].attribute.extend([helper.make_attribute("alpha", 0.2)])
edited("attr_twice", m, "an attribute given twice")
m = relu_model(); m.graph.input.extend([m.graph.input[0]]); edited("input_twice", m, "a graph input listed twice")
m = relu_model(); m.graph.output.extend([m.graph.output[0]]); edited("output_twice", m, "a graph output listed twice")
edited("huge_dim", relu_model(dims=[2**62]), "a dim whose bytes overflow")
edited("no_inputs", relu_model(inputs=[]), "Relu with no input")
edited("pool_stride0", relu_model(op="MaxPool", dims=[1, 1, 8, 8], attrs={"kernel_shape": [2, 2], "strides": [0, 1]}),
       "MaxPool with stride 0")
edited("conv_kernel0", relu_model(op="AveragePool", dims=[1, 1, 8, 8], attrs={"kernel_shape": [0, 2]}),
       "a pool with kernel 0")
put("empty.onnx", b"", "model", "2", "an empty file")
put("text.onnx", b"this is not a model\n", "model", "2", "text")
put("npy_as.onnx", b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }" + b" " * 50 + b"\n",
    "model", "2", "a .npy given as a model")


# ---------------------------------------------------------------- .npy
def npy(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def npy_header(dict_text, data=b"", version=(1, 0)):
    pre = 10 if version[0] == 1 else 12
    pad = 64 - (pre + len(dict_text) + 1) % 64
    h = (dict_text + " " * pad + "\n").encode()
    length = struct.pack("<H", len(h)) if version[0] == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes(version) + length + h + data


good = npy(np.arange(16, dtype=np.float32).reshape(4, 4))
for cut in (1, 6, 9, 20, 60, len(good) - 1):
    put(f"trunc_{cut}.npy", good[:cut], "npy", "2", f"a .npy cut to {cut} of {len(good)} bytes")
put("v2_len_4g.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFF0) + b"{" * 140, "npy", "2",
    "a v2 header length of 4 GiB")
put("huge_shape.npy", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }"), "npy", "2",
    "a huge shape in a small file")
put("overflow_shape.npy", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }"),
    "npy", "2", "a shape whose bytes overflow")
for name, shape in (("list_shape", "[4]"), ("int_shape", "(4)"), ("neg_shape", "(-4,)"), ("float_shape", "(4.0,)"),
                    ("str_shape", "('4',)")):
    put(name + ".npy", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape, b"\0" * 16), "npy",
        "2", f"shape {shape}")
put("bad_dtype.npy", npy_header("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", b"\0" * 16), "npy", "2",
    "complex64, which opscope does not read")
put("object_dtype.npy", npy_header("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", b"\0" * 16), "npy", "2",
    "an object array (pickles)")
put("no_shape.npy", npy_header("{'descr': '<f4', 'fortran_order': False, }", b"\0" * 16), "npy", "2", "no 'shape' key")
put("bad_magic.npy", b"\x93NUMPX" + good[6:], "npy", "2", "a wrong magic string")
put("extra_bytes.npy", good + b"\0" * 8, "npy", "2", "8 bytes past the data")
put("not_utf8_header.npy", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), '\xff': 1, }"),
    "npy", "2", "a header that is not ASCII")

# ---------------------------------------------------------------- .npz
def npz(members, compress=False):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        for name, data in members:
            z.writestr(name, data)
    return b.getvalue()


good_npz = npz([("y.npy", good)], compress=True)
for cut in (10, len(good_npz) // 2, len(good_npz) - 5):
    put(f"trunc_{cut}.npz", good_npz[:cut], "npz", "2", f"a .npz cut to {cut} of {len(good_npz)} bytes")
put("npy_as.npz", good, "npz", "2", "a .npy given where a .npz is expected")
put("bad_member.npz", npz([("y.npy", b"not an array")]), "npz", "2", "a member that is not a .npy")
# A member whose local size fields lie: 200 MB declared, 1 KiB of deflate stream.
bomb = bytearray(npz([("y.npy", npy(np.zeros(256, np.float32)))], compress=True))
at = bomb.find(b"PK\x01\x02")
struct.pack_into("<I", bomb, at + 24, 200 << 20)  # the central directory's uncompressed size
put("size_lie.npz", bytes(bomb), "npz", "2", "a member whose declared size is 200 MB")
put("empty.npz", b"", "npz", "2", "an empty file")

with open(os.path.join(out, "manifest.tsv"), "w") as f:
    for row in manifest:
        f.write("\t".join(row) + "\n")
print(f"{len(manifest)} bad inputs in {out}")
