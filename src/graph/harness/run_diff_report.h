// File: graph/harness/run_diff_report.h
// RunDiffReport's typed fields (opscope/model.h) from the diff.json that
// graph/run/run_diff.h builds: the one place that reads its fields.
#pragma once

#include <nlohmann/json.hpp>

#include "opscope/model.h"

namespace opscope {

// Fills everything of `d` but json, file and regressed.
void FillRunDiffReport(const nlohmann::json& diff, RunDiffReport& d);

}  // namespace opscope
