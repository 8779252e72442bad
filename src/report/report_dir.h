// File: report/report_dir.h
// The folders a page of ours shows, read for it: a run's (inspector-cli run
// or export), or one holding a trace alone (ops-debug profile's
// timeline.json, a bare trace.json, ops-debug diagnose's diagnosis.json).
// Every file is untrusted: read by name inside the folder, never through a
// link, checked whole before a page is made of it.
#pragma once

#include <string>
#include <string_view>

#include "opscope/status.h"

namespace opscope {

// The run files the UI reads, by the names it asks for.
inline constexpr const char* kRunFiles[] = {"graph.json", "trace.json", "summary.json"};
// A trace shown alone, without a run's graph and summary: the first of these
// that a folder holds. diagnosis.json is converted to a trace by the library
// (DiagnosisTimelineFromJson) before the page gets it.
inline constexpr const char* kTraceOnlyFiles[] = {"trace.json", "timeline.json", "diagnosis.json"};
inline constexpr const char kDiagnosisFile[] = "diagnosis.json";

// What one page shows.
struct ReportData {
  std::string graph;         // graph.json; empty (with summary) for a trace alone
  std::string trace;         // trace.json or timeline.json (Chrome Trace Event Format)
  std::string summary;       // summary.json; empty (with graph) for a trace alone
  std::string diagnosis;     // "opscope.diagnosis_panel/1" beside a diagnosis' trace; empty: no diagnosis panel
  std::string roofline_svg;  // one <svg> element (see CheckInlineSvg); empty: no Roofline panel
  std::string title;         // the page's title; empty: the UI names it after the model
  std::string diff;          // diff.json of this run against a baseline (opscope/model.h); empty: none
  std::string accuracy;      // accuracy.json as AccuracyForPage keeps it (or its refusal); empty: none
};

// Reads a folder the UI can show: a run (graph.json, trace.json and
// summary.json, all three, the error naming the first one missing), or, where
// neither graph.json nor summary.json is there, a trace alone (kTraceOnlyFiles;
// a diagnosis.json converted, its error naming the file and the field);
// with DIR/roofline.svg when present (checked by CheckInlineSvg). A run's
// files are checked whole as JSON and must all be of one run, capture.json
// and roofline.svg included (graph/run/run_identity.h); so must a
// run's trace.json shown alone. A run's accuracy.json, when there is one,
// comes with it (report/page_data.h's AccuracyForPage: another run's is
// refused in the page's data, not by an error).
StatusOr<ReportData> ReadReportDir(const std::string& dir);

// A diagnosis.json's text (`source` names it in errors) as a page shows it:
// the timeline of its trajectory beside the diagnosis panel.
StatusOr<ReportData> DiagnosisReportData(std::string_view diagnosis_json, const std::string& source);

// Whether the folder has something by that name that is not a folder: a
// file, or a link or device named like one, which ReadFolderFile then refuses
// by name (a link is never read: whatever it points at is outside the folder).
bool FolderHolds(const std::string& dir, const std::string& name);
// A run's folder: it holds graph.json or summary.json.
bool IsRunFolder(const std::string& dir);
// The trace-only file a folder is shown by, or nullptr: a run's folder is never one.
const char* TraceOnlyFileIn(const std::string& dir);

}  // namespace opscope
