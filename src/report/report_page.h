// File: report/report_page.h
// The pages of the web UI, built by the library so every tool writes the
// same one. The page itself lives in web/ (HTML, CSS and plain JavaScript)
// and is compiled in (report/web_assets.h); a page is one self-contained file:
//   inspector-cli export --input-dir DIR --format html   -> DIR/report.html (the
//       UI inlined, graph/trace/summary.json embedded, DIR/roofline.svg shown
//       when the folder has one; with --baseline BASE, the diff against BASE's
//       run marked on the graphs, the timeline and a Baseline panel)
//   ops-debug profile --output T.json   -> T.html, its timeline and roofline
//       (report/profile_page.h)
//   ops-debug diagnose   -> diagnosis.html, the trajectory on the timeline, the
//       failing launch marked
// A folder with a trace alone (report/report_dir.h) is shown the same way,
// without the graph panes. inspector-cli serve (src/cli) answers with the same
// pages and files over HTTP.
//   OPSCOPE_ASSIGN_OR_RETURN(std::string html, BuildTimelineHtml(timeline, svg, "my_norm"));
//   OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(out_dir + "/timeline.html", html));
//   OPSCOPE_ASSIGN_OR_RETURN(std::string page, BuildDiagnosisHtml(DiagnosisJson(d), "diag/diagnosis.json"));
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "opscope/status.h"
#include "report/report_dir.h"

namespace opscope {

// JSON made safe inside a <script> element: every '<' becomes \u003c (valid
// wherever '<' can appear in JSON: only inside strings), so no `</script>` or
// `<!--` in a node name can end or confuse the element.
std::string EscapeJsonForScript(std::string_view json);

// Embedded data this large or larger goes in gzipped, as base64 in a
// <script type="application/octet-stream" data-encoding="gzip+base64">,
// which web/app.js inflates with the browser's DecompressionStream: JSON
// shrinks about 8x, so a 100,000-node run's page is 15 MB, not 92. Smaller
// data stays readable JSON.
inline constexpr size_t kGzipEmbeddedFrom = size_t{1} << 20;

// index.html with the CSS and scripts it links inlined, each file of `data`
// embedded as <script type="application/json" id="opscope-data-trace.json">
// (graph, summary, diagnosis and diff only when present; slimmed by
// report/page_data.h; gzipped from kGzipEmbeddedFrom bytes), the roofline
// chart inline in its panel, and a
// Content-Security-Policy naming what was inlined (report/page_policy.h).
// An error when the trace is empty, only one of graph and summary is given,
// or the chart fails CheckInlineSvg.
StatusOr<std::string> BuildReportHtml(const ReportData& data);

// The page of one ops-debug profile: its timeline.json alone, with the
// roofline chart when `roofline_svg` is not empty.
StatusOr<std::string> BuildTimelineHtml(const std::string& timeline_json, const std::string& roofline_svg,
                                        const std::string& title);

// The page of one ops-debug diagnose: the diagnosis.json text (`source` names
// it in errors) as a timeline of its trajectory, the failing launch marked
// and selected, beside the diagnosis panel (status, ranked causes, stack, links).
StatusOr<std::string> BuildDiagnosisHtml(std::string_view diagnosis_json, const std::string& source);

// The run a report is compared with (`export --format html --baseline`): the
// diff of `inspector-cli diff BASE DIR`, with the same two settings.
struct ReportBaseline {
  std::string dir;  // empty: no baseline
  double threshold_time_pct = 10;
  bool allow_different_models = false;
};

// Reads DIR (ReadReportDir), with the diff against `baseline` when it names a
// folder (a run's: both need capture.json), and writes DIR/report.html
// atomically; returns its path.
StatusOr<std::string> WriteReportHtml(const std::string& dir, const ReportBaseline& baseline = {});

}  // namespace opscope
