#include "graph/run/summary.h"

#include <algorithm>
#include <map>

#include "analysis/suspects/suspects_json.h"
#include "core/json_text.h"
#include "graph/run/output_checks.h"
#include "graph/runtime/run_races.h"
#include "opscope/npy.h"

namespace opscope::graph {

const char kTimedFigures[] =
    "task times: each task's median over the timed iterations; op type, time-lost and total figures: sums of those "
    "medians; efficiency: a task's lower bound over its median; IQR: of the per-iteration total; streams, span and "
    "critical path: the median iteration (by span)";

Summary Summarize(const Schedule& schedule, int top_n) {
  Summary s;
  std::map<std::string, OpTypeRow> rows;
  s.streams.resize(schedule.num_streams());
  for (int i = 0; i < schedule.num_streams(); ++i) {
    s.streams[i].stream_id = i;
    s.streams[i].name = StreamName(schedule, i);
  }
  int64_t first = -1, last = -1;
  std::vector<const ScheduledTask*> ran;
  for (const ScheduledTask& t : schedule.tasks) {
    if (t.cal_start_ns < 0) continue;
    ran.push_back(&t);
    const bool copy = t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H;
    OpTypeRow& r = rows[copy ? kDataMovementRow : t.op_type];
    const double us = t.desc.duration_us_calibrated;
    ++r.count;
    r.total_us += us;
    s.total_task_us += us;
    StreamRow& sr = s.streams[t.desc.stream_id];
    ++sr.tasks;
    sr.busy_us += us;
    first = first < 0 ? t.cal_start_ns : std::min(first, t.cal_start_ns);
    last = std::max(last, t.cal_end_ns);
  }
  s.span_us = first < 0 ? 0 : static_cast<double>(last - first) / 1e3;
  for (StreamRow& sr : s.streams) sr.idle_us = std::max(0.0, s.span_us - sr.busy_us);
  for (auto& [type, r] : rows) {
    r.op_type = type;
    r.mean_us = r.total_us / static_cast<double>(r.count);
    r.share_pct = s.total_task_us > 0 ? 100.0 * r.total_us / s.total_task_us : 100.0 / rows.size();
    s.op_types.push_back(r);
  }
  std::stable_sort(s.op_types.begin(), s.op_types.end(),
                   [](const OpTypeRow& a, const OpTypeRow& b) { return a.total_us > b.total_us; });
  std::stable_sort(ran.begin(), ran.end(), [](const ScheduledTask* a, const ScheduledTask* b) {
    return a->desc.duration_us_calibrated > b->desc.duration_us_calibrated;
  });
  for (size_t i = 0; i < ran.size() && static_cast<int>(i) < top_n; ++i) {
    const ScheduledTask& t = *ran[i];
    s.top_tasks.push_back(TopTask{.task_id = t.desc.task_id, .node_id = t.desc.op_node_id,
                                  .name = t.node_name.empty() ? t.desc.label : t.node_name, .op_type = t.op_type,
                                  .kernel = t.desc.kernel_name, .stream_id = t.desc.stream_id,
                                  .start_us = t.desc.start_us, .duration_us = t.desc.duration_us_calibrated});
  }
  s.critical_path = ComputeCriticalPath(schedule);
  return s;
}

void AddTiming(Summary& s, const Schedule& schedule, const RunTiming& timing, int top_n) {
  // Every figure is a sum of the tasks' medians (TaskMediansUs), so the
  // op types add up to the total and match the time-lost table; the
  // quartiles stay those of the per-iteration totals: the run's noise.
  const std::vector<double> medians = TaskMediansUs(timing);
  std::map<std::string, double> type_us;
  s.total_task_us = 0;
  for (const ScheduledTask& t : schedule.tasks) {
    const size_t id = static_cast<size_t>(t.desc.task_id);
    if (id >= medians.size() || medians[id] < 0) continue;
    const bool copy = t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H;
    type_us[copy ? kDataMovementRow : t.op_type] += medians[id];
    s.total_task_us += medians[id];
  }
  for (OpTypeRow& r : s.op_types) {
    r.total_us = type_us[r.op_type];
    r.mean_us = r.total_us / static_cast<double>(r.count);
    auto it = timing.op_types.find(r.op_type);
    if (it == timing.op_types.end()) continue;
    r.q1_us = it->second.q1_us;
    r.q3_us = it->second.q3_us;
  }
  for (OpTypeRow& r : s.op_types) {
    r.share_pct = s.total_task_us > 0 ? 100.0 * r.total_us / s.total_task_us : 100.0 / s.op_types.size();
  }
  std::stable_sort(s.op_types.begin(), s.op_types.end(),
                   [](const OpTypeRow& a, const OpTypeRow& b) { return a.total_us > b.total_us; });
  std::vector<const ScheduledTask*> ran;
  for (const ScheduledTask& t : schedule.tasks) {
    const size_t id = static_cast<size_t>(t.desc.task_id);
    if (t.cal_start_ns >= 0 && id < timing.tasks.size() && timing.tasks[id].samples > 0) ran.push_back(&t);
  }
  auto median = [&](const ScheduledTask* t) { return timing.tasks[t->desc.task_id].median_us; };
  std::stable_sort(ran.begin(), ran.end(),
                   [&](const ScheduledTask* a, const ScheduledTask* b) { return median(a) > median(b); });
  s.top_tasks.clear();
  for (size_t i = 0; i < ran.size() && static_cast<int>(i) < top_n; ++i) {
    const ScheduledTask& t = *ran[i];
    const Spread& sp = timing.tasks[t.desc.task_id];
    s.top_tasks.push_back(TopTask{.task_id = t.desc.task_id, .node_id = t.desc.op_node_id,
                                  .name = t.node_name.empty() ? t.desc.label : t.node_name, .op_type = t.op_type,
                                  .kernel = t.desc.kernel_name, .stream_id = t.desc.stream_id,
                                  .start_us = t.desc.start_us, .duration_us = sp.median_us, .q1_us = sp.q1_us,
                                  .q3_us = sp.q3_us});
  }
  s.timing = timing;
}

void AddRoofline(Summary& s, const Schedule& schedule, const std::vector<TaskRoof>& roofs, const RoofPeaks& peaks) {
  RooflineSummary r{.peaks = peaks};
  std::map<std::string, OpTypeLoss> by_type;
  std::map<std::string, double> most_beaten_us;  // by op type: the most a task beat its bound by
  for (size_t i = 0; i < roofs.size() && i < schedule.tasks.size(); ++i) {
    const RooflinePoint& p = roofs[i].point;
    if (!(p.measured_us >= 0)) continue;
    if (p.bound == Bound::kNone) ++r.tasks_without_bound;
    else ++r.tasks_with_bound;
    if (!p.has_cost) continue;
    const std::string& type = schedule.tasks[i].op_type;
    r.tasks.push_back({.task_id = static_cast<int64_t>(i), .op_type = type, .bound = p.bound,
                       .duration_us = p.measured_us, .lower_bound_us = p.lower_bound_us,
                       .efficiency = p.efficiency(), .above_roof = AboveRoofNote(p)});
    if (p.bound == Bound::kNone) continue;
    OpTypeLoss& l = by_type[type];
    if (double& beaten = most_beaten_us[type]; p.lower_bound_us - p.measured_us > beaten) {
      beaten = p.lower_bound_us - p.measured_us;
      l.above_roof = r.tasks.back().above_roof;
    }
    ++l.count;
    l.measured_us += p.measured_us;
    l.lower_bound_us += p.lower_bound_us;
  }
  for (auto& [type, l] : by_type) {
    l.op_type = type;
    l.lost_us = l.measured_us - l.lower_bound_us;
    l.efficiency = l.measured_us > 0 ? l.lower_bound_us / l.measured_us : 0;
    if (!(l.efficiency > 1)) l.above_roof.clear();  // some tasks beat their bound, the type as a whole did not
    r.lost.push_back(l);
  }
  std::stable_sort(r.lost.begin(), r.lost.end(),
                   [](const OpTypeLoss& a, const OpTypeLoss& b) { return a.lost_us > b.lost_us; });
  for (TopTask& t : s.top_tasks) {
    if (t.task_id < 0 || static_cast<size_t>(t.task_id) >= roofs.size()) continue;
    const RooflinePoint& p = roofs[t.task_id].point;
    t.bound = p.bound;
    t.lower_bound_us = p.lower_bound_us;
    t.efficiency = p.efficiency();
  }
  s.roofline = std::move(r);
}

namespace {

// -1 (unknown) is written as null.
nlohmann::json Known(double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); }

nlohmann::json RooflineJson(const RooflineSummary& r) {
  nlohmann::json j;
  j["peaks"] = {{"bandwidth_gbs", r.peaks.bandwidth_gbs},
                {"gflops_f32", r.peaks.gflops_f32},
                {"gflops_f64", r.peaks.gflops_f64},
                {"fma_gflops_f32", r.peaks.fma_gflops_f32},
                {"fma_gflops_f64", r.peaks.fma_gflops_f64},
                {"source", r.peaks.source}};
  j["tasks_with_bound"] = r.tasks_with_bound;
  j["tasks_without_bound"] = r.tasks_without_bound;
  j["lost_by_op_type"] = nlohmann::json::array();
  for (const OpTypeLoss& l : r.lost) {
    j["lost_by_op_type"].push_back({{"op_type", l.op_type},
                                    {"count", l.count},
                                    {"measured_us", l.measured_us},
                                    {"lower_bound_us", l.lower_bound_us},
                                    {"lost_us", l.lost_us},
                                    {"efficiency", l.efficiency}});
    if (!l.above_roof.empty()) j["lost_by_op_type"].back()["above_roof"] = l.above_roof;
  }
  j["tasks"] = nlohmann::json::array();
  for (const TaskBoundRow& t : r.tasks) {
    j["tasks"].push_back({{"task_id", t.task_id},
                          {"op_type", t.op_type},
                          {"bound", BoundName(t.bound)},
                          {"duration_us", t.duration_us},
                          {"lower_bound_us", Known(t.bound == Bound::kNone ? -1 : t.lower_bound_us)},
                          {"efficiency", Known(t.efficiency)}});
    if (!t.above_roof.empty()) j["tasks"].back()["above_roof"] = t.above_roof;
  }
  return j;
}

}  // namespace

nlohmann::json SummaryJson(const Summary& s) {
  nlohmann::json j;
  j["schema"] = "opscope.summary/1";
  if (s.timing) j["figures"] = kTimedFigures;
  j["span_us"] = s.span_us;
  j["total_task_us"] = s.total_task_us;
  if (s.peak_tensor_bytes >= 0) {
    j["tensor_memory"] = {{"peak_bytes", s.peak_tensor_bytes}, {"made_bytes", s.made_tensor_bytes}};
  }
  j["op_types"] = nlohmann::json::array();
  for (const OpTypeRow& r : s.op_types) {
    j["op_types"].push_back({{"op_type", r.op_type},
                             {"data_movement", r.op_type == kDataMovementRow},
                             {"count", r.count},
                             {"total_us", r.total_us},
                             {"mean_us", r.mean_us},
                             {"share_pct", r.share_pct}});
    if (s.timing) {
      j["op_types"].back()["q1_us"] = r.q1_us;
      j["op_types"].back()["q3_us"] = r.q3_us;
    }
  }
  j["top_tasks"] = nlohmann::json::array();
  for (const TopTask& t : s.top_tasks) {
    j["top_tasks"].push_back({{"task_id", t.task_id},
                              {"node_id", t.node_id},
                              {"name", t.name},
                              {"op_type", t.op_type},
                              {"kernel", t.kernel},
                              {"stream_id", t.stream_id},
                              {"start_us", t.start_us},
                              {"duration_us", t.duration_us}});
    if (s.timing) {
      j["top_tasks"].back()["q1_us"] = t.q1_us;
      j["top_tasks"].back()["q3_us"] = t.q3_us;
    }
    if (s.roofline) {
      nlohmann::json& row = j["top_tasks"].back();
      row["bound"] = BoundName(t.bound);
      row["lower_bound_us"] = Known(t.bound == Bound::kNone ? -1 : t.lower_bound_us);
      row["efficiency"] = Known(t.efficiency);
    }
  }
  j["streams"] = nlohmann::json::array();
  for (const StreamRow& r : s.streams) {
    j["streams"].push_back({{"stream_id", r.stream_id},
                            {"name", r.name},
                            {"tasks", r.tasks},
                            {"busy_us", r.busy_us},
                            {"idle_us", r.idle_us}});
  }
  j["critical_path"] = {{"task_ids", s.critical_path.task_ids}, {"total_us", s.critical_path.total_us}};
  if (s.timing) j["timing"] = RunTimingJson(*s.timing);
  if (s.roofline) j["roofline"] = RooflineJson(*s.roofline);
  if (s.suspects) j["suspects"] = SuspectsJson(*s.suspects);
  j["variance"] = nlohmann::json::array();
  for (const VarianceFinding& v : s.variance) {
    j["variance"].push_back({{"node_id", v.node_id},
                             {"node", v.node},
                             {"op_type", v.op_type},
                             {"min_us", v.min_us},
                             {"max_us", v.max_us},
                             {"fastest_iteration", v.fastest + 1},
                             {"slowest_iteration", v.slowest + 1},
                             {"iterations", v.iterations},
                             {"text", v.text}});
  }
  if (!s.output_checks.empty()) j["outputs_checked"] = OutputChecksJson(s.output_checks);
  j["findings"] = nlohmann::json::array();
  for (const SymptomFinding& f : s.findings) {
    j["findings"].push_back({{"kind", f.kind}, {"text", f.text}, {"evidence", f.evidence}, {"look", f.look}});
  }
  if (s.race_check) {
    nlohmann::json check = RaceCheckJson(*s.race_check);
    j["races"] = std::move(check["races"]);
    check.erase("races");
    j["race_check"] = std::move(check);
  }
  return j;
}

Status WriteSummaryJson(const std::string& path, const Summary& s) {
  return WriteFileAtomic(path, JsonText(SummaryJson(s), 2) + "\n").WithContext("summary.json");
}

}  // namespace opscope::graph
