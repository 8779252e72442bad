#include "report/report_dir.h"

#include <filesystem>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "analysis/diagnose/diagnosis_timeline.h"
#include "core/file_util.h"
#include "core/json_text.h"
#include "graph/export/capture_json.h"
#include "graph/export/run_folder.h"
#include "graph/export/session_export.h"
#include "graph/harness/accuracy_json.h"
#include "graph/run/captured_run.h"
#include "graph/run/run_identity.h"
#include "report/inline_svg.h"
#include "report/page_data.h"

namespace opscope {

bool FolderHolds(const std::string& dir, const std::string& name) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::symlink_status(dir + "/" + name, ec);
  return std::filesystem::exists(st) && !std::filesystem::is_directory(st);
}

bool IsRunFolder(const std::string& dir) { return FolderHolds(dir, "graph.json") || FolderHolds(dir, "summary.json"); }

const char* TraceOnlyFileIn(const std::string& dir) {
  if (IsRunFolder(dir)) return nullptr;
  for (const char* name : kTraceOnlyFiles) {
    if (FolderHolds(dir, name)) return name;
  }
  return nullptr;
}

StatusOr<ReportData> DiagnosisReportData(std::string_view diagnosis_json, const std::string& source) {
  OPSCOPE_ASSIGN_OR_RETURN(DiagnosisTimeline t, DiagnosisTimelineFromJson(diagnosis_json, source));
  return ReportData{.trace = std::move(t.trace), .diagnosis = std::move(t.panel), .title = std::move(t.title)};
}

StatusOr<ReportData> ReadReportDir(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) {
    return NotFoundError(dir + ": no such folder (an inspector-cli run output folder)");
  }
  const auto missing = [&](const std::string& name, const std::string& more) {
    return NotFoundError(dir + "/" + name + ": missing (write it with `inspector-cli run MODEL.onnx --output-dir " +
                         dir + "` or `inspector-cli export --input-dir " + dir + " --format json`)" + more);
  };
  ReportData data;
  const bool run = IsRunFolder(dir);
  // A session's exports are written by one `export` and carry no run identity.
  const bool session = graph::IsSessionDir(dir);
  if (run) {
    std::string* into[] = {&data.graph, &data.trace, &data.summary};
    std::map<std::string, const std::string*> texts;
    for (size_t i = 0; i < std::size(kRunFiles); ++i) {
      if (!FolderHolds(dir, kRunFiles[i])) return missing(kRunFiles[i], "");
      OPSCOPE_ASSIGN_OR_RETURN(*into[i], ReadFolderFile(dir, kRunFiles[i]));
      texts[kRunFiles[i]] = into[i];
    }
    // All three checked whole as JSON, and they, capture.json and
    // roofline.svg all of one run: a page never mixes two runs.
    if (!session) {
      OPSCOPE_ASSIGN_OR_RETURN(graph::RunIdentity id, graph::CheckRunFolder(dir, texts));
      if (FolderHolds(dir, kAccuracyFile)) {
        StatusOr<std::string> text = ReadFolderFile(dir, kAccuracyFile);
        data.accuracy = text.ok() ? AccuracyForPage(*text, id.id, dir + "/" + kAccuracyFile)
                                  : JsonText(nlohmann::json{{"error", text.status().message()}});
      }
    }
  } else if (const char* name = TraceOnlyFileIn(dir)) {
    const std::string path = dir + "/" + name;
    OPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadFolderFile(dir, name));
    if (std::string_view(name) == kDiagnosisFile) {
      OPSCOPE_ASSIGN_OR_RETURN(data, DiagnosisReportData(text, path));
    } else {
      // A trace a run wrote is shown alone only beside files of that run.
      OPSCOPE_ASSIGN_OR_RETURN(std::optional<graph::RunIdentity> id, graph::FindRunFileIdentity(path, &text));
      if (id && !session) OPSCOPE_RETURN_IF_ERROR(graph::CheckRunFolder(dir, {{name, &text}}).status());
      data.trace = std::move(text);
    }
  }
  if (data.trace.empty()) {
    return missing("graph.json", ", and there is no trace.json, timeline.json (ops-debug profile) or diagnosis.json "
                                 "(ops-debug diagnose) to show alone");
  }
  if (FolderHolds(dir, graph::kRooflineFile)) {
    OPSCOPE_ASSIGN_OR_RETURN(std::string svg, ReadFolderFile(dir, graph::kRooflineFile));
    StatusOr<std::string> checked = CheckInlineSvg(svg);
    if (!checked.ok()) return InvalidArgumentError(dir + "/" + graph::kRooflineFile + ": " + checked.status().message());
    data.roofline_svg = std::move(*checked);
  }
  return data;
}

}  // namespace opscope
