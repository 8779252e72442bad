#!/usr/bin/python3
"""Writes a synthetic model of N nodes for scale tests.

    /usr/bin/python3 examples/models/make_synthetic.py N [OUT.onnx]

The graph repeats a diamond over a [1, 64] tensor: the input splits into a
MatMul + Add(bias) + Relu arm and a Sigmoid arm that Mul joins, then an Add
residual; blocks chain until N nodes exist (the last block may be cut short
to a plain chain of Relus). Weights are shared, so the file stays small.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(n_nodes, width=64):
    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array((rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32), "w"),
             numpy_helper.from_array((rng.standard_normal(width) * 0.1).astype(np.float32), "b")]
    nodes = []
    x = "input"

    def add(op, inputs, scope):
        out = f"{scope}/{op}_{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [out], name=f"{scope}/{op}_{len(nodes)}"))
        return out

    block = 0
    while len(nodes) + 6 <= n_nodes:
        scope = f"/block{block}"
        m = add("MatMul", [x, "w"], scope)
        m = add("Add", [m, "b"], scope)
        m = add("Relu", [m], scope)
        s = add("Sigmoid", [x], scope)
        j = add("Mul", [m, s], scope)
        x = add("Add", [j, x], scope)
        block += 1
    while len(nodes) < n_nodes:
        x = add("Relu", [x], "/tail")
    nodes[-1].output[0] = "output"
    graph = helper.make_graph(nodes, f"synthetic_{n_nodes}",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, width])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="opscope-synthetic")
    model.ir_version = 8
    return model


def main():
    n = int(sys.argv[1])
    out = sys.argv[2] if len(sys.argv) > 2 else f"synthetic_{n}.onnx"
    onnx.save(build(n), out)


if __name__ == "__main__":
    main()
