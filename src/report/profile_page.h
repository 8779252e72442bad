// File: report/profile_page.h
// `ops-debug profile --output T.json` as one library call: the profile of
// opscope/profile.h, its timeline written to T.json and the page of it (the
// timeline and the roofline chart, report/report_page.h) to T.html beside it,
// report.json (when asked for) last, naming both.
#pragma once

#include <string>

#include "opscope/profile.h"

namespace opscope {

// T.json -> T.html.
std::string ProfilePagePath(const std::string& timeline);

// ProfileOpInstance(request), then the page beside request.timeline (which
// must name a .json file). A run whose kernel failed has no timeline and no
// page: its report says why, as ProfileOpInstance's does.
StatusOr<OpRunReport> ProfileOpWithPage(const ProfileRequest& request);

}  // namespace opscope
