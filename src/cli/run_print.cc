// How `ops-debug run` reads out: the text report (nondeterminism first, then
// each output's verdict and numbers, tracepoints, the reproducer) and the
// same as report.json ("opscope.report/1").
#include <cmath>
#include <cstdio>

#include "analysis/compare_json.h"
#include "cli/flag_parsing.h"
#include "cli/run_command.h"

namespace opscope::cli {

namespace {

std::string FormatTime(double us) {
  char buf[64];
  if (us < 0) return "n/a";
  if (us < 1000) std::snprintf(buf, sizeof buf, "%.1f us", us);
  else std::snprintf(buf, sizeof buf, "%.3f ms", us / 1000);
  return buf;
}

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

nlohmann::json StatsJson(const TensorStats& s) {
  return {{"count", s.count}, {"nan", s.nan}, {"inf", s.inf}, {"min", JsonNumber(s.min)},
          {"max", JsonNumber(s.max)}, {"mean", JsonNumber(s.mean)}, {"rms", JsonNumber(s.rms)}};
}

nlohmann::json HitJson(const TracepointHit& h) {
  nlohmann::json first = nlohmann::json::array();
  for (double v : h.first) first.push_back(JsonNumber(v));
  return {{"name", h.name}, {"op_id", ShortHex(h.op_id)}, {"side", h.reference ? "reference" : "kernel"},
          {"order", h.order}, {"dtype", DTypeName(h.dtype)}, {"shape", h.shape.dims()},
          {"min", JsonNumber(h.min)}, {"max", JsonNumber(h.max)}, {"mean", JsonNumber(h.mean)},
          {"nan", h.nan_count}, {"inf", h.inf_count}, {"first", first}};
}

}  // namespace

void PrintRunReport(const RunReport& r, std::ostream& out) {
  out << r.op << "  " << r.device << "  kernel " << r.kernel;
  if (!r.launches.empty()) out << "  " << r.launches[0].config.ToString();
  out << "  device " << FormatTime(r.device_us);
  if (r.repeat_us.size() > 1) out << " (median of " << r.repeat_us.size() << ": " << FormatTime(Median(r.repeat_us)) << ")";
  out << "  op_id " << ShortHex(r.op_id) << "\n";
  for (size_t i = 1; i < r.launches.size(); ++i) {
    out << "  launch " << r.launches[i].name << "  " << r.launches[i].config.ToString() << "\n";
  }
  for (const RunInput& in : r.inputs) {
    out << "  input " << in.name << "  " << in.tensor.Describe() << "  " << in.origin << "  @"
        << MaskAddress(in.tensor.raw_data()) << "\n";
  }
  if (!r.kernel_error.empty()) out << "kernel FAILED  " << OneLine(r.kernel_error) << "\n";
  // Nondeterminism comes before any other finding: no other number can be trusted past it.
  for (const RunDifference& d : r.nondeterminism) {
    out << "NONDETERMINISTIC  output " << d.name << ": " << d.runs_differing << " of " << d.runs
        << " repeats differ from run 1, up to " << WithThousands(d.elements_differing) << " element(s)\n"
        << "  first at " << CoordsText(d.first_coords) << ": run 1 " << ShortNum(d.first_value) << ", run "
        << d.first_differing_run + 1 << " " << ShortNum(d.other_value) << "\n"
        << "  max |diff| " << ShortNum(d.max_abs_diff) << " at " << CoordsText(d.max_diff_coords) << "\n";
  }
  if (r.repeats > 1 && r.nondeterminism.empty() && r.kernel_error.empty()) {
    out << "deterministic  " << r.repeats << " runs, identical bits\n";
  }
  for (const RunOutput& o : r.outputs) out << "  output " << o.name << "  written on " << o.location << "\n";
  if (!r.outputs.empty()) out << "golden " << r.golden << "  readback " << r.readback << "\n";
  for (const RunOutput& o : r.outputs) {
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
    PrintComparison(o.name, o.actual.Describe(), o.compare, out);
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
      std::string shapes;
      for (const Tensor& t : p.repro.inputs) shapes += (shapes.empty() ? "" : ", ") + t.shape().ToString();
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.1fx", p.repro.Ratio());
      out << "reproducer  " << r.repro_outcome->files.front().substr(0, r.repro_outcome->files.front().rfind('/') + 1)
          << "  inputs " << shapes << " (" << ratio << " smaller), still fails\n  " << p.command << "\n";
    } else if (!p.note.empty()) {
      out << "reproducer  " << p.note << "\n";
    }
  }
  for (const std::string& file : r.saved_files) out << "saved " << file << "\n";
  out << "status " << r.status() << "\n";
  out << "repro: " << r.repro << "\n";
}

nlohmann::json RunReportJson(const RunReport& r) {
  nlohmann::json j = EmptyReport(r.status());
  j["op"] = r.op;
  j["op_id"] = ShortHex(r.op_id);
  j["device"] = r.device;
  j["kernel"] = r.kernel;
  j["golden"] = r.golden;
  j["readback"] = r.readback;
  if (!r.kernel_error.empty()) j["error"] = r.kernel_error;
  nlohmann::json launches = nlohmann::json::array();
  for (const KernelLaunchInfo& l : r.launches) launches.push_back({{"name", l.name}, {"config", l.config.ToString()}});
  j["timing"] = {{"device_us", r.device_us >= 0 ? nlohmann::json(r.device_us) : nlohmann::json()},
                 {"runs", r.repeat_us.size()}, {"median_us", Median(r.repeat_us)}, {"launches", launches}};
  j["inputs"] = nlohmann::json::array();
  for (const RunInput& in : r.inputs) {
    j["inputs"].push_back({{"name", in.name}, {"tensor", in.tensor.Describe()}, {"origin", in.origin}});
  }
  j["determinism"] = {{"runs", r.repeats}, {"differences", nlohmann::json::array()}};
  for (const RunDifference& d : r.nondeterminism) {
    j["determinism"]["differences"].push_back(
        {{"output", d.name}, {"repeats", d.runs}, {"repeats_differing", d.runs_differing},
         {"elements_differing", d.elements_differing}, {"first_index", d.first_coords},
         {"first_differing_run", d.first_differing_run + 1}, {"run1_value", JsonNumber(d.first_value)},
         {"differing_value", JsonNumber(d.other_value)}, {"max_abs_diff", JsonNumber(d.max_abs_diff)},
         {"max_diff_index", d.max_diff_coords}});
  }
  const RunOutput* main = nullptr;
  for (const RunOutput& o : r.outputs) {
    nlohmann::json e = {{"name", o.name}, {"tensor", o.actual.Describe()}, {"location", o.location}};
    if (o.actual_stats) {
      e["stats"] = {{"passed", o.passed()}, {"actual", StatsJson(*o.actual_stats)},
                    {"expected", StatsJson(*o.expected_stats)}, {"findings", o.stats_findings}};
    } else {
      e["compare"] = CompareResultToJson(o.compare);
    }
    j["outputs"].push_back(e);
    if (!o.actual_stats && (main == nullptr || (main->passed() && !o.passed()))) main = &o;
  }
  if (main) j["compare"] = CompareResultToJson(main->compare);
  for (const TracepointHit& h : r.tracepoints) j["tracepoints"].push_back(HitJson(h));
  j["tracepoint_comparisons"] = nlohmann::json::array();
  for (const TraceComparison& c : r.trace_comparisons) {
    j["tracepoint_comparisons"].push_back({{"name", c.name}, {"order", c.order}, {"matches", c.matches}, {"detail", c.detail}});
  }
  j["repro"]["command"] = r.repro;
  if (r.repro_outcome) {
    const ReproOutcome& p = *r.repro_outcome;
    nlohmann::json region = nlohmann::json::object();
    for (size_t i = 0; i < p.region.boxes.size() && i < r.inputs.size(); ++i) {
      region[r.inputs[i].name] = {{"lo", p.region.boxes[i].lo}, {"hi", p.region.boxes[i].hi}};
    }
    j["repro"]["output"] = p.output;
    j["repro"]["element"] = p.coords;
    j["repro"]["input_region"] = region;
    j["repro"]["region_method"] = p.region.method;
    j["repro"]["found"] = p.repro.found;
    if (p.repro.found) {
      j["repro"]["dir"] = p.files.front().substr(0, p.files.front().rfind('/'));
      j["repro"]["files"] = p.files;
      j["repro"]["cropped_command"] = p.command;
      j["repro"]["original_bytes"] = p.repro.original_bytes;
      j["repro"]["repro_bytes"] = p.repro.repro_bytes;
      j["repro"]["ratio"] = p.repro.Ratio();
    } else {
      j["repro"]["note"] = p.note;
    }
  }
  return j;
}

}  // namespace opscope::cli
