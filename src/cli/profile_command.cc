#include "cli/profile_command.h"

#include <CLI/CLI.hpp>

#include <filesystem>

#include "cli/terminal.h"
#include "core/file_util.h"
#include "core/text_format.h"
#include "opscope/model.h"
#include "report/profile_page.h"

namespace opscope::cli {

namespace {

StatusOr<double> PeakFlag(double v, const char* flag, const char* unit) {
  if (v == -1) return 0.0;  // not given: calibrated
  if (!(v > 0)) return InvalidArgumentError(std::string(flag) + ": expected a positive number of " + unit + ", got " + std::to_string(v));
  return v;
}

}  // namespace

constexpr FieldFlag kProfileOwn[] = {{"rule", "--rule"}, {"scope", "--mode"}};
const std::span<const FieldFlag> kProfileOwnFlags(kProfileOwn);

StatusOr<ProfileRequest> ProfileRequestFromFlags(const ProfileFlags& f) {
  ProfileRequest r;
  OPSCOPE_ASSIGN_OR_RETURN(r.scope, ParseProfileScope(f.mode));
  OPSCOPE_ASSIGN_OR_RETURN(r.run, RequestFromFlags(f.run));
  r.warmup = f.warmup;
  r.iterations = f.iters;
  r.cold_cache = f.cold_cache;
  OPSCOPE_ASSIGN_OR_RETURN(r.peak_bw_gbs, PeakFlag(f.peak_bw, "--peak-bw", "GB/s"));
  OPSCOPE_ASSIGN_OR_RETURN(r.peak_gflops, PeakFlag(f.peak_flops, "--peak-flops", "GFLOP/s"));
  r.timeline = f.output;
  if (!f.output.empty()) {
    if (std::filesystem::path(f.output).extension() != ".json") {
      return InvalidArgumentError("--output " + f.output + ": expected a .json file name (the timeline; its .html goes beside it)");
    }
    OPSCOPE_RETURN_IF_ERROR(PrepareOutputFile(f.output, "--output"));
  }
  return r;
}

namespace {

// --graph: the model run once as inspector-cli run runs it, each kernel
// node's time against its roof, then the suspects.
StatusOr<int> RunGraphProfile(const ProfileFlags& f, std::ostream& out) {
  ModelRunRequest req{.model = f.graph, .plugins = f.run.plugins, .device = f.run.device};
  req.iterations = std::max(1, f.iters);
  OPSCOPE_ASSIGN_OR_RETURN(double bw, PeakFlag(f.peak_bw, "--peak-bw", "GB/s"));
  OPSCOPE_ASSIGN_OR_RETURN(double flops, PeakFlag(f.peak_flops, "--peak-flops", "GFLOP/s"));
  if (bw > 0) req.peak_bw_gbs = bw;
  if (flops > 0) req.peak_gflops = flops;
  auto run = RunModel(req);
  if (!run.ok()) return std::move(run).status().WithContext("--graph");
  out << "graph     " << run->model << "  " << run->nodes.size() << " kernel node(s), " << run->tasks
      << " tasks  span " << FormatMicros(run->span_us) << "  critical path " << FormatMicros(run->critical_path_us)
      << "  (times of the last of " << run->iterations << " iteration(s))\n";
  char figures[96];
  std::snprintf(figures, sizeof figures, "peaks     memory %.1f GB/s, compute %.1f GFLOP/s float32  (", run->peaks.bandwidth_gbs,
                run->peaks.gflops_f32);
  out << figures << run->peaks.source << ")\n";
  char line[256];
  for (const NodeTime& n : run->nodes) {
    const RooflinePoint& p = n.roofline;
    std::snprintf(line, sizeof line, "  %-32s %-14s %12s", n.name.c_str(), n.op_type.c_str(),
                  FormatMicros(p.measured_us).c_str());
    out << line;
    if (p.has_cost && p.bound != Bound::kNone) {
      std::snprintf(line, sizeof line, "  %10.2f MiB  %-7s bound %12s  eff. %6.1f%%", p.bytes / 1048576.0,
                    BoundName(p.bound), FormatMicros(p.lower_bound_us).c_str(), 100 * p.efficiency());
      out << line;
    } else {
      out << "  no bound";
    }
    out << (n.on_critical_path ? "  critical path" : "") << "\n";
  }
  PrintSuspects(run->suspects, out);
  return 0;
}

}  // namespace

StatusOr<int> RunProfile(const ProfileFlags& flags, std::ostream& out) {
  const int modes = !flags.run.op.empty() + !flags.chain.empty() + !flags.graph.empty();
  if (modes != 1) {
    return InvalidArgumentError(modes == 0 ? "--op: required (or --chain \"OpA>OpB\", or --graph MODEL.onnx)"
                                           : "--op, --chain and --graph: give one of them");
  }
  // A chain and a model print what they measured and write no file: a flag
  // asking for one is refused before anything runs, not ignored.
  if (!flags.chain.empty() || !flags.graph.empty()) {
    const std::string mode = flags.chain.empty() ? "--graph" : "--chain";
    const std::pair<const std::string*, const char*> writes[] = {
        {&flags.run.report, "--report"}, {&flags.output, "--output"},
        {&flags.run.save_outputs, "--save-outputs"}, {&flags.run.repro_dir, "--repro-dir"}};
    for (const auto& [value, flag] : writes) {
      if (!value->empty()) {
        return InvalidArgumentError(std::string(flag) + ": not written with " + mode + " (it prints each " +
                                    (flags.chain.empty() ? "node" : "stage") +
                                    " and the suspects); for one op's report and timeline: ops-debug profile --op OP " + flag + " ...");
      }
    }
  }
  if (!flags.graph.empty()) {
    if (flags.mode != "full") return InvalidArgumentError("--mode " + flags.mode + ": a model (--graph) is timed in full only");
    return RunGraphProfile(flags, out);
  }
  if (!flags.chain.empty()) {
    ProfileFlags f = flags;
    f.run.op = "Identity";  // stands for the stages while the shared flags are read; ProfileChain sets each
    OPSCOPE_ASSIGN_OR_RETURN(ProfileRequest request, ProfileRequestFromFlags(f));
    if (!f.run.attrs.empty() || !f.run.tunables.empty()) {
      return InvalidArgumentError("--chain: attrs go in braces per stage (\"OpA{axis=1}>OpB\"); --attrs and --tunables are for --op");
    }
    OPSCOPE_ASSIGN_OR_RETURN(ChainProfile chain, ProfileChain(request, flags.chain));
    PrintChainProfile(chain, out, UseColor(out));
    for (const ChainStageProfile& s : chain.stages) {
      if (!s.report.passed()) return 1;
    }
    return 0;
  }
  OPSCOPE_ASSIGN_OR_RETURN(ProfileRequest request, ProfileRequestFromFlags(flags));
#if defined(OPSCOPE_MINIMAL)
  // The timeline is written; its page is the report layer's, which this build leaves out.
  OPSCOPE_ASSIGN_OR_RETURN(OpRunReport report, ProfileOpInstance(request));
  PrintProfile(report, out, UseColor(out));
  if (!request.timeline.empty()) out << "page: not in this build (the minimal build has no report pages)\n";
#else
  OPSCOPE_ASSIGN_OR_RETURN(OpRunReport report,
                           request.timeline.empty() ? ProfileOpInstance(request) : ProfileOpWithPage(request));
  PrintProfile(report, out, UseColor(out));
#endif
  if (!report.report_file.empty()) out << "report    " << report.report_file << "\n";
  return report.ExitCode();
}

CLI::App* AddProfileCommand(CLI::App& app, ProfileFlags& f) {
  CLI::App* c = app.add_subcommand("profile", "Time one op: API and device time by phase, against the measured roofline");
  AddRunFlags(*c, f.run);
  c->get_option("--op")->required(false);  // or --chain, or --graph
  // Profilers' users know --mode as what is measured; run's --mode (the
  // compare rule) is --rule here, its other spelling.
  c->remove_option(c->get_option("--rule"));
  c->add_option("--rule", f.run.tolerance.rule, "mixed | abs | rel | exact | ulp:N: the compare rule (see below)");
  c->add_option("--mode", f.mode, "full (API phases and device time, the default) | kernel (device time only) | "
                                  "api (host phases only)");
  std::string footer = c->get_footer();
  for (size_t at = footer.find("(--mode)"); at != std::string::npos; at = footer.find("(--mode)", at)) {
    footer.replace(at, 8, "(--rule)");
  }
  c->footer(footer);
  c->add_option("--chain", f.chain, "the hot chain of ops in the --baseline syntax, \"OpA{attrs}>OpB>OpC\": each stage "
                                     "timed, then the ranked suspects (stage 1 takes --input-shapes)");
  c->add_option("--graph", f.graph, "the hot chain of a model (.onnx), run as inspector-cli run runs it: each "
                                     "node's time, bytes, efficiency, then the ranked suspects");
  c->add_option("--warmup", f.warmup, "untimed calls first (default 3)");
  c->add_option("--iters", f.iters, "timed calls (default 20); each paired with an unrecorded one to measure the profiler");
  c->add_flag("--cold-cache", f.cold_cache, "flush the last-level cache before every call");
  c->add_option("--peak-bw", f.peak_bw, "the memory roof in GB/s (default: calibrated, see ops-debug calibrate)");
  c->add_option("--peak-flops", f.peak_flops, "the compute roof in GFLOP/s (default: calibrated)");
  c->add_option("--output", f.output, "write the timeline here (Chrome Trace Event Format; Perfetto opens it) "
                                       "and its page beside it (.html)");
  return c;
}

}  // namespace opscope::cli
