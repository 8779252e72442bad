#include "cli/verify_command.h"

#include <CLI/CLI.hpp>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/command_line.h"
#include "core/text_format.h"
#include "opscope/verify.h"

namespace opscope::cli {
namespace {

std::string Command(const std::string& sub, const std::vector<std::string>& args) {
  CommandLine c("ops-debug " + sub);
  for (const std::string& a : args) c.Arg(a);
  return c.str();
}

}  // namespace

CLI::App* AddVerifyCommand(CLI::App& app, VerifyFlags& f) {
  CLI::App* c = app.add_subcommand(
      "verify", "the CI gate for an op: run (correct), profile (within --max-bound-ratio of its lower bound) and "
                "diagnose (clean) on one op instance; exit 0 only when all three pass");
  AddRunFlags(*c, f.profile.run);
  c->add_option("--max-bound-ratio", f.max_bound_ratio, "the profile gate: median time over lower bound (default 2)")
      ->check(CLI::PositiveNumber);
  c->add_option("--timeout", f.timeout, "the diagnose gate's timeout (default 10s)");
  c->add_option("--output-dir", f.output_dir, "where report.json and diagnosis.json go (default opscope-out/verify)");
  c->add_option("--warmup", f.profile.warmup, "untimed calls before the profile gate (default 3)");
  c->add_option("--iters", f.profile.iters, "timed calls of the profile gate (default 20)");
  c->add_option("--peak-bw", f.profile.peak_bw, "the memory roof in GB/s (default: calibrated)");
  c->add_option("--peak-flops", f.profile.peak_flops, "the compute roof in GFLOP/s (default: calibrated)");
  return c;
}

StatusOr<int> RunVerify(const VerifyFlags& flags, const std::vector<std::string>& run_args, std::ostream& out) {
  if (!flags.profile.run.report.empty()) {
    return InvalidArgumentError("--report: verify writes DIR/report.json (give --output-dir)");
  }
  VerifyRequest req;
  OPSCOPE_ASSIGN_OR_RETURN(req.profile, ProfileRequestFromFlags(flags.profile));
  OPSCOPE_ASSIGN_OR_RETURN(req.diagnose.timeout_s, ParseDuration(flags.timeout));
  req.diagnose.output_dir = flags.output_dir;
  req.diagnose.argv = {SelfExecutable(), "run"};
  req.diagnose.argv.insert(req.diagnose.argv.end(), run_args.begin(), run_args.end());
  // The child's verdict, so that a run that fails on its numbers (exit 1) is
  // said as such under diagnose, not as "exited with code 1".
  req.diagnose.run_report = (std::filesystem::path(flags.output_dir) / "run_report.json").string();
  req.diagnose.argv.insert(req.diagnose.argv.end(), {"--report", req.diagnose.run_report});
  req.diagnose.echo_output = false;
  req.max_bound_ratio = flags.max_bound_ratio;
  req.run_command = Command("run", run_args);
  req.profile_command = Command("profile", run_args);
  req.diagnose_command = Command("diagnose", run_args);
  OPSCOPE_ASSIGN_OR_RETURN(VerifyResult v, VerifyOpInstance(req));
  out << FormatVerify(v);
  const std::string dir = flags.output_dir;
  OPSCOPE_RETURN_IF_ERROR(WriteDiagnosisJson(v.diagnosis, dir + "/diagnosis.json"));
  OPSCOPE_RETURN_IF_ERROR(WriteVerifyReport(dir + "/report.json", v));
  out << "report " << dir << "/report.json\n";
  return v.passed() ? 0 : 1;
}

}  // namespace opscope::cli
