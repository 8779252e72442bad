// `ops-debug run`: one op alone on a device, checked against a golden (its
// reference kernel by default, --expected files, or a --baseline op chain),
// with repeats for determinism, tracepoints, a report.json and a cropped
// reproducer of the worst failure.
//
//   RunFlags flags{.op = "my_norm", .input_shapes = "[4,256,64]", .plugins = {"libmy_ops.so"}};
//   OPSCOPE_ASSIGN_OR_RETURN(RunReport report, RunOp(flags));   // error: bad usage/input (exit 2)
//   PrintRunReport(report, std::cout);
//   return report.ExitCode();                                   // 0 passed, 1 failed or nondeterministic
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "analysis/determinism.h"
#include "analysis/input_region.h"
#include "analysis/minimal_repro.h"
#include "cli/compare_command.h"
#include "opscope/device.h"
#include "opscope/op.h"
#include "opscope/status.h"
#include "opscope/tensor.h"
#include "opscope/trace.h"

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
  ToleranceFlags tolerance;
  // The golden: the op's reference (default), files, or another op / chain.
  bool reference = false;             // say so explicitly (it is the default)
  std::vector<std::string> expected;  // one .npy per output
  std::string baseline;               // "Add>Gelu{approximate=tanh}@cpu"
  int repeat = 1;                     // runs of the kernel on the same inputs
  std::string report;                 // report.json path
  std::string repro_dir;              // where the cropped reproducer goes
  std::string readback = "full";      // full | stats | sample
  bool trace = false;                 // record OPSCOPE_TRACE hits
};

struct RunInput {
  std::string name;
  Tensor tensor;
  std::string origin;  // "normal seed 7" or the .npy path
};

// --readback stats: what the device summarised of one output (and the same
// numbers of the golden, computed on the host).
struct TensorStats {
  int64_t count = 0, nan = 0, inf = 0;
  double min = 0, max = 0, mean = 0, rms = 0;  // over finite values
};

struct RunOutput {
  std::string name;
  std::string location;  // where the kernel wrote it: "cpu @0x7f01…0040"
  Tensor actual;    // the kernel's, on the host (full readback), or the sampled elements
  Tensor expected;  // the golden's (float64 for the reference's float outputs)
  CompareResult compare;
  // --readback stats only: the summaries and what differed between them.
  std::optional<TensorStats> actual_stats, expected_stats;
  std::vector<std::string> stats_findings;
  bool passed() const { return actual_stats ? stats_findings.empty() : compare.passed(); }
};

// A tracepoint name hit by both the kernel and the reference, side by side.
struct TraceComparison {
  std::string name;
  int order = 0;
  bool matches = true;
  std::string detail;  // what differs, in words
};

struct ReproOutcome {
  std::string output;             // the output whose worst element was studied
  std::vector<int64_t> coords;    // that element
  InputRegion region;
  std::string region_text;        // "x[3,17,0:2,54:57]"
  MinimalRepro repro;
  std::vector<std::string> files; // the cropped inputs written
  std::string command;            // runs the op on them
  std::string note;               // why there is no reproducer, when there is none
};

struct RunReport {
  std::string op;
  std::string device;
  std::string kernel;
  std::string golden = "reference";  // "reference", "expected files", "baseline Add>Gelu@cpu"
  std::string readback = "full";
  std::vector<KernelLaunchInfo> launches;
  double device_us = -1;        // the first run
  std::vector<double> repeat_us;  // every run, with --repeat
  uint64_t op_id = 0;
  std::vector<RunInput> inputs;
  std::vector<RunOutput> outputs;
  std::string kernel_error;  // the kernel or the golden failed after the call was validated
  int repeats = 1;
  std::vector<RunDifference> nondeterminism;
  std::vector<TracepointHit> tracepoints;
  std::vector<TraceComparison> trace_comparisons;
  std::optional<ReproOutcome> repro_outcome;
  std::vector<std::string> saved_files;
  std::string repro;  // the command line that runs this again

  bool passed() const;
  // "passed" | "failed" | "nondeterministic" | "error"
  std::string status() const;
  int ExitCode() const { return passed() ? 0 : 1; }
};

// Everything up to the kernel launch is checked first, so bad input returns an
// error before anything runs or any file is written.
StatusOr<RunReport> RunOp(const RunFlags& flags);
void PrintRunReport(const RunReport& report, std::ostream& out);
nlohmann::json RunReportJson(const RunReport& report);

// Registers `run` and its flags on `app`; `flags` must outlive the parse.
CLI::App* AddRunCommand(CLI::App& app, RunFlags& flags);

}  // namespace opscope::cli
