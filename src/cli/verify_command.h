// `ops-debug verify [every flag of run] [--max-bound-ratio 2] [--output-dir DIR]`:
// run, profile and diagnose on one op instance as one gate (opscope/verify.h);
// DIR/report.json holds the three sections, DIR/diagnosis.json the diagnosis.
// Exit 0 only when all three pass: the CI gate for a custom op.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/diagnose_command.h"
#include "cli/profile_command.h"

namespace CLI {
class App;
}

namespace opscope::cli {

struct VerifyFlags {
  ProfileFlags profile;  // run's flags, --warmup, --iters, --peak-bw, --peak-flops
  double max_bound_ratio = 2;
  std::string timeout = "10s";
  std::string output_dir = "opscope-out/verify";
};

CLI::App* AddVerifyCommand(CLI::App& app, VerifyFlags& flags);
StatusOr<int> RunVerify(const VerifyFlags& flags, const std::vector<std::string>& run_args, std::ostream& out);

}  // namespace opscope::cli
