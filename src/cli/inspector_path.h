// File: cli/inspector_path.h
// `inspector-cli path DIR --node NAME [--json]`: every node on some path
// input -> NAME -> output (its ancestors and descendants) on both graph
// layers, by name, and the run's critical path with whether NAME is on it.
// NAME may be a framework or a compiled node; the other layer's counterpart
// is found through fused_from. Reads DIR/capture.json.
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/inspector_capture.h"
#include "opscope/status.h"

namespace opscope::cli {

struct InspectorPathFlags {
  std::string dir;
  std::string node;
  bool json = false;
};

CLI::App* AddInspectorPath(CLI::App& app, InspectorPathFlags& flags);
// The report as JSON (schema "opscope.path/1"); the text form prints it.
StatusOr<nlohmann::json> PathReport(const CapturedRun& run, const std::string& node_name);
Status RunInspectorPath(const InspectorPathFlags& flags, std::ostream& out);

}  // namespace opscope::cli
