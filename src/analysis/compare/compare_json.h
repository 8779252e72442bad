// File: analysis/compare/compare_json.h
// A CompareResult as the `compare` object of report.json ("opscope.report/1").
// Non-finite numbers, which JSON lacks, are written as the strings "inf",
// "-inf" and "nan".
#pragma once

#include <nlohmann/json.hpp>

#include "opscope/compare.h"

namespace opscope {

nlohmann::json CompareResultToJson(const CompareResult& r);
nlohmann::json JsonNumber(double v);

}  // namespace opscope
