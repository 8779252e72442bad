#include "report/profile_page.h"

#include <filesystem>

#include "core/file_util.h"
#include "opscope/npy.h"
#include "opscope/roofline.h"
#include "report/report_page.h"

namespace opscope {

std::string ProfilePagePath(const std::string& timeline) {
  return std::filesystem::path(timeline).replace_extension(".html").string();
}

StatusOr<OpRunReport> ProfileOpWithPage(const ProfileRequest& request) {
  if (std::filesystem::path(request.timeline).extension() != ".json") {
    return InvalidArgumentError("timeline " + request.timeline +
                                ": expected a .json file name (the timeline; its .html goes beside it)");
  }
  // report.json is written once the page is, so it can name it.
  ProfileRequest r = request;
  r.run.report.clear();
  OPSCOPE_ASSIGN_OR_RETURN(OpRunReport report, ProfileOpInstance(r));
  if (report.profile) {
    OpProfile& p = *report.profile;
    const std::string svg = RooflineSvg(p.peaks, {{.label = report.kernel, .dtype = p.dtype, .point = p.roofline}});
    OPSCOPE_ASSIGN_OR_RETURN(std::string page,
                             BuildTimelineHtml(p.timeline_json, svg, "ops-debug profile · " + report.op));
    const std::string html = ProfilePagePath(request.timeline);
    OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(html, page).WithContext("timeline"));
    p.html_file = html;
  }
  if (!request.run.report.empty()) {
    OPSCOPE_RETURN_IF_ERROR(WriteOpReport(request.run.report, report));
    report.report_file = request.run.report;
  }
  return report;
}

}  // namespace opscope
