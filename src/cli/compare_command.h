// `ops-debug compare EXPECTED ACTUAL`: the flags of CompareFiles
// (opscope/harness.h), for outputs that came from anywhere (another
// framework, a device dump): two .npy files, or two .npz archives array by
// array (matched by name).
#pragma once

#include "opscope/harness.h"

namespace CLI {
class App;
}

namespace opscope::cli {

using CompareFlags = CompareFilesRequest;

// The flags that pick a rule and its thresholds, shared by run and compare.
void AddToleranceFlags(CLI::App& command, ToleranceSpec& flags);

CLI::App* AddCompareCommand(CLI::App& app, CompareFlags& flags);

}  // namespace opscope::cli
