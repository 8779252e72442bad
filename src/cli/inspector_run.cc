#include "cli/inspector_run.h"

#include <cstdio>
#include <filesystem>
#include <utility>

#include "cli/flag_parsing.h"
#include "cli/inspector_capture.h"
#include "cli/inspector_export.h"
#include "cli/plugin_flags.h"
#include "graph/graph_json.h"
#include "graph/onnx_import.h"
#include "graph/runtime/executor.h"
#include "graph/runtime/mapping.h"
#include "graph/runtime/summary.h"
#include "opscope/npy.h"

namespace opscope::cli {
namespace {

// --inputs: "x.npy,y.npy" feeds the graph inputs in order; "name=x.npy" by name.
StatusOr<std::map<std::string, Tensor>> ReadInputs(const std::string& text, const graph::Graph& g) {
  std::map<std::string, Tensor> inputs;
  std::vector<std::string> items = SplitList(text, ',');
  if (items.size() > g.inputs().size()) {
    return InvalidArgumentError("--inputs: " + std::to_string(items.size()) + " files for " +
                                std::to_string(g.inputs().size()) + " graph inputs");
  }
  for (size_t i = 0; i < items.size(); ++i) {
    std::string name = g.inputs()[i], path = items[i];
    if (size_t eq = items[i].find('='); eq != std::string::npos) {
      name = items[i].substr(0, eq);
      path = items[i].substr(eq + 1);
    }
    StatusOr<Tensor> t = ReadNpy(path);
    if (!t.ok()) return std::move(t).status().WithContext("--inputs");
    inputs.emplace(name, std::move(t).value());
  }
  return inputs;
}

Status CheckExecutable(const graph::Model& m) {
  for (const graph::Node& n : m.compiled.nodes()) {
    if (!n.executable) {
      return UnimplementedError(m.path + ": node '" + n.name + "' (" + n.op_type +
                                ") is not executable: " + n.not_executable_reason);
    }
  }
  return Status::Ok();
}

std::string Bytes(int64_t b) {
  char s[32];
  if (b >= (1 << 20)) std::snprintf(s, sizeof(s), "%.2f MiB", b / 1048576.0);
  else if (b >= 1024) std::snprintf(s, sizeof(s), "%.1f KiB", b / 1024.0);
  else std::snprintf(s, sizeof(s), "%lld B", static_cast<long long>(b));
  return s;
}

void PrintRun(const CapturedRun& run, const InspectorRunFlags& flags, const std::vector<std::string>& files,
              std::ostream& out) {
  const graph::Summary s = graph::Summarize(run.schedule, kSummaryTopTasks);
  const graph::MemoryPlan& mem = run.model.compiled.memory();
  char line[256];
  out << "model    " << run.model.path << "\n";
  out << "nodes    framework " << run.model.framework.nodes().size() << "  compiled "
      << run.model.compiled.nodes().size() << "\n";
  out << "tasks    " << run.schedule.tasks.size() << " on " << run.schedule.num_streams() << " streams ("
      << run.schedule.compute_streams << " compute + copy), " << run.iterations << " iteration(s), device "
      << run.device << "\n";
  std::snprintf(line, sizeof(line), "time     %.1f us of tasks, %.1f us span, critical path %.1f us\n",
                s.total_task_us, s.span_us, s.critical_path.total_us);
  out << line;
  if (mem.planned) {
    out << "memory   peak " << Bytes(mem.arena_bytes) << " with reuse, " << Bytes(mem.no_reuse_bytes)
        << " without\n";
  }
  out << "top op types\n";
  for (size_t i = 0; i < s.op_types.size() && i < 5; ++i) {
    const graph::OpTypeRow& r = s.op_types[i];
    std::snprintf(line, sizeof(line), "  %-22s %5lld  %10.1f us  %5.1f%%\n", r.op_type.c_str(),
                  static_cast<long long>(r.count), r.total_us, r.share_pct);
    out << line;
  }
  for (const std::string& f : files) out << "wrote    " << f << "\n";
  std::string repro = "inspector-cli run " + ShellQuote(flags.model) + " --output-dir " + ShellQuote(flags.output_dir) +
                      " --streams " + std::to_string(flags.streams) + " --iterations " +
                      std::to_string(flags.iterations) + " --seed " + std::to_string(flags.seed);
  if (!flags.inputs.empty()) repro += " --inputs " + ShellQuote(flags.inputs);
  for (const std::string& p : flags.plugins) repro += " --plugin " + ShellQuote(p);
  out << "repro    " << repro << "\n";
}

}  // namespace

CLI::App* AddInspectorRun(CLI::App& app, InspectorRunFlags& flags) {
  CLI::App* cmd = app.add_subcommand("run", "run an ONNX model on the cpu device and export what ran");
  cmd->add_option("model", flags.model, "the .onnx model")->required();
  cmd->add_option("--output-dir", flags.output_dir, "where graph.json, trace.json, summary.json go")->required();
  cmd->add_option("--streams", flags.streams, "compute streams (default 2)");
  cmd->add_option("--iterations", flags.iterations, "timed iterations; times are kept from the last");
  cmd->add_flag("--dump-passes", flags.dump_passes, "also write DIR/passes/NN_<pass>.json");
  cmd->add_option("--inputs", flags.inputs, "x.npy[,...] in graph input order, or name=x.npy");
  cmd->add_option("--seed", flags.seed, "seed of the fill for inputs not given");
  cmd->add_option("--save-outputs", flags.save_outputs, "write each graph output as DIR2/<name>.npy");
  cmd->add_option("--plugin", flags.plugins, "a custom-op library to load (repeatable)");
  return cmd;
}

Status RunInspectorRun(const InspectorRunFlags& flags, std::ostream& out) {
  if (flags.streams < 1) return InvalidArgumentError("--streams " + std::to_string(flags.streams) + ": expected >= 1");
  if (flags.iterations < 1) {
    return InvalidArgumentError("--iterations " + std::to_string(flags.iterations) + ": expected >= 1");
  }
  OPSCOPE_RETURN_IF_ERROR(LoadPluginFlags(flags.plugins));
  CapturedRun run;
  run.dir = flags.output_dir;
  run.plugins = flags.plugins;
  run.iterations = flags.iterations;
  run.seed = flags.seed;
  OPSCOPE_ASSIGN_OR_RETURN(run.model, graph::ImportOnnx(flags.model));
  // Pass snapshots are kept in memory and written only once the run succeeded.
  std::vector<std::pair<graph::PassResult, graph::Model>> snapshots;
  graph::AfterPassFn keep = [&](const graph::PassResult& r, const graph::Model& m) {
    snapshots.emplace_back(r, m);
    return Status::Ok();
  };
  OPSCOPE_ASSIGN_OR_RETURN(run.passes,
                           graph::PassManager::Default().Run(run.model, flags.dump_passes ? keep : nullptr));
  OPSCOPE_RETURN_IF_ERROR(CheckExecutable(run.model));
  auto inputs_or = ReadInputs(flags.inputs, run.model.compiled);
  if (!inputs_or.ok()) return std::move(inputs_or).status();
  std::map<std::string, Tensor> inputs = std::move(inputs_or).value();
  OPSCOPE_ASSIGN_OR_RETURN(run.schedule, graph::ScheduleGraph(run.model.compiled, {.compute_streams = flags.streams}));
  OPSCOPE_ASSIGN_OR_RETURN(Device * device, GetDevice(run.device));
  OPSCOPE_ASSIGN_OR_RETURN(graph::ExecutionResult result,
                           graph::Execute(run.model, run.schedule,
                                          {.device = device,
                                           .iterations = flags.iterations,
                                           .inputs = std::move(inputs),
                                           .seed = flags.seed,
                                           .save_outputs_dir = flags.save_outputs}));
  OPSCOPE_RETURN_IF_ERROR(graph::MapTasks(run.model, run.schedule));

  std::error_code ec;
  std::filesystem::create_directories(flags.output_dir, ec);
  if (ec) return InvalidArgumentError("--output-dir " + flags.output_dir + ": cannot create it (" + ec.message() + ")");
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> files, WriteExports(run));
  OPSCOPE_RETURN_IF_ERROR(WriteCapture(run));
  files.push_back(flags.output_dir + "/" + kCaptureFile);
  for (const auto& [pass, model] : snapshots) {
    OPSCOPE_RETURN_IF_ERROR(graph::WritePassDump(flags.output_dir + "/passes", pass, model));
  }
  if (!snapshots.empty()) files.push_back(flags.output_dir + "/passes/ (" + std::to_string(snapshots.size()) + " files)");
  for (const std::string& f : result.saved_files) files.push_back(f);
  PrintRun(run, flags, files, out);
  return Status::Ok();
}

}  // namespace opscope::cli
