// How `ops-debug run` reads out: nondeterminism first, then each output's
// verdict and numbers, tracepoints, the reproducer.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/text_format.h"
#include "opscope/harness.h"

namespace opscope {
namespace {

// Two values that differ, printed with the digits that show it (604.6655 and
// 604.6655 at 7 digits are 604.66553 and 604.66547 at 8); where no decimal
// does (-0 and +0, two NaN payloads), their bits.
std::pair<std::string, std::string> DistinctNums(double a, double b) {
  char x[64], y[64];
  for (int digits = 7; digits <= 17; ++digits) {
    std::snprintf(x, sizeof x, "%.*g", digits, a);
    std::snprintf(y, sizeof y, "%.*g", digits, b);
    if (std::string_view(x) != y) return {x, y};
  }
  uint64_t ba = 0, bb = 0;
  std::memcpy(&ba, &a, sizeof a);
  std::memcpy(&bb, &b, sizeof b);
  return {std::string(x) + " (bits " + Hex(ba) + ")", std::string(y) + " (bits " + Hex(bb) + ")"};
}

}  // namespace

void PrintOpReport(const OpRunReport& r, std::ostream& out) {
  out << r.op << "  " << r.device << "  kernel " << r.kernel;
  if (!r.launches.empty()) out << "  " << r.launches[0].config.ToString();
  out << "  device " << FormatMicros(r.device_us);
  if (r.repeat_us.size() > 1) out << " (median of " << r.repeat_us.size() << ": " << FormatMicros(r.median_us()) << ")";
  out << "  op_id " << ShortHex(r.op_id) << "\n";
  for (size_t i = 1; i < r.launches.size(); ++i) {
    out << "  launch " << r.launches[i].name << "  " << r.launches[i].config.ToString() << "\n";
  }
  for (const OpRunInput& in : r.inputs) {
    if (!in.tensor.defined()) {
      out << "  input " << in.name << "  omitted\n";
      continue;
    }
    out << "  input " << in.name << "  " << in.tensor.Describe() << "  " << in.origin << "  @"
        << MaskAddress(in.tensor.raw_data()) << "\n";
  }
  if (!r.kernel_error.empty()) out << "kernel FAILED  " << OneLine(r.kernel_error) << "\n";
  // Nondeterminism comes before any other finding: no other number can be trusted past it.
  for (const RunDifference& d : r.nondeterminism) {
    const auto [first, other] = DistinctNums(d.first_value, d.other_value);
    out << "NONDETERMINISTIC  output " << d.name << ": " << d.runs_differing << " of " << d.runs
        << " repeats differ from run 1, up to " << WithThousands(d.elements_differing) << " element(s)\n"
        << "  first at " << CoordsText(d.first_coords) << ": run 1 " << first << ", run "
        << d.first_differing_run + 1 << " " << other << "\n"
        << "  max |diff| " << ShortNum(d.max_abs_diff) << " at " << CoordsText(d.max_diff_coords) << "\n";
  }
  if (r.repeats > 1 && r.nondeterminism.empty() && r.kernel_error.empty()) {
    out << "deterministic  " << r.repeats << " runs, identical bits\n";
  }
  for (const OpRunOutput& o : r.outputs) out << "  output " << o.name << "  written on " << o.location << "\n";
  if (!r.outputs.empty()) out << "golden " << r.golden << "  readback " << r.readback << "\n";
  for (const OpRunOutput& o : r.outputs) {
    if (!o.not_written.empty()) {
      out << "output " << o.name << "  " << o.actual.Describe() << "  " << (o.passed() ? "" : "FAILED  ")
          << o.not_written << "\n";
      if (!o.out_of_bounds.empty()) out << "  OUT OF BOUNDS  " << o.out_of_bounds << "\n";
      continue;
    }
    if (o.actual_stats) {
      const TensorStats &a = *o.actual_stats, &e = *o.expected_stats;
      out << "output " << o.name << "  stats  " << (o.passed() ? "PASSED" : "FAILED") << "  "
          << DescribeTolerance(o.compare.tolerance) << " on the summaries\n"
          << "  actual    count " << a.count << "  NaN " << a.nan << "  Inf " << a.inf << "  min " << ShortNum(a.min)
          << "  max " << ShortNum(a.max) << "  mean " << ShortNum(a.mean) << "  rms " << ShortNum(a.rms) << "\n"
          << "  expected  count " << e.count << "  NaN " << e.nan << "  Inf " << e.inf << "  min " << ShortNum(e.min)
          << "  max " << ShortNum(e.max) << "  mean " << ShortNum(e.mean) << "  rms " << ShortNum(e.rms) << "\n";
      for (const std::string& f : o.stats_findings) out << "  differs: " << f << "\n";
      continue;
    }
    PrintComparison(o.name, o.actual.Describe(), o.compare, out, o.out_of_bounds);
    if (!o.tolerance_note.empty()) out << "  tolerance  " << o.tolerance_note << "\n";
  }
  for (const TraceComparison& c : r.trace_comparisons) {
    out << "  tracepoint " << c.name << "#" << c.order << "  " << (c.matches ? "matches" : "DIFFERS") << "  "
        << c.detail << "\n";
  }
  if (r.trace_comparisons.empty()) {
    for (const TracepointHit& h : r.tracepoints) {
      out << "  tracepoint " << h.name << "#" << h.order << " (" << (h.reference ? "reference" : "kernel") << ")  "
          << DTypeName(h.dtype) << h.shape.ToString() << "  min " << ShortNum(h.min) << "  max " << ShortNum(h.max)
          << "  mean " << ShortNum(h.mean) << "  NaN " << h.nan_count << "\n";
    }
  }
  if (r.repro_outcome) {
    const ReproOutcome& p = *r.repro_outcome;
    if (!p.region_text.empty()) {
      out << "  worst input region  " << p.region_text << "  (output " << p.output << CoordsText(p.coords) << ", by "
          << p.region.method << (p.region.method == "perturbation" ? ", " + std::to_string(p.region.probes) + " runs" : "")
          << ")\n";
    }
    if (p.repro.found) {
      const std::string shapes = JoinMapped(p.repro.inputs, ", ", [](const Tensor& t) { return t.shape().ToString(); });
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.1fx", p.repro.Ratio());
      out << "reproducer  " << r.repro_outcome->files.front().substr(0, r.repro_outcome->files.front().rfind('/') + 1)
          << "  inputs " << shapes << " (" << ratio << " smaller), still fails"
          << (p.still_shows.empty() ? "" : " the same way: " + p.still_shows) << "\n  " << p.command << "\n";
    } else if (!p.note.empty()) {
      out << "reproducer  " << p.note << "\n";
    }
  }
  for (const std::string& file : r.saved_files) out << "saved " << file << "\n";
  size_t warnings = 0;  // a pass that may hide wrong values says so to the end
  for (const OpRunOutput& o : r.outputs) warnings += o.passed() ? o.compare.warnings.size() : 0;
  out << "status " << RunStatusName(r.status())
      << (r.status() == RunStatus::kPassed && warnings ? " with " + std::to_string(warnings) + (warnings == 1 ? " warning" : " warnings") : "")
      << "\n";
  out << "repro: " << r.repro << "\n";
}

}  // namespace opscope
