#include "cli/serve_command.h"

#include <chrono>
#include <cmath>
#include <csignal>

#include "cli/web_server.h"
#include "core/text_format.h"
#include "opscope/diagnose.h"
#include "report/report_dir.h"

namespace opscope::cli {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void OnStopSignal(int) { g_stop_signal = 1; }

}  // namespace

CLI::App* AddInspectorServe(CLI::App& app, InspectorServeFlags& flags) {
  CLI::App* cmd = app.add_subcommand("serve", "serve the web UI for a run folder on loopback (until Ctrl-C)");
  cmd->add_option("dir", flags.dir,
                  "a folder written by `inspector-cli run`, or one holding a trace alone (timeline.json of "
                  "`ops-debug profile`, diagnosis.json of `ops-debug diagnose`), with roofline.svg if it has one")
      ->required();
  cmd->add_option("--port", flags.port, "TCP port (default 8765; 0 picks a free one)");
  cmd->add_option("--bind", flags.bind, "IPv4 address to listen on (default 127.0.0.1)");
  cmd->add_option("--request-timeout", flags.request_timeout,
                  "a client's request head must arrive within it, or it gets 408 (default 10s; 500ms, 1m ...)");
  return cmd;
}

namespace {

// A browser sends its whole head at once; up to 10 minutes leaves room for
// someone typing a request by hand.
StatusOr<std::chrono::milliseconds> ParseRequestTimeout(const std::string& text) {
  const StatusOr<double> seconds = ParseDuration(text);
  if (!seconds.ok() || *seconds < 0.01 || *seconds > 600) {
    return InvalidArgumentError("--request-timeout '" + text +
                                "': expected a duration from 10ms to 10m, such as 10s or 500ms");
  }
  return std::chrono::milliseconds(std::llround(*seconds * 1000));
}

}  // namespace

Status RunInspectorServe(const InspectorServeFlags& flags, std::ostream& out) {
  ServeLimits limits;
  OPSCOPE_ASSIGN_OR_RETURN(limits.request_timeout, ParseRequestTimeout(flags.request_timeout));
  // Checked up front, so a wrong folder is one line now, not a 404 later.
  OPSCOPE_RETURN_IF_ERROR(ReadReportDir(flags.dir).status());
  WebServer server;
  OPSCOPE_RETURN_IF_ERROR(server.Listen(flags.bind, flags.port));
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  g_stop_signal = 0;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  out << "serving " << flags.dir << " at http://" << flags.bind << ":" << server.port() << "/" << std::endl;
  return server.Serve(flags.dir, &g_stop_signal, limits);
}

}  // namespace opscope::cli
