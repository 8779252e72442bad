// `ops-debug run`: one op on a device against its reference on the host.
//
//   RunFlags flags{.op = "my_norm", .input_shapes = "[4,256,64]", .plugins = {"libmy_ops.so"}};
//   OPSCOPE_ASSIGN_OR_RETURN(RunReport report, RunOp(flags));   // error: bad usage/input (exit 2)
//   PrintRunReport(report, std::cout);
//   return report.ExitCode();                                   // 0 passed, 1 mismatch or kernel error
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "opscope/device.h"
#include "opscope/op.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace CLI {
class App;
}

namespace opscope::cli {

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
  std::optional<double> atol, rtol;  // override the per-dtype defaults
};

struct RunInput {
  std::string name;
  Tensor tensor;
  std::string origin;  // "normal seed 7" or the .npy path
};

struct RunOutput {
  std::string name;
  Tensor actual;    // the kernel's, on the host
  Tensor expected;  // the reference's (float64 for float outputs)
  CompareResult compare;
};

struct RunReport {
  std::string op;
  std::string device;
  std::string kernel;
  std::vector<KernelLaunchInfo> launches;
  double device_us = -1;
  uint64_t op_id = 0;
  std::vector<RunInput> inputs;
  std::vector<RunOutput> outputs;
  std::string kernel_error;  // the kernel or the reference failed after the call was validated
  std::vector<std::string> saved_files;
  std::string repro;

  bool passed() const;
  int ExitCode() const { return passed() ? 0 : 1; }
};

// Everything up to the kernel launch is checked first, so bad input returns an
// error before anything runs or any file is written.
StatusOr<RunReport> RunOp(const RunFlags& flags);
void PrintRunReport(const RunReport& report, std::ostream& out);

// Registers `run` and its flags on `app`; `flags` must outlive the parse.
CLI::App* AddRunCommand(CLI::App& app, RunFlags& flags);

}  // namespace opscope::cli
