// `ops-debug check SOURCE.cc|.cu [-- COMPILE FLAGS]`: the static kernel
// checks of analysis/static_check over one source, printed gcc-style (one
// line per finding, then a summary and the repro line), optionally written as
// opscope.static-check/1 JSON. The installed include/ (beside the binary: the
// build tree's or the install prefix's) is added after the given flags, so a
// kernel including "opscope/op.h" parses with no flags at all.
//
//   ops-debug check examples/my_ops/my_ops.cc
//   ops-debug check kernels/scale.cu --json findings.json -- -DBLOCK=256 -I third_party
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "opscope/status.h"

namespace CLI {
class App;
}

namespace opscope::cli {

struct CheckFlags {
  std::string source;
  std::vector<std::string> compile_flags;  // everything after `--`
  std::string json;                         // --json FILE
};

// The include/ folder holding opscope/op.h next to the running binary:
// <bin>/../../include (build/bin/ops-debug) or <bin>/../include (an install
// prefix); "" when neither has it.
std::string InstalledIncludeDir();
// Checks, prints, writes --json; returns 0 (no finding) or 1 (findings), or
// the error of bad input (exit 2, nothing written).
StatusOr<int> RunCheck(const CheckFlags& flags, std::ostream& out);
CLI::App* AddCheckCommand(CLI::App& app, CheckFlags& flags);

}  // namespace opscope::cli
