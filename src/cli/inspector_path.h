// File: cli/inspector_path.h
// `inspector-cli path DIR --node NAME [--depth 3] [--json]`: NAME's inputs and
// outputs with their shapes, every node on some path input -> NAME -> output
// (its ancestors and descendants) on both graph layers, printed as trees cut
// at --depth levels, and the run's critical path with whether NAME is on it.
// A name that neither layer has is refused with the closest names.
// NAME may be a framework or a compiled node; the other layer's counterpart
// is found through fused_from. Reads DIR/capture.json of a `run` folder; in a
// session folder (`start`) it reads the last graph collected (the one
// graph.json shows) and that graph's own run.
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "opscope/status.h"

namespace opscope::cli {

struct InspectorPathFlags {
  std::string dir;
  std::string node;
  int depth = 3;  // graph::kDefaultPathDepth
  bool json = false;
};

CLI::App* AddInspectorPath(CLI::App& app, InspectorPathFlags& flags);
Status RunInspectorPath(const InspectorPathFlags& flags, std::ostream& out);

}  // namespace opscope::cli
