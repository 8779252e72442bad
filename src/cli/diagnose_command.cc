#include "cli/diagnose_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <cstring>
#include <set>
#include <sstream>

#include "cli/check_command.h"
#include "report/report_page.h"
#include "opscope/npy.h"

namespace opscope::cli {

std::string SelfExecutable() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "ops-debug";
  buf[n] = '\0';
  return buf;
}

CLI::App* AddDiagnoseCommand(CLI::App& app, DiagnoseFlags& f) {
  CLI::App* c = app.add_subcommand(
      "diagnose",
      "run an op (every flag of run) or, after --, any program on libopscope under supervision: flight recorder, "
      "sync points, guard pages; say why it crashed, hung or raced");
  AddRunFlags(*c, f.run);
  c->get_option("--op")->required(false);  // not with -- PROGRAM
  c->add_option("--sync-points", f.sync_points, "on (default): synchronise after every launch, so the kernel named "
                                                "is the one that failed; off: keep the program's asynchrony")
      ->check(CLI::IsMember({"on", "off"}));
  c->add_option("--timeout", f.timeout, "a run past it is hung: 10s, 500ms, 2m (default 10s)");
  c->add_option("--output-dir", f.output_dir, "where flight.ring and diagnosis.json go (default opscope-out/diagnose)");
  c->add_option("--history", f.history, "folders of earlier run/profile report.json to link op instances with");
  c->add_option("--source", f.sources, "kernel source to check statically (libclang), ranked below dynamic evidence");
  c->add_option("--source-flags", f.source_flags, "compile flags for --source, one string (\"-I inc -DX\")");
  c->add_option("--slots", f.slots, "launches the flight recorder keeps per stream (default 64)")->check(CLI::Range(1, 4096));
  c->add_flag("--quiet-program", f.no_echo, "do not pass the program's output through (its tail is still kept)");
  c->add_option("program", f.program, "-- PROGRAM ARGS...: the program to diagnose instead of an op");
  return c;
}

StatusOr<DiagnoseRequest> DiagnoseRequestFromFlags(const DiagnoseFlags& f, const std::vector<std::string>& run_args) {
  DiagnoseRequest req;
  OPSCOPE_ASSIGN_OR_RETURN(req.timeout_s, ParseDuration(f.timeout));
  req.output_dir = f.output_dir;
  req.sync_points = f.sync_points != "off";
  req.slots = static_cast<uint32_t>(f.slots);
  req.history_dirs = f.history;
  req.sources = f.sources;
  std::istringstream flags(f.source_flags);
  for (std::string w; flags >> w;) req.source_flags.push_back(w);
  // As ops-debug check does: this build's include/ after the user's flags.
  if (const std::string inc = InstalledIncludeDir(); !inc.empty()) req.source_flags.push_back("-I" + inc);
  req.echo_output = !f.no_echo;
  if (!f.program.empty()) {
    if (!f.run.op.empty()) return InvalidArgumentError("diagnose: give --op ... or -- PROGRAM, not both");
    req.argv = f.program;
  } else {
    if (f.run.op.empty()) return InvalidArgumentError("diagnose: give --op OP (and run's flags) or -- PROGRAM ARGS...");
    req.argv = {SelfExecutable(), "run"};
    req.argv.insert(req.argv.end(), run_args.begin(), run_args.end());
    // The run's verdict explains a failure that is not a crash: its report
    // goes beside the diagnosis unless the user asked for it elsewhere, and
    // three repeats tell a nondeterministic result from a wrong one.
    auto given = [&](const std::string& flag) {
      for (const std::string& a : run_args) {
        if (a == flag || a.starts_with(flag + "=")) return true;
      }
      return false;
    };
    req.run_report = f.run.report;
    if (req.run_report.empty()) {
      req.run_report = (std::filesystem::path(f.output_dir) / "run_report.json").string();
      req.argv.insert(req.argv.end(), {"--report", req.run_report});
    }
    if (!given("--repeat")) req.argv.insert(req.argv.end(), {"--repeat", "3"});
  }
  return req;
}

StatusOr<int> RunDiagnose(const DiagnoseFlags& flags, const std::vector<std::string>& run_args, std::ostream& out) {
  OPSCOPE_ASSIGN_OR_RETURN(DiagnoseRequest req, DiagnoseRequestFromFlags(flags, run_args));
  OPSCOPE_ASSIGN_OR_RETURN(Diagnosis d, Diagnose(req));
  const std::string path = req.output_dir + "/diagnosis.json";
  out << FormatDiagnosis(d);
  const std::string json = DiagnosisJson(d);
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(path, json));
  out << "diagnosis " << path << "\n";
  // The same diagnosis as a page: its trajectory on the timeline, the failing launch marked.
#if defined(OPSCOPE_MINIMAL)
  out << "page: not in this build (the minimal build has no report pages; diagnosis.json holds it all)\n";
#else
  const std::string page = req.output_dir + "/diagnosis.html";
  OPSCOPE_ASSIGN_OR_RETURN(std::string html, BuildDiagnosisHtml(json, path));
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(page, html));
  out << "page " << page << "\n";
#endif
  return d.status == DiagnosisStatus::kClean ? 0 : 1;
}

}  // namespace opscope::cli
