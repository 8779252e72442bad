// File: cli/inspector_web.h
// The web UI of inspector-cli. The page itself lives in web/ (HTML, CSS and
// plain JavaScript) and is compiled into the tool (embed_web.cmake), so the
// tool needs nothing beside it:
//   inspector-cli export --input-dir DIR --format html   -> DIR/report.html, one
//       self-contained file (the UI inlined, graph/trace/summary.json embedded)
//   inspector-cli serve DIR [--port N] [--bind 127.0.0.1] -> the UI over HTTP,
//       reading DIR's JSON files on each request (a new `run` into DIR shows on reload)
#pragma once

#include <csignal>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "opscope/status.h"

namespace opscope::cli {

// One file of web/, as compiled in.
struct WebAsset {
  std::string_view name;          // "app.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view data;
};

// Defined in the generated web_assets.cc.
const std::vector<WebAsset>& EmbeddedWebAssets();
const WebAsset* FindWebAsset(std::string_view name);

// The run files the UI reads, by the names it asks for.
inline constexpr const char* kRunFiles[] = {"graph.json", "trace.json", "summary.json"};

// DIR's run files, in kRunFiles order; the error names the first one missing.
StatusOr<std::vector<std::string>> ReadRunFiles(const std::string& dir);

// JSON made safe inside a <script> element: every '<' becomes \u003c (valid
// wherever '<' can appear in JSON: only inside strings), so no `</script>` or
// `<!--` in a node name can end or confuse the element.
std::string EscapeJsonForScript(std::string_view json);

// index.html with the CSS and scripts it links inlined and each run file
// embedded as <script type="application/json" id="opscope-data-graph.json">.
// `files` holds the contents of kRunFiles, in that order.
StatusOr<std::string> BuildReportHtml(const std::vector<std::string>& files);

// Reads DIR's run files (one error naming the missing one) and writes
// DIR/report.html atomically; returns its path.
StatusOr<std::string> WriteReportHtml(const std::string& dir);

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
};

// Answers one request from its head (request line and headers). Only GET of
// the UI's own files and of DIR's run files; anything else is 404 (or 405 for
// other methods): the path is matched against the list, never joined to DIR.
// A server bound to loopback also refuses (403) a Host header that names
// anything but loopback, so a web page whose name was re-pointed at 127.0.0.1
// (DNS rebinding) cannot read the run.
HttpResponse AnswerHttpRequest(std::string_view head, const std::string& dir,
                               std::string_view bind_address = "127.0.0.1");

// A small HTTP/1.1 server (one connection per request, Connection: close).
class WebServer {
 public:
  WebServer() = default;
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Binds and listens; port 0 lets the kernel pick a free one (see port()).
  Status Listen(const std::string& bind_address, int port);
  int port() const { return port_; }
  // Serves `dir` until *stop becomes nonzero (checked at least every 200 ms).
  Status Serve(const std::string& dir, const volatile std::sig_atomic_t* stop);

 private:
  std::string bind_address_;
  int fd_ = -1;
  int port_ = 0;
};

struct InspectorServeFlags {
  std::string dir;
  int port = 8765;
  std::string bind = "127.0.0.1";
};

CLI::App* AddInspectorServe(CLI::App& app, InspectorServeFlags& flags);
// Prints `serving DIR at http://ADDRESS:PORT/` (flushed) and serves until
// SIGINT or SIGTERM.
Status RunInspectorServe(const InspectorServeFlags& flags, std::ostream& out);

}  // namespace opscope::cli
