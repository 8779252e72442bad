// File: analysis/report/report_json.h
// report.json ("opscope.report/1") as JSON values: every field present (null
// where it does not apply), the same schema for `ops-debug run` and `compare`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "opscope/harness.h"

namespace opscope {

nlohmann::json EmptyReport(const std::string& status);
nlohmann::json OpReportJsonValue(const OpRunReport& report);
nlohmann::json CompareReportJsonValue(const CompareFilesReport& report);
// Atomically; errors name --report.
Status WriteReportFile(const std::string& path, const nlohmann::json& report);

}  // namespace opscope
