// `ops-debug run`: the flags of the op harness (opscope/harness.h), turned
// into an OpRunRequest; the harness runs the op instance against its golden
// and this prints what it found.
//
//   RunFlags flags{.op = "my_norm", .input_shapes = "[4,256,64]", .plugins = {"libmy_ops.so"}};
//   OPSCOPE_ASSIGN_OR_RETURN(OpRunReport report, RunOp(flags));   // error: bad usage/input (exit 2)
//   PrintOpReport(report, std::cout);
//   return report.ExitCode();                                     // 0 passed, 1 failed or nondeterministic
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/compare_command.h"
#include "opscope/harness.h"
#include "opscope/status.h"

namespace CLI {
class App;
}

namespace opscope::cli {

// The flags as typed: text where the command line has text.
struct RunFlags {
  std::string op;
  std::string input_shapes;          // "[4,256,64];[64]"
  std::string dtypes;                // one for all inputs of input 0's type variable, or one per input
  std::string attrs;                 // "eps=1e-6,axis=-1"
  std::vector<std::string> inputs;   // .npy files, instead of generated inputs
  uint64_t seed = 0;                 // input i is filled with seed + i
  std::string fill = "normal";
  std::string device = "cpu";
  std::vector<std::string> plugins;
  bool checked = false;              // guard-page allocation on the device
  std::string tunables;              // "block=256,vec=4"
  std::string save_outputs;          // folder for <output>.npy and <output>.expected.npy
  ToleranceSpec tolerance;
  bool reference = false;             // say so explicitly (it is the default)
  std::vector<std::string> expected;  // one .npy per output
  std::string baseline;               // "Add>Gelu{approximate=tanh}@cpu"
  int outputs = -1;                   // how many outputs to ask for; -1: one per --expected file, else the required ones
  int repeat = 1;                     // runs of the kernel on the same inputs
  std::string report;                 // report.json path
  std::string repro_dir;              // where the cropped reproducer goes
  std::string readback = "full";      // full | stats | sample
  bool trace = false;                 // record OPSCOPE_TRACE hits
  std::string timeout = "60s";        // run only: a kernel launch past it stops the process; "0": never
};

// Parses the text flags; errors name the flag.
StatusOr<OpRunRequest> RequestFromFlags(const RunFlags& flags);
// RequestFromFlags, then the harness.
StatusOr<OpRunReport> RunOp(const RunFlags& flags);

// Registers `run` and its flags on `app`; `flags` must outlive the parse.
CLI::App* AddRunCommand(CLI::App& app, RunFlags& flags);
// The flags alone, for the commands that take every flag of `run` (profile, sweep).
void AddRunFlags(CLI::App& command, RunFlags& flags);

// What a command that runs `ops-debug run` in a child (diagnose, verify)
// passes on: the arguments after its name in argv, up to a "--", less every
// option `command` declares beyond run's own (with its value). Which options
// those are is read from what CLI11 declares, so an option added to the
// command is never forwarded by mistake.
std::vector<std::string> ArgsForRun(const CLI::App& command, int argc, const char* const* argv);

}  // namespace opscope::cli
