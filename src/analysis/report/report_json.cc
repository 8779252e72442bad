#include "analysis/report/report_json.h"

#include <algorithm>
#include <cstdio>

#include "analysis/compare/compare_json.h"
#include "analysis/compare/launch_resources_json.h"
#include "analysis/profile/profile_json.h"
#include "core/file_util.h"
#include "core/json_text.h"
#include "core/text_format.h"
#include "opscope/npy.h"

namespace opscope {

namespace {

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


nlohmann::json EmptyReport(const std::string& status) {
  return {{"schema", "opscope.report/1"}, {"status", status}, {"op", nullptr},       {"op_id", nullptr},
          {"device", nullptr},           {"kernel", nullptr}, {"timing", nullptr},   {"compare", nullptr},
          {"outputs", nlohmann::json::array()}, {"tracepoints", nlohmann::json::array()},
          {"repro", {{"command", nullptr}, {"dir", nullptr}}}};
}

nlohmann::json OpReportJsonValue(const OpRunReport& r) {
  nlohmann::json j = EmptyReport(RunStatusName(r.status()));
  j["op"] = r.op;
  j["op_id"] = ShortHex(r.op_id);
  if (r.instance_key) {
    j["instance"] = {{"key", Hex16(r.instance_key)}, {"input_fingerprint", Hex16(r.input_fingerprint)}};
  }
  j["device"] = r.device;
  j["kernel"] = r.kernel;
  j["golden"] = r.golden;
  j["readback"] = r.readback;
  if (!r.kernel_error.empty()) j["error"] = r.kernel_error;
  nlohmann::json launches = nlohmann::json::array();
  for (const KernelLaunchInfo& l : r.launches) {
    launches.push_back({{"name", l.name}, {"config", l.config.ToString()}});
    AddLaunchResources(l, launches.back());
  }
  j["timing"] = {{"device_us", r.device_us >= 0 ? nlohmann::json(r.device_us) : nlohmann::json()},
                 {"runs", r.repeat_us.size()}, {"median_us", r.median_us()}, {"launches", launches}};
  j["inputs"] = nlohmann::json::array();
  for (const OpRunInput& in : r.inputs) {
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
  const OpRunOutput* main = nullptr;
  for (const OpRunOutput& o : r.outputs) {
    nlohmann::json e = {{"name", o.name}, {"tensor", o.actual.Describe()}, {"location", o.location}};
    if (!o.not_written.empty()) {
      e["not_written"] = o.not_written;
    } else if (o.actual_stats) {
      e["stats"] = {{"passed", o.passed()}, {"actual", StatsJson(*o.actual_stats)},
                    {"expected", StatsJson(*o.expected_stats)}, {"findings", o.stats_findings}};
    } else {
      e["compare"] = CompareResultToJson(o.compare);
      if (!o.tolerance_note.empty()) e["tolerance_note"] = o.tolerance_note;
    }
    if (!o.out_of_bounds.empty()) e["out_of_bounds"] = o.out_of_bounds;
    j["outputs"].push_back(e);
    if (!o.actual_stats && o.not_written.empty() && (main == nullptr || (main->passed() && !o.passed()))) main = &o;
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
    if (!p.still_shows.empty()) j["repro"]["still_shows"] = p.still_shows;
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
  if (r.profile) j["profile"] = OpProfileJson(*r.profile);
  return j;
}

std::string OpReportJson(const OpRunReport& r) { return JsonText(OpReportJsonValue(r), 2) + "\n"; }

Status WriteOpReport(const std::string& path, const OpRunReport& r) { return WriteReportFile(path, OpReportJsonValue(r)); }

Status WriteReportFile(const std::string& path, const nlohmann::json& report) {
  return WriteFileAtomic(path, JsonText(report, 2) + "\n").WithContext("report");
}

}  // namespace opscope
