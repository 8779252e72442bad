// File: cli/serve_command.h
// inspector-cli serve DIR [--port N] [--bind 127.0.0.1] [--request-timeout 10s]:
// the web UI over HTTP, reading DIR's files on each request (a new `run` into
// DIR shows on reload). DIR is a run folder or one holding a trace alone
// (report/report_dir.h).
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "opscope/status.h"

namespace opscope::cli {

struct InspectorServeFlags {
  std::string dir;
  int port = 8765;
  std::string bind = "127.0.0.1";
  std::string request_timeout = "10s";  // ServeLimits::request_timeout, 10ms to 10m
};

CLI::App* AddInspectorServe(CLI::App& app, InspectorServeFlags& flags);
// Prints `serving DIR at http://ADDRESS:PORT/` (flushed) and serves until
// SIGINT or SIGTERM.
Status RunInspectorServe(const InspectorServeFlags& flags, std::ostream& out);

}  // namespace opscope::cli
