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


// The progress line on a terminal, rewritten in place; nothing otherwise.
std::function<void(const SweepProgress&)> ProgressPrinter(std::ostream& err) {
  if (!IsTerminal(err)) return nullptr;
  return [&err](const SweepProgress& p) {
    err << "\r\033[Kcandidate " << p.index << "/" << p.total << " " << CandidateText(*p.tunables);
    if (p.done == nullptr) {
      err << " ...";
    } else {
      err << " " << CandidateStatusName(p.done->status) << (p.done->cached ? " (cached)" : "");
    }
    err.flush();
  };
}

// The candidates, the files and the repro line; the exit code: 0 a candidate
// passed, 1 none did, 130 stopped before the end.
int PrintSwept(const SweepReport& report, const std::string& json, const std::string& page, std::ostream& out) {
  PrintSweep(report, out, UseColor(out));
  out << "wrote     " << json << ", " << page << "\n";
  out << "repro: " << report.repro << "\n";
  if (!report.complete) return 130;
  return report.best_candidate() != nullptr ? 0 : 1;
}

std::string ShapesText(const std::vector<Shape>& shapes) {
  const std::string s = JoinMapped(shapes, ";", [](const Shape& shape) { return shape.ToString(); });
  return s;
}

}  // namespace

StatusOr<int> RunGraphSweep(const SweepFlags& f, std::ostream& out, std::ostream& err, const std::atomic<bool>* cancel) {
  if (!f.run.op.empty()) return InvalidArgumentError("--op: not with --graph (the graph's tasks name their ops)");
  ModelSweepRequest r{.model = {.model = f.graph, .plugins = f.run.plugins, .device = f.run.device}, .top = f.top,
                      .output_dir = f.output_dir};
  if (f.peak_bw > 0 && f.peak_flops > 0) r.model.peak_bw_gbs = f.peak_bw, r.model.peak_gflops = f.peak_flops;
  SweepFlags each = f;
  each.run.op = "Identity";  // stands for the nodes' ops while the shared flags are read; SweepModel sets each
  OPSCOPE_ASSIGN_OR_RETURN(r.each, SweepRequestFromFlags(each));
  r.each.base.run.op.clear();
  r.each.cancel = cancel;
  r.each.progress = ProgressPrinter(err);
  r.on_node = [&](int k, int n, const HotNode& node) {
    if (k == 1) {
      out << "graph     " << f.graph << ": the " << n
          << " compiled node(s) with the most task time among those whose ops declare tunables\n";
    }
    out << "\ntask " << k << "/" << n << "  " << node.name << "  " << node.op_type << "  " << FormatMicros(node.us)
        << " in the model run  inputs " << ShapesText(node.input_shapes)
        << (node.attrs.empty() ? "" : "  attrs " + node.attrs) << "\n";
  };
  int code = 0, swept = 0, skipped = 0;
  r.on_swept = [&](const SweptNode& s) {
    if (IsTerminal(err)) err << "\r\033[K" << std::flush;
    if (!s.report) {
      out << "skipped   " << s.skipped << "\n";
      ++skipped;
      return;
    }
    ++swept;
    code = std::max(code, PrintSwept(*s.report, (fs::path(s.dir) / "sweep.json").string(), s.page, out));
  };
  OPSCOPE_ASSIGN_OR_RETURN(ModelSweep sweep, SweepModel(r));
  if (!sweep.complete) return 130;
  // A sweep that swept nothing found no best candidate: not a pass.
  if (swept == 0 && skipped > 0) {
    out << "\nverdict   nothing swept: each of the " << skipped << " task(s) was skipped (the reasons above)\n";
    return 1;
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
  return r;
}

StatusOr<int> RunSweepCommand(const SweepFlags& flags, std::ostream& out, std::ostream& err,
                              const std::atomic<bool>* cancel) {
  OPSCOPE_ASSIGN_OR_RETURN(SweepRequest request, SweepRequestFromFlags(flags));
  request.cancel = cancel;
  request.progress = ProgressPrinter(err);
  auto report = RunSweep(request);
  if (IsTerminal(err)) err << "\r\033[K" << std::flush;
  if (!report.ok()) return std::move(report).status();
  OPSCOPE_ASSIGN_OR_RETURN(std::string page, WriteSweepFiles(*report, request.cache_file));
  return PrintSwept(*report, request.cache_file, page, out);
}

CLI::App* AddSweepCommand(CLI::App& app, SweepFlags& f) {
  CLI::App* c = app.add_subcommand("sweep", "Run every tunable combination of one op, each checked and timed; "
                                            "the fastest correct one against the current");
  AddRunFlags(*c, f.run);
  c->get_option("--op")->required(false);  // --graph names the ops; without it RequestFromFlags asks for --op
  c->add_option("--block", f.block, "block sizes to sweep: 64,128,256 (default: every declared value)");
  c->add_option("--vec", f.vec, "vector widths to sweep: 1,2,4,8 (default: every declared value)");
  c->add_option("--tunable", f.tunable, "another tunable's values: NAME=V1,V2,... (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_option("--warmup", f.warmup, "untimed calls first, per candidate (default 3)");
  c->add_option("--iters", f.iters, "timed calls per candidate (default 20)");
  c->add_option("--peak-bw", f.peak_bw, "the memory roof in GB/s (default: calibrated once)");
  c->add_option("--peak-flops", f.peak_flops, "the compute roof in GFLOP/s (default: calibrated once)");
  c->add_option("--output-dir", f.output_dir, "where sweep.json and sweep.html go (default opscope-out/sweep); "
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
