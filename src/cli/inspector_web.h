// File: cli/inspector_web.h
// The web UI of inspector-cli and ops-debug. The page itself lives in web/
// (HTML, CSS and plain JavaScript) and is compiled into the tools
// (embed_web.cmake), so they need nothing beside them:
//   inspector-cli export --input-dir DIR --format html   -> DIR/report.html, one
//       self-contained file (the UI inlined, graph/trace/summary.json embedded,
//       DIR/roofline.svg shown when the folder has one; with --baseline BASE,
//       the diff against BASE's run marked on the graphs, the timeline and a
//       Baseline panel)
//   inspector-cli serve DIR [--port N] [--bind 127.0.0.1] [--request-timeout 10s]
//       -> the UI over HTTP, reading DIR's files on each request (a new `run`
//       into DIR shows on reload)
// A folder with a trace alone (ops-debug profile's timeline.json, or a bare
// trace.json) is shown the same way, without the graph panes; so is one with
// ops-debug diagnose's diagnosis.json, its trajectory drawn on the timeline
// (analysis/diagnose/diagnosis_timeline.h) beside a diagnosis panel. ops-debug
// profile and diagnose build their pages in memory and write them where they want:
//   OPSCOPE_ASSIGN_OR_RETURN(std::string html, BuildTimelineHtml(timeline, svg, "my_norm"));
//   OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(out_dir + "/timeline.html", html));
//   OPSCOPE_ASSIGN_OR_RETURN(std::string page, BuildDiagnosisHtml(DiagnosisJson(d), "diag/diagnosis.json"));
#pragma once

#include <chrono>
#include <csignal>
#include <cstddef>
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
// A trace shown alone, without a run's graph and summary: the first of these
// that a folder holds. diagnosis.json is converted to a trace by the library
// (DiagnosisTimelineFromJson) before the page gets it.
inline constexpr const char* kTraceOnlyFiles[] = {"trace.json", "timeline.json", "diagnosis.json"};
inline constexpr const char kDiagnosisFile[] = "diagnosis.json";
// The roofline chart a run or profile folder may hold (opscope/roofline.h).
inline constexpr const char kRooflineFile[] = "roofline.svg";

// What one page shows.
struct ReportData {
  std::string graph;         // graph.json; empty (with summary) for a trace alone
  std::string trace;         // trace.json or timeline.json (Chrome Trace Event Format)
  std::string summary;       // summary.json; empty (with graph) for a trace alone
  std::string diagnosis;     // "opscope.diagnosis_panel/1" beside a diagnosis' trace; empty: no diagnosis panel
  std::string roofline_svg;  // one <svg> element (see CheckInlineSvg); empty: no Roofline panel
  std::string title;         // the page's title; empty: the UI names it after the model
  std::string diff;          // diff.json of this run against a baseline (opscope/model.h); empty: none
};

// The run a report is compared with (`export --format html --baseline`): the
// diff of `inspector-cli diff BASE DIR`, with the same two settings.
struct ReportBaseline {
  std::string dir;  // empty: no baseline
  double threshold_time_pct = 10;
  bool allow_different_models = false;
};

// Reads a folder the UI can show: a run (graph.json, trace.json and
// summary.json, all three, the error naming the first one missing), or, where
// neither graph.json nor summary.json is there, a trace alone (kTraceOnlyFiles;
// a diagnosis.json converted, its error naming the file and the field);
// with DIR/roofline.svg when present (checked by CheckInlineSvg). A run's
// files are checked whole as JSON and must all be of one run, capture.json
// and roofline.svg included (graph/runtime/run_identity.h); so must a
// run's trace.json shown alone.
StatusOr<ReportData> ReadReportDir(const std::string& dir);

// JSON made safe inside a <script> element: every '<' becomes \u003c (valid
// wherever '<' can appear in JSON: only inside strings), so no `</script>` or
// `<!--` in a node name can end or confuse the element.
std::string EscapeJsonForScript(std::string_view json);

// The roofline chart is put into the page as markup, so it must be exactly one
// <svg>...</svg> element (an XML declaration before it is dropped) made of
// drawing elements and attributes only, by allow-lists kept equal to
// web/svg_check.js (tests/web/html_sink_lint_test.py compares them): no script,
// no <style> and no style attribute (CSS could @import from anywhere or hide
// the page), no foreignObject or HTML element (which would end the SVG inside
// an HTML body), no on* handler, url() and links only to '#id' in the same
// chart, ids prefixed "chart-" (never shadowing the page's own), no '&' or '\'
// in attribute values (entities and escapes could spell a refused word), no
// comment, CDATA or raw '<' in text. Returns the element as it will be
// inserted, or InvalidArgument naming what is refused.
StatusOr<std::string> CheckInlineSvg(std::string_view svg);

// index.html with the CSS and scripts it links inlined, each file of `data`
// embedded as <script type="application/json" id="opscope-data-trace.json">
// (graph, summary, diagnosis and diff only when present), and the roofline chart inline in its
// panel. An error when the trace is empty, only one of graph and summary is
// given, or the chart fails CheckInlineSvg.
StatusOr<std::string> BuildReportHtml(const ReportData& data);

// The page of one ops-debug profile: its timeline.json alone, with the
// roofline chart when `roofline_svg` is not empty.
StatusOr<std::string> BuildTimelineHtml(const std::string& timeline_json, const std::string& roofline_svg,
                                        const std::string& title);

// The page of one ops-debug diagnose: the diagnosis.json text (`source` names
// it in errors) as a timeline of its trajectory, the failing launch marked
// and selected, beside the diagnosis panel (status, ranked causes, stack, links).
StatusOr<std::string> BuildDiagnosisHtml(std::string_view diagnosis_json, const std::string& source);

// Reads DIR (ReadReportDir), with the diff against `baseline` when it names a
// folder (a run's: both need capture.json), and writes DIR/report.html
// atomically; returns its path.
StatusOr<std::string> WriteReportHtml(const std::string& dir, const ReportBaseline& baseline = {});

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
};

// Answers one request from its head (request line and headers). Only GET of
// the UI's own files, of DIR's run files, trace-only files and roofline.svg
// (refused with 422 when it fails CheckInlineSvg), and of /files.json, the
// list of those DIR holds now (so the page asks for nothing that is not
// there); anything else is 404 (or 405 for other methods): the path is
// matched against the list, never joined to DIR. For a folder shown by its
// diagnosis.json, / is the page BuildDiagnosisHtml makes of it now (422 when
// the file is refused): the conversion is the library's, not the page's.
// A server bound to loopback also refuses (403) a Host header that names
// anything but loopback, so a web page whose name was re-pointed at 127.0.0.1
// (DNS rebinding) cannot read the run.
HttpResponse AnswerHttpRequest(std::string_view head, const std::string& dir,
                               std::string_view bind_address = "127.0.0.1");

// What `serve` takes from one client before it answers. A request line
// longer than kMaxRequestLineBytes is refused with 414, header lines longer
// than kMaxHeaderBytes together (the blank line's CRLF counted) with 431:
// no more than kMaxRequestHeadBytes of a request is ever held.
inline constexpr size_t kMaxRequestLineBytes = 8 * 1024;
inline constexpr size_t kMaxHeaderBytes = 32 * 1024;
inline constexpr size_t kMaxRequestHeadBytes = kMaxRequestLineBytes + 2 + kMaxHeaderBytes + 1;

// Where a request head stands after the bytes received so far (the framing
// WebServer reads by; AnswerHttpRequest is given the head once complete).
struct RequestHeadScan {
  size_t head_size = 0;  // > 0: complete, this many bytes with its blank line
  int refuse = 0;        // 400, 414 or 431: answer it now, whatever follows
  std::string reason;    // why, for the refusal's body
};
// Neither head_size nor refuse: more is needed. A request line is refused
// with 400 as soon as it cannot become valid: at its first byte that is not
// part of a method (a token), or once whole when it is not
// "METHOD TARGET HTTP/1.x" (the rule AnswerHttpRequest holds it to).
RequestHeadScan ScanRequestHead(std::string_view received);

// How long and how many clients WebServer holds.
struct ServeLimits {
  // The whole request head must arrive within it (408 otherwise), and a
  // response that makes no progress for as long is dropped.
  std::chrono::milliseconds request_timeout{10000};
  // Clients held at once. At the cap a new one takes the place of one
  // already answered but not yet closed, else of the oldest still sending its
  // request, which gets 503; when every one is being answered, the new one
  // gets 503.
  int max_connections = 64;
  // The answers held for clients that have not read them yet, in bytes. A
  // request whose answer would take the total past it gets 503 instead (one
  // answer is always given while none waits: a trace may be larger), so
  // clients that ask and never read cannot make the server hold every run
  // file 64 times over.
  size_t max_pending_bytes = size_t{256} << 20;
};

// A small HTTP/1.1 server (one request per connection, Connection: close):
// one thread polls every client without blocking on any, so silent or slow
// ones (a browser's speculative connections, a hostile client) cannot keep
// the others waiting.
class WebServer {
 public:
  WebServer() = default;
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Binds and listens; port 0 lets the kernel pick a free one (see port()).
  Status Listen(const std::string& bind_address, int port);
  int port() const { return port_; }
  // Serves `dir` until *stop becomes nonzero (checked at least every 200 ms);
  // responses under way then get two more seconds to finish.
  Status Serve(const std::string& dir, const volatile std::sig_atomic_t* stop, const ServeLimits& limits = {});

 private:
  std::string bind_address_;
  int fd_ = -1;
  int port_ = 0;
};

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
