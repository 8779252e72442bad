// File: graph/onnx/synthetic_model.h
// The scale-test model of examples/models/make_synthetic.py, built in C++
// through the ONNX protobuf API so benchmarks and tests need no Python:
// blocks of MatMul + Add(bias) + Relu and Sigmoid joined by Mul, then a
// residual Add, over a [1, width] tensor; Relus fill up to exactly N nodes.
#pragma once

#include <cstdint>
#include <string>

#include "opscope/status.h"

namespace opscope::graph {

// Writes the model of `num_nodes` nodes to `path` (atomically).
Status WriteSyntheticModel(int64_t num_nodes, const std::string& path, int64_t width = 64);

}  // namespace opscope::graph
