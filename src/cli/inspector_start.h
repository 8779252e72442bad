// File: cli/inspector_start.h
// `inspector-cli start --output-dir DIR [--enable-graph] [--enable-runtime]`:
// opens a capture session (capture/session.h). Creates DIR, clears the
// records of an earlier session there, writes DIR/session.json with the
// collectors switched on, and prints the lines a shell can eval:
//
//   $ eval "$(inspector-cli start --output-dir /tmp/s --enable-graph --enable-runtime)"
//   $ ./my_program                     # any program linking libopscope.so
//   $ inspector-cli export --input-dir /tmp/s --format json
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "opscope/status.h"

namespace opscope::cli {

struct InspectorStartFlags {
  std::string output_dir;
  bool enable_graph = false;
  bool enable_runtime = false;
};

CLI::App* AddInspectorStart(CLI::App& app, InspectorStartFlags& flags);
Status RunInspectorStart(const InspectorStartFlags& flags, std::ostream& out);

}  // namespace opscope::cli
