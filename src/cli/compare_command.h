// `ops-debug compare EXPECTED ACTUAL`: the compare engine on two .npy files,
// or on two .npz archives array by array (matched by name), for outputs that
// came from anywhere (another framework, a device dump).
//
//   CompareFlags flags{.expected = "ref.npy", .actual = "out.npy"};
//   OPSCOPE_ASSIGN_OR_RETURN(CompareReport report, CompareFiles(flags));  // error: bad input (exit 2)
//   PrintCompareReport(report, std::cout);
//   return report.ExitCode();                                          // 0 passed, 1 mismatch
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "opscope/status.h"

namespace CLI {
class App;
}

namespace opscope::cli {

// The flags that pick a rule and its thresholds, shared by run and compare.
struct ToleranceFlags {
  std::string rule;  // empty: mixed for floats, bit-exact for integers and bool
  std::optional<double> atol, rtol;
  std::optional<int64_t> max_ulp;
  int worst_k = 10;
};

// The dtype's defaults with the flags applied; errors name the flag.
StatusOr<Tolerance> ResolveTolerance(const ToleranceFlags& flags, DType dtype);
void AddToleranceFlags(CLI::App& command, ToleranceFlags& flags);
// The flags as given, for a repro line: " --mode ulp:4 --abserr 1e-05".
std::string ToleranceFlagsText(const ToleranceFlags& flags);
// The --help text on rules and defaults.
extern const char* const kToleranceHelp;

struct CompareFlags {
  std::string expected, actual;
  ToleranceFlags tolerance;
  std::string report;  // report.json path
};

struct ComparedArray {
  std::string name;      // the .npz member, or the actual file's name
  std::string describe;  // "float32[4,4]"
  CompareResult result;
};

struct CompareReport {
  std::string expected, actual;
  std::vector<ComparedArray> arrays;
  std::string repro;

  bool passed() const;
  int ExitCode() const { return passed() ? 0 : 1; }
};

// Reads and checks both files completely before comparing anything.
StatusOr<CompareReport> CompareFiles(const CompareFlags& flags);
void PrintCompareReport(const CompareReport& report, std::ostream& out);
nlohmann::json CompareReportJson(const CompareReport& report);

// One array's verdict and numbers, as run and compare print them.
void PrintComparison(const std::string& name, const std::string& describe, const CompareResult& c, std::ostream& out);
// A report.json with every field of "opscope.report/1" present (null where it
// does not apply); written atomically.
nlohmann::json EmptyReport(const std::string& status);
Status WriteReport(const std::string& path, const nlohmann::json& report);

CLI::App* AddCompareCommand(CLI::App& app, CompareFlags& flags);

}  // namespace opscope::cli
