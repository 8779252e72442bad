"""The diagnose examples' inputs and model, written once and kept in the repo
(run with Debian's python3: python3-numpy and python3-onnx).

  zero_row.npy       float32 [8, 64], normal, row 3 all zeros (rms_norm_no_eps divides 0 by 0)
  async_gather.onnx  idx = async_indices(x; rows=16), y = gather_rows(table, idx), table float32 [16, 64]
  exp_histogram.onnx counts = log2_histogram(Exp(x * 100)): Exp overflows to Inf (and underflows to 0)
"""
import os

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)

x = rng.standard_normal((8, 64)).astype(np.float32)
x[3, :] = 0
np.save(os.path.join(here, "zero_row.npy"), x)

DOMAIN = "com.opscope.examples"  # as examples/models
nodes = [
    helper.make_node("async_indices", ["x"], ["idx"], name="/indices/async_indices", domain=DOMAIN, rows=16),
    helper.make_node("gather_rows", ["table", "idx"], ["y"], name="/gather/gather_rows", domain=DOMAIN),
]
graph = helper.make_graph(
    nodes, "async_gather",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32]),
     helper.make_tensor_value_info("table", TensorProto.FLOAT, [16, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 64])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)],
                          producer_name="opscope-examples", producer_version="1")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(here, "async_gather.onnx"))

nodes = [
    helper.make_node("Mul", ["x", "scale"], ["scaled"], name="/scale/Mul"),
    helper.make_node("Exp", ["scaled"], ["e"], name="/exp/Exp"),
    helper.make_node("log2_histogram", ["e"], ["counts"], name="/hist/log2_histogram", domain=DOMAIN),
]
graph = helper.make_graph(
    nodes, "exp_histogram",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
    [helper.make_tensor_value_info("counts", TensorProto.FLOAT, [32])],
    [onnx.numpy_helper.from_array(np.array([100.0], dtype=np.float32), "scale")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)],
                          producer_name="opscope-examples", producer_version="1")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(here, "exp_histogram.onnx"))
