// File: cli/inspector_import_ort.h
// `inspector-cli import-ort --model M.onnx --optimized M.opt.onnx --profile
// P.json --output-dir DIR`: an onnxruntime run read as the three layers
// (opscope/model.h's ImportOnnxruntimeRun) and written as a run folder that
// summary, path, diff, export and serve read as one of `run`'s. Prints how
// the optimized model's nodes were tied to the model's, then what `run`
// prints of a run.
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "opscope/status.h"

namespace opscope::cli {

struct InspectorImportOrtFlags {
  std::string model, optimized, profile, output_dir;
  int warmup = -1;
};

CLI::App* AddInspectorImportOrt(CLI::App& app, InspectorImportOrtFlags& flags);
Status RunInspectorImportOrt(const InspectorImportOrtFlags& flags, std::ostream& out);

}  // namespace opscope::cli
