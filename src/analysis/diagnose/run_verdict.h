// File: analysis/diagnose/run_verdict.h
// A workload that fails without crashing: the `ops-debug run` child's own
// report.json says how (which outputs, how many elements, where and on what
// values; or which repeats differed), and diagnose carries that as its cause
// rather than "the program exited with code 1".
#pragma once

#include <string>

#include "opscope/diagnose.h"

namespace opscope {

// Fills d.run_status and d.run_verdict from the report at `path`; a note
// when it is missing or unreadable (the child may have died before writing).
void ReadRunVerdict(const std::string& path, Diagnosis& d);

}  // namespace opscope
