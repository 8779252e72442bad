#include "cli/profile_command.h"

#include <CLI/CLI.hpp>

#include <filesystem>

#include "cli/inspector_web.h"
#include "cli/terminal.h"

namespace opscope::cli {

namespace {

StatusOr<double> PeakFlag(double v, const char* flag, const char* unit) {
  if (v == -1) return 0.0;  // not given: calibrated
  if (!(v > 0)) return InvalidArgumentError(std::string(flag) + ": expected a positive number of " + unit + ", got " + std::to_string(v));
  return v;
}

// timeline.json -> timeline.html, beside it.
std::string HtmlBeside(const std::string& timeline) {
  std::filesystem::path p(timeline);
  return p.replace_extension(".html").string();
}

}  // namespace

StatusOr<ProfileRequest> ProfileRequestFromFlags(const ProfileFlags& f) {
  ProfileRequest r;
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
    r.html = HtmlBeside(f.output);
    r.html_page = [](const OpRunReport& report, const std::string& timeline) -> StatusOr<std::string> {
      const OpProfile& p = *report.profile;
      const std::string svg = RooflineSvg(p.peaks, {{.label = report.kernel, .dtype = p.dtype, .point = p.roofline}});
      return BuildTimelineHtml(timeline, svg, "ops-debug profile · " + report.op);
    };
  }
  return r;
}

StatusOr<int> RunProfile(const ProfileFlags& flags, std::ostream& out) {
  OPSCOPE_ASSIGN_OR_RETURN(ProfileRequest request, ProfileRequestFromFlags(flags));
  OPSCOPE_ASSIGN_OR_RETURN(OpRunReport report, ProfileOpInstance(request));
  PrintProfile(report, out, UseColor(out));
  if (!report.report_file.empty()) out << "report    " << report.report_file << "\n";
  return report.ExitCode();
}

CLI::App* AddProfileCommand(CLI::App& app, ProfileFlags& f) {
  CLI::App* c = app.add_subcommand("profile", "Time one op: API and device time by phase, against the measured roofline");
  AddRunFlags(*c, f.run);
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
