// File: graph/run/output_checks.h
// `inspector-cli run --expected`: a model's outputs held against outputs
// computed elsewhere (onnxruntime, the training framework), with the compare
// engine's rules and per-dtype defaults (opscope/compare.h). The files are
// read and checked against the compiled graph's outputs before the model
// runs, so a wrong count, shape or dtype costs no run; each output is then
// compared and its verdict kept with the run (capture.json, summary.json).
//
//   OPSCOPE_ASSIGN_OR_RETURN(auto expected, graph::ReadExpectedOutputs(files, model.compiled));
//   ... run ...
//   OPSCOPE_ASSIGN_OR_RETURN(auto checks, graph::CheckOutputs(expected, result.outputs, spec));
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_field.h"
#include "graph/ir/ir.h"
#include "opscope/compare.h"
#include "opscope/model.h"
#include "opscope/tensor.h"

namespace opscope::graph {

struct ExpectedOutput {
  std::string name, file;  // the graph output; the .npy it is held against
  Tensor tensor;
};

// `files`: one per graph output in order ("y.npy"), or by name ("y=y.npy")
// for any of them; errors name `expected_files` and the file.
StatusOr<std::vector<ExpectedOutput>> ReadExpectedOutputs(const std::vector<std::string>& files, const Graph& compiled);

// One check per expected output, in the order given; errors (an output the
// run did not produce, a shape the run changed) name `expected_files`.
StatusOr<std::vector<OutputCheck>> CheckOutputs(const std::vector<ExpectedOutput>& expected,
                                                const std::map<std::string, Tensor>& outputs,
                                                const ToleranceSpec& tolerance);

// JSON has no infinities or NaN: a non-finite error is written as null
// (the text beside it says which).
nlohmann::json FiniteOrNull(double v);

// As capture.json and summary.json hold them ("outputs_checked").
nlohmann::json OutputChecksJson(const std::vector<OutputCheck>& checks);
std::vector<OutputCheck> OutputChecksFromJson(const JsonField& j);

}  // namespace opscope::graph
