// File: graph/harness/accuracy_json.h
// accuracy.json ("opscope.accuracy/1"): the report of RunAccuracy as a file,
// per compiled node its three errors, whether it diverges, the compiler's
// decisions behind it and its replay (opscope/accuracy.h). Non-finite errors
// are null.
#pragma once

#include <string>

#include "opscope/accuracy.h"

namespace opscope {

inline constexpr char kAccuracySchema[] = "opscope.accuracy/1";

std::string AccuracyJsonText(const AccuracyReport& report);

}  // namespace opscope
