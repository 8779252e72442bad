// File: graph/ort/ort_run.h
// An onnxruntime run as the three layers of an opscope run: the framework
// graph is the model as written, the compiled graph is the model onnxruntime
// optimized and saved (SessionOptions optimized_model_filepath, level "all"),
// tied to it by ort_mapping.h, and the tasks are the kernel events of its
// profile (ort_profile.h), one stream per thread that ran kernels. The result
// is a CapturedRun, which the exports, summary, path, diff and the report
// page read as they read one of `inspector-cli run`.
//
//   OPSCOPE_ASSIGN_OR_RETURN(OrtRun r, ImportOrtRun({.model = "m.onnx", .optimized = "m.opt.onnx",
//                                                   .profile = "ort_2026-12-05.json"}));
//
// The profile's runs are the iterations: the first is left untimed as
// warm-up when there are several (onnxruntime allocates and packs weights
// in it), and a timed run that executed another set of kernels is left out
// and counted. A kernel event naming no node of the optimized model is a
// task with no node, labelled; a node without a kernel event is not executed.
#pragma once

#include <string>
#include <vector>

#include "graph/ort/ort_mapping.h"
#include "graph/run/captured_run.h"
#include "opscope/status.h"

namespace opscope::graph {

struct OrtRunFiles {
  std::string model, optimized, profile;
  int warmup = -1;  // the profile's first runs left untimed; -1: one when it holds several
};

struct OrtRun {
  CapturedRun run;  // run.source names the files; no identity or folder yet
  OrtMapping mapping;
  int profile_runs = 0;         // runs of the profile that executed kernels
  int runs_left_out = 0;        // timed runs whose kernels differ from the first timed one's
  int64_t unmapped_tasks = 0;   // kernel events naming no node of the optimized model
  int64_t kernels_outside_runs = 0;
  std::vector<std::string> providers;  // execution providers that ran kernels, in order of first use
};

inline constexpr char kOnnxruntime[] = "onnxruntime";

// Errors name the file and what was expected: a model or optimized model
// that is not ONNX, a profile that is not onnxruntime's, a warm-up that
// leaves no run, an optimized model with no node the profile names (the
// profile of another model).
StatusOr<OrtRun> ImportOrtRun(const OrtRunFiles& files);

}  // namespace opscope::graph
