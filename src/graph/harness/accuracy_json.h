// File: graph/harness/accuracy_json.h
// accuracy.json ("opscope.accuracy/1"): the report of RunAccuracy as a file,
// per compiled node its three errors, whether it diverges, the compiler's
// decisions behind it and its replay (opscope/accuracy.h). Non-finite errors
// are null.
#pragma once

#include <string>
#include <vector>

#include "opscope/accuracy.h"

namespace opscope {

inline constexpr char kAccuracySchema[] = "opscope.accuracy/1";
inline constexpr char kAccuracyFile[] = "accuracy.json";  // in --output-dir

std::string AccuracyJsonText(const AccuracyReport& report);

// What `summary DIR` adds from DIR/accuracy.json when the accuracy run was
// written beside this run (`run_id`): the verdict and the `top` nodes by
// local error, a line each; a line saying so when the file is of another
// run or cannot be read (it is someone's file: nothing in it is trusted);
// nothing when there is none.
std::vector<std::string> AccuracySummaryLines(const std::string& dir, const std::string& run_id, int top);

}  // namespace opscope
