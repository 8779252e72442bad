#include "cli/inspector_start.h"

#include <filesystem>

#include "capture/session.h"
#include "cli/flag_parsing.h"
#include "core/file_util.h"

namespace opscope::cli {
namespace {

namespace fs = std::filesystem;

// What an earlier session left: its records and their exports. Only in a
// folder that holds session.json, so nothing else of the user's is touched.
int ClearEarlierSession(const fs::path& dir) {
  if (!fs::exists(dir / kSessionFile)) return 0;
  int removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool record = (name.rfind("runtime-", 0) == 0 || name.rfind("graph-", 0) == 0) && name.ends_with(".json");
    const bool export_file = name == "graph.json" || name == "trace.json" || name == "summary.json";
    if ((record || export_file) && fs::remove(e.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace

CLI::App* AddInspectorStart(CLI::App& app, InspectorStartFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "start", "open a capture session: prints the environment under which programs record into DIR");
  cmd->add_option("--output-dir", flags.output_dir, "the session folder")->required();
  cmd->add_flag("--enable-graph", flags.enable_graph, "record every graph a program executes, with its tasks");
  cmd->add_flag("--enable-runtime", flags.enable_runtime, "record every op launch through the dispatcher");
  return cmd;
}

Status RunInspectorStart(const InspectorStartFlags& flags, std::ostream& out) {
  OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(flags.output_dir, "--output-dir"));
  std::error_code ec;
  const fs::path dir = fs::absolute(flags.output_dir, ec);
  if (ec) return InvalidArgumentError("--output-dir " + flags.output_dir + ": " + ec.message());
  const int cleared = ClearEarlierSession(dir);
  Status written = WriteSessionConfig(
      {.dir = dir.string(), .graph = flags.enable_graph, .runtime = flags.enable_runtime});
  if (!written.ok()) {
    return InvalidArgumentError("--output-dir " + flags.output_dir + ": not writable (" + written.ToString() + ")");
  }
  auto on = [](bool b) { return b ? "on" : "off"; };
  out << "export " << kSessionEnv << "=" << ShellQuote(dir.string()) << "\n";
  out << "# opscope session in " << dir.string() << ": graph collector " << on(flags.enable_graph)
      << ", runtime collector " << on(flags.enable_runtime) << "\n";
  if (!flags.enable_graph && !flags.enable_runtime) {
    out << "# both collectors are off: nothing will be recorded (add --enable-graph and/or --enable-runtime)\n";
  }
  if (cleared > 0) out << "# removed " << cleared << " file(s) of an earlier session\n";
  out << "# run programs in this shell, then: inspector-cli export --input-dir " << ShellQuote(dir.string())
      << " --format json; unset " << kSessionEnv << " to stop\n";
  return Status::Ok();
}

}  // namespace opscope::cli
