#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <optional>
#include <string>

#include "cli/app_driver.h"
#include "cli/apps.h"
#include "cli/calibrate_command.h"
#include "cli/check_command.h"
#include "cli/compare_command.h"
#include "cli/describe_command.h"
#include "cli/flag_parsing.h"
#include "cli/list_command.h"
#include "cli/diagnose_command.h"
#include "cli/profile_command.h"
#include "cli/verify_command.h"
#include "cli/run_command.h"
#include "cli/sweep_command.h"
#include "opscope/plugin.h"

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

int OpsDebugMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app("ops-debug: run, compare, profile, sweep, diagnose, check and inspect one operator", "ops-debug");
  app.set_version_flag("--version", std::string("ops-debug ") + OPSCOPE_VERSION);
  app.require_subcommand(1);
  app.footer("Plugins listed in OPSCOPE_PLUGINS=a.so:b.so are loaded first. Exit codes: 0 passed, 1 check failed, 2 bad usage or input.");
  RunFlags run_flags;
  ListFlags list_flags;
  DescribeFlags describe_flags;
  CompareFlags compare_flags;
  CLI::App* run = AddRunCommand(app, run_flags);
  CLI::App* compare = AddCompareCommand(app, compare_flags);
  CLI::App* list = AddListCommand(app, list_flags);
  CLI::App* describe = AddDescribeCommand(app, describe_flags);
  CalibrateFlags calibrate_flags;
  CLI::App* calibrate = AddCalibrateCommand(app, calibrate_flags);
  ProfileFlags profile_flags;
  CLI::App* profile = AddProfileCommand(app, profile_flags);
  SweepFlags sweep_flags;
  CLI::App* sweep = AddSweepCommand(app, sweep_flags);
  DiagnoseFlags diagnose_flags;
  CLI::App* diagnose = AddDiagnoseCommand(app, diagnose_flags);
  VerifyFlags verify_flags;
  CLI::App* verify = AddVerifyCommand(app, verify_flags);
  CheckFlags check_flags;
  CLI::App* check = AddCheckCommand(app, check_flags);

  if (std::optional<int> done = ParseCommandLine(app, kTool, argc, argv, out, err)) return *done;

  // A static check loads no op: OPSCOPE_PLUGINS has no say in it.
  if (check->parsed()) {
    auto code = RunCheck(check_flags, out);
    if (!code.ok()) return UsageError(err, kTool, code.status().ToString());
    return *code;
  }

  Status env = LoadPluginsFromEnv();
  if (!env.ok()) return UsageError(err, kTool, env.ToString());

  if (run->parsed()) {
    auto report = RunOp(run_flags);
    if (!report.ok()) return UsageError(err, kTool, report.status().ToString());
    PrintOpReport(*report, out);
    if (!report->report_file.empty()) out << "report " << report->report_file << "\n";
    return report->ExitCode();
  }
  if (diagnose->parsed()) {
    auto code = RunDiagnose(diagnose_flags, ArgsForRun(*diagnose, argc, argv), out);
    if (!code.ok()) return UsageError(err, kTool, code.status().ToString());
    return *code;
  }
  if (verify->parsed()) {
    auto code = RunVerify(verify_flags, ArgsForRun(*verify, argc, argv), out);
    if (!code.ok()) return UsageError(err, kTool, code.status().ToString());
    return *code;
  }
  if (profile->parsed()) {
    auto code = RunProfile(profile_flags, out);
    if (!code.ok()) return UsageError(err, kTool, code.status().ToString());
    return *code;
  }
  if (sweep->parsed()) {
    SweepInterruptScope interrupt;
    auto code = sweep_flags.graph.empty() ? RunSweepCommand(sweep_flags, out, err, &g_sweep_interrupted)
                                          : RunGraphSweep(sweep_flags, out, err, &g_sweep_interrupted);
    if (!code.ok()) return UsageError(err, kTool, code.status().ToString());
    return *code;
  }
  if (compare->parsed()) {
    auto report = CompareFiles(compare_flags);
    if (!report.ok()) return UsageError(err, kTool, report.status().ToString());
    PrintCompareReport(*report, out);
    if (!report->report_file.empty()) out << "report " << report->report_file << "\n";
    return report->ExitCode();
  }
  Status st = list->parsed()        ? ListOps(list_flags, out)
              : describe->parsed()  ? DescribeOp(describe_flags, out)
              : calibrate->parsed() ? RunCalibrate(calibrate_flags, out)
                                    : InternalError("no command ran");
  if (!st.ok()) return UsageError(err, kTool, st.ToString());
  return 0;
}

}  // namespace opscope::cli
