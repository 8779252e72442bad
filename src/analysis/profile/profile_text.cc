// How `ops-debug profile` reads out: the run's verdict as `ops-debug run`
// prints it, then one line per kernel against its roofline, then where the
// API time went, then what the profiler itself cost.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/text_format.h"
#include "opscope/dispatch.h"
#include "opscope/profile.h"

namespace opscope {

namespace {

constexpr double kWarnSlowdown = 2.0;  // over twice the lower bound: worth a look

std::string Flops(double f) {
  char s[32];
  if (f >= 1e9) std::snprintf(s, sizeof s, "%.2f GFLOP", f / 1e9);
  else if (f >= 1e6) std::snprintf(s, sizeof s, "%.2f MFLOP", f / 1e6);
  else if (f >= 1e3) std::snprintf(s, sizeof s, "%.1f kFLOP", f / 1e3);
  else std::snprintf(s, sizeof s, "%.0f FLOP", f);
  return s;
}

std::string Fixed(double v, int digits) {
  char s[32];
  std::snprintf(s, sizeof s, "%.*f", digits, v);
  return s;
}

void PrintKernelLine(const OpRunReport& r, const OpProfile& p, std::ostream& out, bool color) {
  const RooflinePoint& roof = p.roofline;
  if (p.scope == ProfileScope::kApi) {
    out << "kernel    " << r.kernel << "  device time not measured (scope api: the host's phases only)\n";
    return;
  }
  out << "kernel    " << r.kernel << "  median " << FormatMicros(p.device_us.median) << "  (min "
      << FormatMicros(p.device_us.min) << ", mean " << FormatMicros(p.device_us.mean) << ", IQR "
      << FormatMicros(p.device_us.iqr()) << ")";
  if (!roof.has_cost) {
    out << "  no cost model: timed only, no bound\n";
    return;
  }
  out << "  " << FormatBytes(static_cast<double>(roof.bytes)) << "  " << Flops(roof.flops) << "  "
      << Fixed(roof.achieved_gbs, 1) << " GB/s  " << Fixed(roof.achieved_gflops, 2) << " GFLOP/s  "
      << BoundName(roof.bound) << "-bound  lower bound " << FormatMicros(roof.lower_bound_us);
  if (roof.efficiency() >= 0) out << "  efficiency " << Fixed(100 * roof.efficiency(), 1) << "%";
  // Past 100% the "lower bound" was beaten: say which roof and why, so the
  // figure is not read as a bound the kernel cannot pass.
  if (const std::string note = AboveRoofNote(roof); !note.empty()) out << "  (" << note << ")";
  if (roof.slowdown() > kWarnSlowdown) {
    const std::string warn = Fixed(roof.slowdown(), 1) + "x its lower bound";
    out << "  " << (color ? "\033[33m" + warn + "\033[0m" : warn);
  }
  out << "\n";
}

void PrintPhases(const OpProfile& p, std::ostream& out) {
  out << "api time  median " << FormatMicros(p.api_us.median) << " (min " << FormatMicros(p.api_us.min) << ", IQR "
      << FormatMicros(p.api_us.iqr()) << ")";
  if (p.phases.empty()) {
    out << "  phases not timed (scope kernel: the device time only)\n";
    return;
  }
  out << " = ";
  bool first = true;
  for (const PhaseProfile& ph : p.phases) {
    out << (first ? "" : " + ") << ph.name << " " << FormatMicros(ph.us.median);
    first = false;
  }
  out << "  (medians)\n";
  if (p.scope == ProfileScope::kApi) return;
  out << "device    kernel " << FormatMicros(p.device_us.median) << " on the stream, after " << FormatMicros(p.queue_us.median)
      << " in its queue; the host waited " << FormatMicros(p.phases[static_cast<int>(DispatchPhase::kWait)].us.median)
      << " for both\n";
}

}  // namespace

void PrintProfile(const OpRunReport& r, std::ostream& out, bool color) {
  PrintOpReport(r, out);
  if (!r.profile) return;
  const OpProfile& p = *r.profile;
  out << "profile   " << p.iterations << " call(s) after " << p.warmup << " warm-up, scope " << ProfileScopeName(p.scope)
      << ", "
      << (p.cold_cache ? "last-level cache flushed before each" : "caches warm") << "\n";
  out << "peaks     memory " << Fixed(p.peaks.bandwidth_gbs, 1) << " GB/s, compute " << Fixed(p.peaks.GflopsFor(p.dtype), 1)
      << " GFLOP/s " << DTypeName(p.dtype);
  // The hardware's peak beside the practical roof, when it differs (a cpu's; a GPU's is the same).
  if (const double fma = p.peaks.FmaGflopsFor(p.dtype); fma > 0 && fma != p.peaks.GflopsFor(p.dtype)) {
    out << " (FMA loop " << Fixed(fma, 1) << ")";
  }
  out << "  (" << p.peaks_note << ")\n";
  PrintKernelLine(r, p, out, color);
  for (const KernelLaunchInfo& l : p.launches) {
    const std::string res = l.ResourcesText();
    out << "  launch " << l.name << "  " << l.config.ToString() << (res.empty() ? "" : "  " + res) << "\n";
  }
  for (const Suspect& s : p.suspects) out << "suspect   [" << SuspectKindName(s.kind) << "] " << s.text << "\n";
  PrintPhases(p, out);
  out << "overhead  recording adds " << Fixed(p.overhead_us, 2) << " us per call (median API time "
      << FormatMicros(p.api_us.median) << " recorded, " << FormatMicros(p.unrecorded_api_us.median) << " not; "
      << p.unrecorded_api_us.count << " pairs, interleaved)";
  // A difference smaller than the calls' own spread is not a cost that was measured.
  const double noise = std::max(p.api_us.iqr(), p.unrecorded_api_us.iqr());
  if (std::fabs(p.overhead_us) <= noise) out << ": within the noise (IQR " << FormatMicros(noise) << ")";
  out << "\n";
  if (!p.timeline_file.empty()) {
    out << "timeline  " << p.timeline_file << (p.html_file.empty() ? "" : "  and " + p.html_file)
        << "  (Chrome Trace Event Format: Perfetto opens it)\n";
  }
}

}  // namespace opscope
