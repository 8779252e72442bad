#include "report/report_page.h"

#include <optional>
#include <regex>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/gzip.h"
#include "core/sha256.h"
#include "opscope/npy.h"
#include "core/json_text.h"
#include "opscope/model.h"
#include "report/inline_svg.h"
#include "report/page_data.h"
#include "report/page_policy.h"
#include "report/web_assets.h"

namespace opscope {

std::string EscapeJsonForScript(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

StatusOr<std::string> BuildReportHtml(const ReportData& data) {
  if (data.trace.empty()) return InvalidArgumentError("BuildReportHtml: no trace to show");
  if (data.graph.empty() != data.summary.empty()) {
    return InvalidArgumentError(
        "BuildReportHtml: a run needs both graph.json and summary.json (or neither, for a trace alone)");
  }
  std::string svg;
  if (!data.roofline_svg.empty()) {
    OPSCOPE_ASSIGN_OR_RETURN(svg, CheckInlineSvg(data.roofline_svg));
  }
  const WebAsset* index = FindWebAsset("index.html");
  if (!index) return InternalError("web/index.html is not compiled in");
  const std::string page(index->data);
  std::string json_data;
  const auto embed = [&](const std::string& id, const std::string& json) {
    if (json.size() >= kGzipEmbeddedFrom) {
      const std::string gz = Gzip(json);
      json_data += "<script type=\"application/octet-stream\" id=\"opscope-data-" + id +
                   "\" data-encoding=\"gzip+base64\">" +
                   Base64({reinterpret_cast<const uint8_t*>(gz.data()), gz.size()}) + "</script>\n";
      return;
    }
    json_data += "<script type=\"application/json\" id=\"opscope-data-" + id + "\">" + EscapeJsonForScript(json) +
                 "</script>\n";
  };
  if (!data.graph.empty()) embed("graph.json", GraphForPage(data.graph));
  embed("trace.json", data.trace);
  if (!data.summary.empty()) embed("summary.json", SummaryForPage(data.summary));
  if (!data.diagnosis.empty()) embed("diagnosis", data.diagnosis);
  if (!data.diff.empty()) embed("diff.json", DiffForPage(data.diff));
  if (!data.accuracy.empty()) embed("accuracy.json", data.accuracy);
  if (!data.title.empty()) embed("page", JsonText(nlohmann::json({{"title", data.title}})));
  // One pass over index.html alone: the links as it writes them and its three
  // markers; what goes in is never scanned again. Anything else is left as it is.
  static const std::regex link(R"re(<link rel="stylesheet" href="([A-Za-z0-9_.-]+)">)re"
                               R"re(|<script src="([A-Za-z0-9_.-]+)"></script>)re"
                               R"re(|<!-- opscope:(data|roofline|policy) -->)re");
  std::string out;
  out.reserve(page.size() + 64 * 1024 + json_data.size() + svg.size());
  size_t last = 0;
  bool data_placed = false, svg_placed = false;
  std::optional<size_t> policy_at;  // the policy needs every inlined hash: it goes in last
  std::vector<std::string> scripts, styles;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), link); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out.append(page, last, static_cast<size_t>(m.position(0)) - last);
    last = static_cast<size_t>(m.position(0) + m.length(0));
    if (m.str(3) == "policy") {
      // A <meta> policy covers only what comes after it.
      if (!scripts.empty() || !styles.empty()) {
        return InternalError("web/index.html inlines an asset before its <!-- opscope:policy --> marker");
      }
      policy_at = out.size();
      continue;
    }
    if (m[3].matched) {
      const bool is_data = m.str(3) == "data";
      out += is_data ? json_data : svg;
      (is_data ? data_placed : svg_placed) = true;
      continue;
    }
    const bool css = m[1].matched;
    OPSCOPE_ASSIGN_OR_RETURN(InlinedAsset inlined, InlineAsset(css ? m.str(1) : m.str(2), css ? "style" : "script"));
    out += inlined.element;
    (css ? styles : scripts).push_back(std::move(inlined.hash_source));
  }
  out.append(page, last);
  if (!data_placed || !svg_placed || !policy_at) {
    return InternalError(
        "web/index.html lacks the <!-- opscope:data -->, <!-- opscope:roofline --> or <!-- opscope:policy --> marker");
  }
  out.insert(*policy_at, "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
                             PagePolicy(scripts, styles, /*served=*/false) + "\">");
  return out;
}

StatusOr<std::string> BuildTimelineHtml(const std::string& timeline_json, const std::string& roofline_svg,
                                        const std::string& title) {
  return BuildReportHtml(ReportData{.trace = timeline_json, .roofline_svg = roofline_svg, .title = title});
}

StatusOr<std::string> BuildDiagnosisHtml(std::string_view diagnosis_json, const std::string& source) {
  OPSCOPE_ASSIGN_OR_RETURN(ReportData data, DiagnosisReportData(diagnosis_json, source));
  return BuildReportHtml(data);
}

StatusOr<std::string> WriteReportHtml(const std::string& dir, const ReportBaseline& baseline) {
  OPSCOPE_ASSIGN_OR_RETURN(ReportData data, ReadReportDir(dir));
  if (!baseline.dir.empty()) {
    StatusOr<RunDiffReport> d = DiffRunFolders({.base_dir = baseline.dir,
                                                .new_dir = dir,
                                                .threshold_time_pct = baseline.threshold_time_pct,
                                                .allow_different_models = baseline.allow_different_models});
    if (!d.ok()) return Status(d.status()).WithContext("baseline " + baseline.dir);
    data.diff = std::move(d->json);
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::string html, BuildReportHtml(data));
  const std::string path = dir + "/report.html";
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(path, html));
  return path;
}

}  // namespace opscope
