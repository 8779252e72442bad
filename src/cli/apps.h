// The two tools as library calls: a main is one line over these, and tests
// run them without spawning a process. Both return the exit code: 0 passed,
// 1 the check failed, 2 bad usage or bad input (one line on `err`).
#pragma once

#include <ostream>

namespace opscope::cli {

int OpsDebugMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err);
int InspectorMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace opscope::cli
