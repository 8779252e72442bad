#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <optional>
#include <string>

#include "cli/app_driver.h"
#include "cli/apps.h"
#include "cli/calibrate_command.h"
#include "cli/check_command.h"
#include "cli/command_table.h"
#include "cli/compare_command.h"
#include "cli/describe_command.h"
#include "cli/diagnose_command.h"
#include "cli/flag_parsing.h"
#include "cli/list_command.h"
#include "cli/profile_command.h"
#include "cli/run_command.h"
#include "cli/sweep_command.h"
#include "cli/verify_command.h"

namespace opscope::cli {

constexpr char kTool[] = "ops-debug";

// Ctrl-C during a sweep: stop after the current candidate. The handler is
// reset by its first use, so a second Ctrl-C ends the process at once.
std::atomic<bool> g_sweep_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void OnSweepInterrupt(int) { g_sweep_interrupted.store(true); }

// The handler for the duration of one sweep; the previous one after it.
class SweepInterruptScope {
 public:
  SweepInterruptScope() {
    g_sweep_interrupted.store(false);
    struct sigaction sa {};
    sa.sa_handler = OnSweepInterrupt;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &previous_);
  }
  ~SweepInterruptScope() { sigaction(SIGINT, &previous_, nullptr); }
  SweepInterruptScope(const SweepInterruptScope&) = delete;
  SweepInterruptScope& operator=(const SweepInterruptScope&) = delete;

 private:
  struct sigaction previous_ {};
};

namespace {

// A report printed, then where it was written; 0 passed, 1 a check failed.
template <typename Report, typename Print>
StatusOr<int> Printed(StatusOr<Report> report, Print print, std::ostream& out) {
  if (!report.ok()) return std::move(report).status();
  print(*report, out);
  if (!report->report_file.empty()) out << "report " << report->report_file << "\n";
  return report->ExitCode();
}

}  // namespace

int OpsDebugMain(int given_argc, const char* const* given_argv, std::ostream& out, std::ostream& err) {
  // "--input-shapes [4, 256, 64]" unquoted: one shape list, as typed.
  const std::vector<std::string> words = JoinBracketWords(given_argc, given_argv);
  std::vector<const char*> word_ptrs;
  for (const std::string& w : words) word_ptrs.push_back(w.c_str());
  const int argc = static_cast<int>(word_ptrs.size());
  const char* const* argv = word_ptrs.data();
  CLI::App app("ops-debug: run, compare, profile, sweep, diagnose, check and inspect one operator", "ops-debug");
  app.set_version_flag("--version", std::string("ops-debug ") + OPSCOPE_VERSION);
  app.require_subcommand(1);
  app.footer("Plugins listed in OPSCOPE_PLUGINS=a.so:b.so are loaded first. Exit codes: 0 passed, 1 check failed, 2 bad usage or input.");
  RunFlags run;
  CompareFlags compare;
  ListFlags list;
  DescribeFlags describe;
  CalibrateFlags calibrate;
  ProfileFlags profile;
  SweepFlags sweep;
  DiagnoseFlags diagnose;
  VerifyFlags verify;
  CheckFlags check;
  // Built before the table: diagnose and verify forward the flags they do
  // not declare themselves to their `run` children (ArgsForRun).
  CLI::App* run_cli = AddRunCommand(app, run);
  CLI::App* compare_cli = AddCompareCommand(app, compare);
  CLI::App* list_cli = AddListCommand(app, list);
  CLI::App* describe_cli = AddDescribeCommand(app, describe);
  CLI::App* calibrate_cli = AddCalibrateCommand(app, calibrate);
  CLI::App* profile_cli = AddProfileCommand(app, profile);
  CLI::App* sweep_cli = AddSweepCommand(app, sweep);
  CLI::App* diagnose_cli = AddDiagnoseCommand(app, diagnose);
  CLI::App* verify_cli = AddVerifyCommand(app, verify);
  CLI::App* check_cli = AddCheckCommand(app, check);
  const std::vector<Command> table = {
      {run_cli, [&] { return Printed(RunOp(run), PrintOpReport, out); }, true},
      {compare_cli, [&] { return Printed(CompareFiles(compare), PrintCompareReport, out); }, true},
      {list_cli, [&] { return ExitZero(ListOps(list, out)); }, true},
      {describe_cli, [&] { return ExitZero(DescribeOp(describe, out)); }, true},
      {calibrate_cli, [&] { return ExitZero(RunCalibrate(calibrate, out)); }, true},
      {profile_cli, [&] { return RunProfile(profile, out); }, true, kProfileOwnFlags},
      {sweep_cli,
       [&] {
         SweepInterruptScope interrupt;
         return sweep.graph.empty() ? RunSweepCommand(sweep, out, err, &g_sweep_interrupted)
                                    : RunGraphSweep(sweep, out, err, &g_sweep_interrupted);
       },
       true},
      {diagnose_cli, [&] { return RunDiagnose(diagnose, ArgsForRun(*diagnose_cli, argc, argv), out); }, true},
      {verify_cli, [&] { return RunVerify(verify, ArgsForRun(*verify_cli, argc, argv), out); }, true},
      // A static check loads no op: OPSCOPE_PLUGINS has no say in it.
      {check_cli, [&] { return RunCheck(check, out); }, false},
  };
  return RunCommandTable(app, table, kOpsDebugFieldFlags, kTool, argc, argv, out, err);
}

}  // namespace opscope::cli
