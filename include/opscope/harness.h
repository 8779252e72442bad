// File: opscope/harness.h
// The op harness: one op instance (an op, its inputs, attrs and tunables, on
// a device) run and judged against a golden, as one library call with typed
// arguments and a typed result. `ops-debug run` is a thin layer over it; so
// are the built-in ops' unit tests, and so can a user's own test program be:
//
//   OpRunRequest req{.op = "my_norm", .plugins = {"libmy_ops.so"}, .input_shapes = {Shape({4, 256, 64})}};
//   OPSCOPE_ASSIGN_OR_RETURN(OpRunReport report, RunOpInstance(req));  // error: bad request (exit 2)
//   PrintOpReport(report, std::cout);
//   return report.ExitCode();                                          // 0 passed, 1 failed
//
// Everything up to the kernel launch is checked first (op, plugins, attrs,
// tunables, inputs, shape inference, the golden against the outputs, folders
// to write to), so a bad request returns an error before anything runs or
// any file is written. Errors name the ops-debug flag that maps to the field.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "opscope/compare.h"
#include "opscope/fill.h"
#include "opscope/op.h"
#include "opscope/report.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

// What of each output comes back from the device: all of it (the whole
// compare engine runs), a 7-number summary computed on the device, or 4096
// evenly spaced elements.
enum class Readback { kFull, kStats, kSample };
inline constexpr int64_t kReadbackSampleCount = 4096;
const char* ReadbackName(Readback r);
StatusOr<Readback> ParseReadbackName(std::string_view name);  // errors name --readback

struct OpRunRequest {
  std::string op;                    // --op
  std::vector<std::string> plugins;  // --plugin: loaded before the op is looked up
  // The inputs: .npy files, a caller's tensors, or generated from shapes (one
  // dtype for every input of input 0's type, or one per input; none: float32
  // where allowed), filled with `fill`, input i with seed + i.
  std::vector<std::string> input_files;  // --inputs
  std::vector<Tensor> input_tensors;
  std::vector<Shape> input_shapes;       // --input-shapes
  std::vector<int> omitted_inputs;       // with input_shapes: optional inputs left out ("[4,8];;[4,8]"), their shapes unused
  std::vector<DType> dtypes;             // --dtype
  FillKind fill = FillKind::kNormal;     // --fill
  uint64_t seed = 0;                     // --seed
  std::string attrs;                     // --attrs "eps=1e-6,axis=-1", validated against the schema
  Attrs attr_values;                     // typed attrs, set over those of `attrs` (a caller's own values)
  std::map<std::string, int64_t> tunables;  // --tunables: declared names, each one of its declared values
  std::string device = "cpu";            // --device
  bool checked = false;                  // --checked: guard-page allocation on the device
  // The golden: the op's reference (default), expected tensors, or another
  // op or chain of ops on some device ("Add>Gelu{approximate=tanh}@cpu").
  bool reference = false;                   // --reference, said explicitly
  std::vector<std::string> expected_files;  // --expected, one per output
  std::vector<Tensor> expected_tensors;
  std::string baseline;                     // --baseline
  // How many outputs the op is asked for (optional ones included): -1 takes
  // the number of expected tensors when given, else the op's required outputs.
  int num_outputs = -1;                     // --outputs
  ToleranceSpec tolerance;                  // --mode, --abserr, --relerr, --max-ulp, --worst
  int repeat = 1;                           // --repeat: any bit that differs is reported first
  Readback readback = Readback::kFull;      // --readback
  bool trace = false;                       // --trace: OPSCOPE_TRACE hits of kernel and reference
  std::string report;                       // --report: report.json written here (atomically)
  std::string repro_dir;                    // --repro-dir: cropped inputs that still fail
  std::string save_outputs;                 // --save-outputs: <output>.npy and <output>.expected.npy
  // --timeout: a kernel launch still running after this many seconds stops
  // the process with one line naming the kernel (KernelWatchdog); 0: none.
  double timeout_s = 60;
};

StatusOr<OpRunReport> RunOpInstance(const OpRunRequest& request);

// The text `ops-debug run` prints, and report.json ("opscope.report/1").
void PrintOpReport(const OpRunReport& report, std::ostream& out);
std::string OpReportJson(const OpRunReport& report);
Status WriteOpReport(const std::string& path, const OpRunReport& report);  // atomically

// `ops-debug compare`: two .npy files, or two .npz archives array by array.
struct CompareFilesRequest {
  std::string expected, actual;
  ToleranceSpec tolerance;
  std::string report;  // report.json path
  // The op's inputs (.npy, "name=path" or a path named by its stem) that
  // the errors are tied to by value ("errors only where x < 0").
  std::vector<std::string> inputs;
  bool findings = true;  // false: the numbers and the pattern only (CompareOptions::findings)
};

struct ComparedArray {
  std::string name;      // the .npz member, or the actual file's name
  std::string describe;  // "float32[4,4]"
  CompareResult result;
};

struct CompareFilesReport {
  std::string expected, actual;
  std::vector<ComparedArray> arrays;
  std::string report_file;
  std::string repro;
  bool passed() const;
  int ExitCode() const { return passed() ? 0 : 1; }
};

// Reads and checks both files completely before comparing anything.
StatusOr<CompareFilesReport> CompareFiles(const CompareFilesRequest& request);
void PrintCompareReport(const CompareFilesReport& report, std::ostream& out);
std::string CompareReportJson(const CompareFilesReport& report);

// One array's verdict and numbers, as run and compare print them;
// `out_of_bounds` (run's canaries, OpRunOutput::out_of_bounds) fails it too.
void PrintComparison(const std::string& name, const std::string& describe, const CompareResult& c, std::ostream& out,
                     const std::string& out_of_bounds = "");

}  // namespace opscope
