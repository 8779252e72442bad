#!/usr/bin/python3
"""Builds the small example models inspector-cli is shown and tested on.

    /usr/bin/python3 examples/models/make_models.py [OUT_DIR]

resnet_small.onnx      conv-bn-relu blocks with residual Adds, global average pool, Gemm
transformer_block.onnx self-attention (MatMul/Softmax/Transpose/Reshape), LayerNorm and
                       GELU written out as primitive ops, residuals
two_branch.onnx        two independent branches (conv and matmul) joined at the end
unsupported_op.onnx    Relu -> Det -> Neg: Det is no built-in op, so the model imports
                       with that node marked not executable and `run` refuses it
custom_op.onnx         MatMul -> Add -> my_norm -> Relu, my_norm in the domain
                       com.opscope.examples: it runs only with --plugin libmy_ops.so
const_if.onnx          Relu -> If(cond: a constant initializer, true) {then: Mul by 2, Add 1}
                       {else: Neg} -> Sigmoid: the compiler inlines the branch taken
half_section.onnx      Mul by 300 -> Cast to float16 -> half_rms (examples/buggy_ops, in
                       com.opscope.examples: it squares in float16, Inf past 255.9) ->
                       Cast to float32 -> Relu: `accuracy` finds half_rms diverging, alone
nhwc_mean.onnx         Mul by 4 -> channel_mean (examples/buggy_ops: it asks for NHWC, and
                       its NHWC kernel sums in float16) -> Sigmoid: `accuracy` names it with
                       the layout decision; with --disable-pass layout it is clean
big_input.onnx         Slice one row of a 16 MiB input -> Relu: the input's copy is the run
                       (summary's data_movement finding)
many_inputs.onnx       16 inputs of 64 floats -> Concat -> Relu: 17 copies each paying a
                       copy's fixed cost (summary's data_movement finding)

Weights are random with a fixed seed, so the files are reproducible (a new model
is made last, so that the ones before it keep their bytes). Opset 17, IR version 8.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
rng = np.random.default_rng(20240601)


class Builder:
    def __init__(self, name):
        self.name = name
        self.nodes, self.inits = [], []
        self.count = 0

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, shape, scale=0.2):
        return self.const(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    def node(self, op, inputs, scope, outputs=1, domain=None, **attrs):
        self.count += 1
        name = f"{scope}/{op}" if scope else f"/{op}_{self.count}"
        outs = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, domain=domain, **attrs))
        return outs[0] if outputs == 1 else outs

    def save(self, path, inputs, outputs, extra_opsets=()):
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        opsets = [helper.make_opsetid("", OPSET)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
        model = helper.make_model(graph, opset_imports=opsets,
                                  producer_name="opscope-examples", producer_version="1")
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, path)


def conv_bn_relu(b, x, cin, cout, scope, relu=True, stride=1):
    w = b.weight(f"{scope}.conv.weight", (cout, cin, 3, 3))
    y = b.node("Conv", [x, w], f"{scope}/conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[stride, stride])
    bn = [b.const(f"{scope}.bn.{n}", v.astype(np.float32)) for n, v in (
        ("weight", rng.uniform(0.5, 1.5, cout)), ("bias", rng.standard_normal(cout) * 0.1),
        ("running_mean", rng.standard_normal(cout) * 0.1), ("running_var", rng.uniform(0.5, 1.5, cout)))]
    y = b.node("BatchNormalization", [y] + bn, f"{scope}/bn", epsilon=1e-5)
    return b.node("Relu", [y], f"{scope}/relu") if relu else y


def resnet_small(path):
    b = Builder("resnet_small")
    x = conv_bn_relu(b, "input", 3, 8, "/stem")
    for i in (1, 2):
        scope = f"/layer{i}"
        y = conv_bn_relu(b, x, 8, 8, f"{scope}/block1")
        y = conv_bn_relu(b, y, 8, 8, f"{scope}/block2", relu=False)
        y = b.node("Add", [y, x], f"{scope}/add")
        x = b.node("Relu", [y], f"{scope}/relu")
    p = b.node("GlobalAveragePool", [x], "/pool")
    f = b.node("Flatten", [p], "/flatten", axis=1)
    w = b.weight("fc.weight", (10, 8))
    c = b.weight("fc.bias", (10,), 0.1)
    out = b.node("Gemm", [f, w, c], "/fc", transB=1)
    b.nodes[-1].output[0] = "logits"
    b.save(path, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
           [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])])


def layer_norm(b, x, d, scope):
    mean = b.node("ReduceMean", [x], f"{scope}/mean", axes=[-1])
    diff = b.node("Sub", [x, mean], f"{scope}/sub")
    sq = b.node("Pow", [diff, b.const(f"{scope}.two", np.float32(2.0))], f"{scope}/pow")
    var = b.node("ReduceMean", [sq], f"{scope}/var", axes=[-1])
    ve = b.node("Add", [var, b.const(f"{scope}.eps", np.float32(1e-5))], f"{scope}/add_eps")
    sd = b.node("Sqrt", [ve], f"{scope}/sqrt")
    n = b.node("Div", [diff, sd], f"{scope}/div")
    g = b.node("Mul", [n, b.const(f"{scope}.weight", rng.uniform(0.5, 1.5, d).astype(np.float32))], f"{scope}/mul")
    return b.node("Add", [g, b.const(f"{scope}.bias", (rng.standard_normal(d) * 0.1).astype(np.float32))],
                  f"{scope}/add")


def gelu(b, x, scope):
    a = b.node("Div", [x, b.const(f"{scope}.sqrt2", np.float32(1.4142135381698608))], f"{scope}/div")
    e = b.node("Erf", [a], f"{scope}/erf")
    p = b.node("Add", [e, b.const(f"{scope}.one", np.float32(1.0))], f"{scope}/add")
    m = b.node("Mul", [x, p], f"{scope}/mul")
    return b.node("Mul", [m, b.const(f"{scope}.half", np.float32(0.5))], f"{scope}/mul_half")


def linear(b, x, din, dout, scope):
    y = b.node("MatMul", [x, b.weight(f"{scope}.weight", (din, dout), 1 / np.sqrt(din))], f"{scope}/matmul")
    return b.node("Add", [y, b.weight(f"{scope}.bias", (dout,), 0.1)], f"{scope}/bias")


def transformer_block(path, seq=8, d=16, heads=2, ff=32):
    b = Builder("transformer_block")
    hd = d // heads
    x = "tokens"
    h = layer_norm(b, x, d, "/attn/ln")

    def split_heads(t, scope):
        t = b.node("Reshape", [t, b.const(f"{scope}.shape", np.array([1, seq, heads, hd], np.int64))], scope + "/reshape")
        return b.node("Transpose", [t], scope + "/transpose", perm=[0, 2, 1, 3])

    q = split_heads(linear(b, h, d, d, "/attn/q"), "/attn/q")
    k = split_heads(linear(b, h, d, d, "/attn/k"), "/attn/k")
    v = split_heads(linear(b, h, d, d, "/attn/v"), "/attn/v")
    kt = b.node("Transpose", [k], "/attn/k_t", perm=[0, 1, 3, 2])
    s = b.node("MatMul", [q, kt], "/attn/scores")
    s = b.node("Mul", [s, b.const("/attn.scale", np.float32(1 / np.sqrt(hd)))], "/attn/scale")
    p = b.node("Softmax", [s], "/attn/softmax", axis=-1)
    o = b.node("MatMul", [p, v], "/attn/context")
    o = b.node("Transpose", [o], "/attn/merge/transpose", perm=[0, 2, 1, 3])
    o = b.node("Reshape", [o, b.const("/attn/merge.shape", np.array([1, seq, d], np.int64))], "/attn/merge/reshape")
    o = linear(b, o, d, d, "/attn/out")
    x = b.node("Add", [x, o], "/attn/residual")
    h = layer_norm(b, x, d, "/ffn/ln")
    h = linear(b, h, d, ff, "/ffn/up")
    h = gelu(b, h, "/ffn/gelu")
    h = linear(b, h, ff, d, "/ffn/down")
    b.node("Add", [x, h], "/ffn/residual")
    b.nodes[-1].output[0] = "hidden"
    b.save(path, [helper.make_tensor_value_info("tokens", TensorProto.FLOAT, [1, seq, d])],
           [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, seq, d])])


def two_branch(path):
    b = Builder("two_branch")
    # Branch A: convolutions over the image.
    a = b.node("Conv", ["image", b.weight("a.conv1.weight", (4, 3, 3, 3))], "/branch_a/conv1",
               kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    a = b.node("Relu", [a], "/branch_a/relu1")
    a = b.node("Conv", [a, b.weight("a.conv2.weight", (4, 4, 3, 3)), b.weight("a.conv2.bias", (4,), 0.1)],
               "/branch_a/conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    a = b.node("GlobalAveragePool", [a], "/branch_a/pool")
    a = b.node("Flatten", [a], "/branch_a/flatten", axis=1)
    # Branch B: an MLP over the feature vector, independent of branch A.
    m = b.node("MatMul", ["features", b.weight("b.fc1.weight", (6, 8))], "/branch_b/fc1")
    m = b.node("Add", [m, b.weight("b.fc1.bias", (8,), 0.1)], "/branch_b/fc1_bias")
    m = b.node("Tanh", [m], "/branch_b/tanh")
    m = b.node("MatMul", [m, b.weight("b.fc2.weight", (8, 4))], "/branch_b/fc2")
    m = b.node("Sigmoid", [m], "/branch_b/sigmoid")
    j = b.node("Concat", [a, m], "/join/concat", axis=1)
    b.node("Gemm", [j, b.weight("head.weight", (8, 3)), b.weight("head.bias", (3,), 0.1)], "/join/head")
    b.nodes[-1].output[0] = "scores"
    b.save(path, [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 8, 8]),
                  helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 6])],
           [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 3])])


def unsupported_op(path):
    b = Builder("unsupported_op")
    y = b.node("Relu", ["x"], "/pre/relu")
    y = b.node("Det", [y], "/det")
    b.node("Neg", [y], "/post/neg")
    b.nodes[-1].output[0] = "y"
    b.save(path, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 3])],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])


EXAMPLES_DOMAIN = "com.opscope.examples"  # the domain of examples/my_ops


def custom_op(path):
    b = Builder("custom_op")
    y = linear(b, "x", 16, 16, "/proj")
    y = b.node("my_norm", [y], "/norm", domain=EXAMPLES_DOMAIN, eps=1e-5)
    b.node("Relu", [y], "/act")
    b.nodes[-1].output[0] = "y"
    b.save(path, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
           extra_opsets=[(EXAMPLES_DOMAIN, 1)])


def const_if(path):
    # The branches read the outer Relu's output and the outer initializer
    # "one" by name, as ONNX subgraphs do; "two" is a Constant inside the branch.
    b = Builder("const_if")
    cond = b.const("cond", np.array(True))
    b.const("one", np.array([1.0], dtype=np.float32))
    r = b.node("Relu", ["x"], "/pre/relu")
    two = helper.make_node("Constant", [], ["two"], name="/two/Constant",
                           value=numpy_helper.from_array(np.array([2.0], dtype=np.float32), "two"))
    mul = helper.make_node("Mul", [r, "two"], ["doubled"], name="/scale/Mul")
    add = helper.make_node("Add", ["doubled", "one"], ["then_out"], name="/shift/Add")
    neg = helper.make_node("Neg", [r], ["else_out"], name="/negate/Neg")
    out_info = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 3])
    then_g = helper.make_graph([two, mul, add], "then_body", [], [out_info("then_out")])
    else_g = helper.make_graph([neg], "else_body", [], [out_info("else_out")])
    b.nodes.append(helper.make_node("If", [cond], ["picked"], name="/branch/If",
                                    then_branch=then_g, else_branch=else_g))
    b.node("Sigmoid", ["picked"], "/post/sigmoid")
    b.nodes[-1].output[0] = "y"
    b.save(path, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])


def half_section(path):
    # A float16 section around a kernel that overflows in it: the golden (in
    # float64) stays finite, the compiled run is Inf from half_rms on.
    b = Builder("half_section")
    scale = b.const("scale", np.array([300.0], dtype=np.float32))
    y = b.node("Mul", ["x", scale], "/scale")
    y = b.node("Cast", [y], "/to_half", to=TensorProto.FLOAT16)
    y = b.node("half_rms", [y], "/rms", domain=EXAMPLES_DOMAIN)
    y = b.node("Cast", [y], "/to_float", to=TensorProto.FLOAT)
    b.node("Relu", [y], "/act")
    b.nodes[-1].output[0] = "y"
    b.save(path, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
           extra_opsets=[(EXAMPLES_DOMAIN, 1)])


def nhwc_mean(path):
    # The layout pass gives channel_mean the NHWC data it asks for, and with
    # it the kernel that sums in float16.
    b = Builder("nhwc_mean")
    scale = b.const("scale", np.array([4.0], dtype=np.float32))
    y = b.node("Mul", ["x", scale], "/scale")
    y = b.node("channel_mean", [y], "/mean", domain=EXAMPLES_DOMAIN)
    b.node("Sigmoid", [y], "/act")
    b.nodes[-1].output[0] = "y"
    b.save(path, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 32, 32])],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 1])],
           extra_opsets=[(EXAMPLES_DOMAIN, 1)])


def big_input(path):
    # 16 MiB copied in for a kernel that reads one row of it: the copy is
    # the run, and nothing computes beside it (summary: data_movement).
    b = Builder("big_input")
    starts = b.const("starts", np.array([0], dtype=np.int64))
    ends = b.const("ends", np.array([1], dtype=np.int64))
    axes = b.const("axes", np.array([2], dtype=np.int64))
    y = b.node("Slice", ["x", starts, ends, axes], "/row")
    b.node("Relu", [y], "/act")
    b.nodes[-1].output[0] = "y"
    b.save(path, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 1024, 1024])],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 1, 1024])])


def many_inputs(path):
    # Sixteen 256-byte inputs, each its own copy, joined by one Concat:
    # the copies cost their fixed price sixteen times (summary: data_movement).
    b = Builder("many_inputs")
    names = [f"x{i}" for i in range(16)]
    y = b.node("Concat", names, "/join", axis=1)
    b.node("Relu", [y], "/act")
    b.nodes[-1].output[0] = "y"
    b.save(path, [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 64]) for n in names],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1024])])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    resnet_small(os.path.join(out, "resnet_small.onnx"))
    transformer_block(os.path.join(out, "transformer_block.onnx"))
    two_branch(os.path.join(out, "two_branch.onnx"))
    unsupported_op(os.path.join(out, "unsupported_op.onnx"))
    custom_op(os.path.join(out, "custom_op.onnx"))
    const_if(os.path.join(out, "const_if.onnx"))
    half_section(os.path.join(out, "half_section.onnx"))
    nhwc_mean(os.path.join(out, "nhwc_mean.onnx"))
    big_input(os.path.join(out, "big_input.onnx"))
    many_inputs(os.path.join(out, "many_inputs.onnx"))


if __name__ == "__main__":
    main()
