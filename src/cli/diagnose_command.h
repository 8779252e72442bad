// `ops-debug diagnose`: why did it crash, hang or race. Two forms:
//   ops-debug diagnose [every flag of ops-debug run] [--sync-points on|off] [--timeout 10s] [--output-dir DIR]
//   ops-debug diagnose [...] -- PROGRAM ARGS...     (any program on libopscope, unchanged)
// The first runs `ops-debug run` with those flags as the supervised child.
// opscope/diagnose.h does the work; this parses, prints and writes DIR/diagnosis.json and
// DIR/diagnosis.html (the web UI of it: report/report_page.h BuildDiagnosisHtml).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/run_command.h"
#include "opscope/diagnose.h"

namespace CLI {
class App;
}

namespace opscope::cli {

struct DiagnoseFlags {
  RunFlags run;  // parsed to refuse bad flags up front; forwarded as written
  std::string sync_points = "on";
  std::string timeout = "10s";
  std::string output_dir = "opscope-out/diagnose";
  std::vector<std::string> history;
  std::vector<std::string> sources;
  std::string source_flags;  // one string, split on spaces: "-I inc -DFOO"
  int slots = 64;
  bool no_echo = false;
  std::vector<std::string> program;  // after --
};

CLI::App* AddDiagnoseCommand(CLI::App& app, DiagnoseFlags& flags);
// This ops-debug binary (/proc/self/exe): the `ops-debug run` child of diagnose and verify.
std::string SelfExecutable();
StatusOr<DiagnoseRequest> DiagnoseRequestFromFlags(const DiagnoseFlags& flags, const std::vector<std::string>& run_args);
// Diagnoses, prints, writes diagnosis.json and diagnosis.html; returns the exit code (0 clean, 1 not).
StatusOr<int> RunDiagnose(const DiagnoseFlags& flags, const std::vector<std::string>& run_args, std::ostream& out);

}  // namespace opscope::cli
