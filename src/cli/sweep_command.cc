#include "cli/sweep_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/flag_parsing.h"
#include "cli/terminal.h"
#include "core/text_format.h"
#include "opscope/model.h"
#include "opscope/npy.h"

namespace opscope::cli {

namespace {

namespace fs = std::filesystem;

StatusOr<std::vector<int64_t>> ParseValues(const std::string& flag, const std::string& text) {
  std::vector<int64_t> values;
  for (const std::string& part : SplitList(text, ',')) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || end == nullptr || *end != '\0' || errno != 0) {
      return InvalidArgumentError(flag + ": expected integers separated by commas, got '" + part + "'");
    }
    values.push_back(v);
  }
  if (values.empty()) return InvalidArgumentError(flag + ": no values given: a sweep with no candidates");
  return values;
}

// The folder must be one this process may write into, or one it may create.
Status CheckOutputDir(const std::string& dir) {
  if (dir.empty()) return InvalidArgumentError("--output-dir: empty");
  std::error_code ec;
  fs::path p(dir);
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  if (p.empty()) p = ".";
  if (!fs::is_directory(p, ec)) return InvalidArgumentError("--output-dir " + dir + ": " + p.string() + " is not a folder");
  if (access(p.c_str(), W_OK | X_OK) != 0) {
    return InvalidArgumentError("--output-dir " + dir + ": " + p.string() + " is not writable (" + std::strerror(errno) + ")");
  }
  return Status::Ok();
}


std::string ReproLine(const SweepFlags& f) {
  std::string s = "ops-debug sweep";
  for (const std::string& p : f.run.plugins) s += " --plugin " + ShellQuote(p);
  s += " --op " + ShellQuote(f.run.op);
  if (!f.run.input_shapes.empty()) s += " --input-shapes " + ShellQuote(f.run.input_shapes);
  for (const std::string& i : f.run.inputs) s += " --inputs " + ShellQuote(i);
  if (!f.run.dtypes.empty()) s += " --dtype " + ShellQuote(f.run.dtypes);
  if (!f.run.attrs.empty()) s += " --attrs " + ShellQuote(f.run.attrs);
  if (f.run.seed != 0) s += " --seed " + std::to_string(f.run.seed);
  if (f.run.fill != "normal") s += " --fill " + ShellQuote(f.run.fill);
  s += " --device " + ShellQuote(f.run.device);
  if (!f.run.tunables.empty()) s += " --tunables " + ShellQuote(f.run.tunables);
  if (!f.block.empty()) s += " --block " + ShellQuote(f.block);
  if (!f.vec.empty()) s += " --vec " + ShellQuote(f.vec);
  for (const std::string& t : f.tunable) s += " --tunable " + ShellQuote(t);
  s += " --warmup " + std::to_string(f.warmup) + " --iters " + std::to_string(f.iters);
  if (f.output_dir != ".") s += " --output-dir " + ShellQuote(f.output_dir);
  return s;
}

// A compiled node of a model run and the time its tasks took.
struct HotNode {
  std::string name, op_type, shapes, dtypes, attrs;
  double us = 0;
};

// The model run once, as inspector-cli run runs it; its kernel nodes whose
// ops declare tunables, ranked by their measured time, each with the op
// instance (inputs, attrs) it ran.
StatusOr<std::vector<HotNode>> HotNodes(const SweepFlags& f) {
  ModelRunRequest m{.model = f.graph, .plugins = f.run.plugins, .device = f.run.device};
  if (f.peak_bw > 0 && f.peak_flops > 0) m.peak_bw_gbs = f.peak_bw, m.peak_gflops = f.peak_flops;
  auto run = RunModel(m);
  if (!run.ok()) return std::move(run).status().WithContext("--graph " + f.graph);
  std::vector<HotNode> nodes;
  for (const NodeTime& n : run->nodes) {
    if (n.op_type.empty() || n.roofline.measured_us < 0) continue;
    // Only a kernel with knobs can be swept: the others are not candidates for the top N.
    auto op = OpRegistry::Global().Lookup(n.op_type);
    if (!op.ok() || (*op)->tunables.empty()) continue;
    HotNode h{.name = n.name, .op_type = n.op_type, .attrs = n.attrs.ToString(), .us = n.roofline.measured_us};
    for (const TensorDesc& in : n.inputs) {
      if (!in.present) break;  // trailing optional inputs left out, as --input-shapes can say
      h.shapes += (h.shapes.empty() ? "" : ";") + in.shape.ToString();
      h.dtypes += (h.dtypes.empty() ? "" : ",") + std::string(DTypeName(in.dtype));
    }
    nodes.push_back(std::move(h));
  }
  std::stable_sort(nodes.begin(), nodes.end(), [](const HotNode& a, const HotNode& b) { return a.us > b.us; });
  return nodes;
}

}  // namespace

StatusOr<int> RunGraphSweep(const SweepFlags& f, std::ostream& out, std::ostream& err, const std::atomic<bool>* cancel) {
  if (f.top < 1) return InvalidArgumentError("--top: expected at least 1 task, got " + std::to_string(f.top));
  if (!f.run.op.empty()) return InvalidArgumentError("--op: not with --graph (the graph's tasks name their ops)");
  if (f.iters < 1) return InvalidArgumentError("--iters: expected at least 1 call to time, got " + std::to_string(f.iters));
  OPSCOPE_RETURN_IF_ERROR(CheckOutputDir(f.output_dir));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<HotNode> nodes, HotNodes(f));
  if (nodes.empty()) {
    return InvalidArgumentError("--graph " + f.graph + ": no kernel that ran declares a tunable: nothing to sweep");
  }
  if (static_cast<int>(nodes.size()) > f.top) nodes.resize(static_cast<size_t>(f.top));
  out << "graph     " << f.graph << ": the " << nodes.size()
      << " compiled node(s) with the most task time among those whose ops declare tunables\n";
  int code = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const HotNode& n = nodes[i];
    if (cancel != nullptr && cancel->load()) return 130;
    SweepFlags one = f;
    one.graph.clear();
    one.run.op = n.op_type;
    one.run.input_shapes = n.shapes;
    one.run.dtypes = n.dtypes;
    one.run.attrs = n.attrs;
    one.output_dir = (fs::path(f.output_dir) / (std::to_string(i + 1) + "_" + n.op_type)).string();
    out << "\ntask " << i + 1 << "/" << nodes.size() << "  " << n.name << "  " << n.op_type << "  " << FormatMicros(n.us)
        << " in the model run  inputs " << n.shapes << (n.attrs.empty() ? "" : "  attrs " + n.attrs) << "\n";
    auto swept = RunSweepCommand(one, out, err, cancel);
    if (!swept.ok()) {
      out << "skipped   " << swept.status().message() << "\n";
      continue;
    }
    if (*swept == 130) return 130;
    code = std::max(code, *swept);
  }
  return code;
}

StatusOr<SweepRequest> SweepRequestFromFlags(const SweepFlags& f) {
  SweepRequest r;
  OPSCOPE_ASSIGN_OR_RETURN(r.base.run, RequestFromFlags(f.run));
  if (!f.run.report.empty()) return InvalidArgumentError("--report: not taken by sweep (sweep.json holds every candidate)");
  if (!f.run.repro_dir.empty()) return InvalidArgumentError("--repro-dir: not taken by sweep");
  if (!f.run.save_outputs.empty()) return InvalidArgumentError("--save-outputs: not taken by sweep");
  if (f.iters < 1) return InvalidArgumentError("--iters: expected at least 1 call to time, got " + std::to_string(f.iters));
  if (f.warmup < 0) return InvalidArgumentError("--warmup: expected 0 or more calls, got " + std::to_string(f.warmup));
  r.base.iterations = f.iters;
  r.base.warmup = f.warmup;
  for (const auto& [v, flag, unit] : {std::tuple{f.peak_bw, "--peak-bw", "GB/s"}, std::tuple{f.peak_flops, "--peak-flops", "GFLOP/s"}}) {
    if (v != -1 && !(v > 0)) {
      return InvalidArgumentError(std::string(flag) + ": expected a positive number of " + unit + ", got " + std::to_string(v));
    }
  }
  r.base.peak_bw_gbs = f.peak_bw > 0 ? f.peak_bw : 0;
  r.base.peak_gflops = f.peak_flops > 0 ? f.peak_flops : 0;
  if (!f.block.empty()) {
    OPSCOPE_ASSIGN_OR_RETURN(r.values["block"], ParseValues("--block", f.block));
  }
  if (!f.vec.empty()) {
    OPSCOPE_ASSIGN_OR_RETURN(r.values["vec"], ParseValues("--vec", f.vec));
  }
  for (const std::string& t : f.tunable) {
    const size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError("--tunable '" + t + "': expected NAME=V1,V2,...");
    }
    const std::string name = t.substr(0, eq);
    if (r.values.count(name)) return InvalidArgumentError("--tunable " + name + ": given twice");
    OPSCOPE_ASSIGN_OR_RETURN(r.values[name], ParseValues("--tunable " + name, t.substr(eq + 1)));
  }
  OPSCOPE_RETURN_IF_ERROR(CheckOutputDir(f.output_dir));
  r.cache_file = (fs::path(f.output_dir) / "sweep.json").string();
  r.use_cache = !f.no_cache;
  r.repro = ReproLine(f);
  return r;
}

StatusOr<int> RunSweepCommand(const SweepFlags& flags, std::ostream& out, std::ostream& err,
                              const std::atomic<bool>* cancel) {
  OPSCOPE_ASSIGN_OR_RETURN(SweepRequest request, SweepRequestFromFlags(flags));
  request.cancel = cancel;
  const bool progress = IsTerminal(err);
  if (progress) {
    request.progress = [&err](const SweepProgress& p) {
      err << "\r\033[Kcandidate " << p.index << "/" << p.total << " " << CandidateText(*p.tunables);
      if (p.done == nullptr) {
        err << " ...";
      } else {
        err << " " << CandidateStatusName(p.done->status) << (p.done->cached ? " (cached)" : "");
      }
      err.flush();
    };
  }
  auto report = RunSweep(request);
  if (progress) err << "\r\033[K" << std::flush;
  if (!report.ok()) return std::move(report).status();
  const std::string html = (fs::path(flags.output_dir) / "sweep.html").string();
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(request.cache_file, SweepJson(*report)).WithContext("--output-dir"));
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(html, SweepHtml(*report)).WithContext("--output-dir"));
  PrintSweep(*report, out, UseColor(out));
  out << "wrote     " << request.cache_file << ", " << html << "\n";
  out << "repro: " << report->repro << "\n";
  if (!report->complete) return 130;
  return report->best_candidate() != nullptr ? 0 : 1;
}

CLI::App* AddSweepCommand(CLI::App& app, SweepFlags& f) {
  CLI::App* c = app.add_subcommand("sweep", "Run every tunable combination of one op, each checked and timed; "
                                            "the fastest correct one against the current");
  AddRunFlags(*c, f.run);
  c->get_option("--op")->required(false);  // --graph names the ops; without it RequestFromFlags asks for --op
  c->add_option("--block", f.block, "block sizes to sweep: 64,128,256 (default: every declared value)");
  c->add_option("--vec", f.vec, "vector widths to sweep: 1,2,4,8 (default: every declared value)");
  c->add_option("--tunable", f.tunable, "another tunable's values: NAME=V1,V2,... (repeatable)")->expected(1);
  c->add_option("--warmup", f.warmup, "untimed calls first, per candidate (default 3)");
  c->add_option("--iters", f.iters, "timed calls per candidate (default 20)");
  c->add_option("--peak-bw", f.peak_bw, "the memory roof in GB/s (default: calibrated once)");
  c->add_option("--peak-flops", f.peak_flops, "the compute roof in GFLOP/s (default: calibrated once)");
  c->add_option("--output-dir", f.output_dir, "where sweep.json and sweep.html go (default: the current folder); "
                                               "its sweep.json of the same op instance is resumed from");
  c->add_flag("--no-cache", f.no_cache, "measure every candidate again, ignoring the earlier sweep.json");
  c->add_option("--graph", f.graph, "sweep the tasks of this model (.onnx) with the most time, instead of --op");
  c->add_option("--top", f.top, "with --graph: how many tasks (default 5)");
  c->footer("The current configuration is the op's default (each tunable's first value) or --tunables. A candidate whose "
            "outputs do not match the golden is FAILED, never best. A candidate is faster only when the medians differ "
            "by more than (IQR current + IQR candidate) / 2. Ctrl-C stops after the current candidate (exit 130).");
  return c;
}

}  // namespace opscope::cli
