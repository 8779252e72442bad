// File: analysis/profile/profile_json.h
// The "profile" section of report.json (opscope.report/1): beside the run's
// verdict, under the same op_id, so one file holds the op instance's
// correctness and its speed.
#pragma once

#include <nlohmann/json.hpp>

#include "opscope/report.h"

namespace opscope {

nlohmann::json TimingStatsJson(const TimingStats& s);
nlohmann::json RooflineJson(const RooflinePoint& r);
nlohmann::json OpProfileJson(const OpProfile& p);

}  // namespace opscope
