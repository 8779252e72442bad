// `ops-debug profile`: every flag of `ops-debug run`, plus how to time
// (--warmup, --iters, --cold-cache), the roofs (--peak-bw, --peak-flops;
// calibrated when not given) and where the timeline goes (--output). The
// op harness runs and judges the op instance first; opscope/profile.h times it.
//
//   ops-debug profile --op my_norm --plugin libmy_ops.so --input-shapes "[4,256,64]" --output timeline.json
//   ops-debug profile --chain "Relu>Sigmoid" --input-shapes "[4096,4096]"     # the hot chain of a chain
//   ops-debug profile --graph examples/models/two_branch.onnx                 # ... and of a model
#pragma once

#include <ostream>
#include <span>
#include <string>

#include "cli/field_flags.h"
#include "cli/run_command.h"
#include "opscope/profile.h"

namespace CLI {
class App;
}

namespace opscope::cli {

struct ProfileFlags {
  RunFlags run;
  int warmup = 3;
  int iters = 20;
  bool cold_cache = false;
  double peak_bw = -1;     // -1: not given
  double peak_flops = -1;
  std::string output;      // timeline.json; its .html beside it
  // --mode: what is measured, as profilers name it (full, kernel, api); the
  // compare rule, --mode in run, is --rule here.
  std::string mode = "full";
  // The hot chain instead of one op (either, not with --op):
  std::string chain;       // --chain "Relu>Sigmoid": stages in the --baseline syntax, stage 1 on --input-shapes
  std::string graph;       // --graph MODEL.onnx: the model run as inspector-cli run runs it
};

StatusOr<ProfileRequest> ProfileRequestFromFlags(const ProfileFlags& flags);
// Profiles, writes the timeline's page, and prints; returns the exit code (0
// passed, 1 the kernel is wrong) or the error of a bad request (exit 2).
StatusOr<int> RunProfile(const ProfileFlags& flags, std::ostream& out);
CLI::App* AddProfileCommand(CLI::App& app, ProfileFlags& flags);

// Where profile spells a request field otherwise than ops-debug's table.
extern const std::span<const FieldFlag> kProfileOwnFlags;

}  // namespace opscope::cli
