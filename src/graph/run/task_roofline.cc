#include "graph/run/task_roofline.h"

#include <map>
#include <optional>
#include <utility>

namespace opscope::graph {
namespace {

// Inputs and outputs as the cost model sees them; empty unless every shape is known.
std::optional<std::pair<std::vector<TensorDesc>, std::vector<TensorDesc>>> Descs(const Graph& g, const Node& n) {
  std::vector<TensorDesc> in, out;
  auto add = [&](const std::string& name, std::vector<TensorDesc>& to) {
    if (name.empty()) {
      to.push_back(TensorDesc{.present = false});
      return true;
    }
    const Value* v = g.FindValue(name);
    if (!v || !v->dtype_known || !v->shape_known()) return false;
    to.push_back(v->desc());
    return true;
  };
  for (const std::string& name : n.inputs) {
    if (!add(name, in)) return std::nullopt;
  }
  for (const std::string& name : n.outputs) {
    if (!add(name, out)) return std::nullopt;
  }
  return std::make_pair(std::move(in), std::move(out));
}

TaskRoof RoofOf(const ScheduledTask& t, double measured_us, const Graph& g, const RoofPeaks& peaks) {
  TaskRoof r;
  const Node* n = t.desc.op_node_id >= 0 ? g.FindNode(t.desc.op_node_id) : nullptr;
  const OpSchema* schema = n ? OpRegistry::Global().Find(n->op_type) : nullptr;
  auto descs = n && schema ? Descs(g, *n) : std::nullopt;
  std::optional<Cost> cost;
  if (descs) {
    if (!descs->second.empty()) r.dtype = descs->second.front().dtype;
    Attrs attrs = n->attrs;
    (void)schema->ValidateAttrs(attrs);  // fills the defaults a cost model may read; the run validated them already
    cost = CostOf(*schema, descs->first, descs->second, attrs);
  }
  r.point = Roofline(cost, r.dtype, measured_us, peaks);
  return r;
}

}  // namespace

std::vector<TaskRoof> TaskRooflines(const Schedule& schedule, const Graph& compiled, const RoofPeaks& peaks,
                                    const std::vector<double>& measured_us) {
  std::vector<TaskRoof> roofs;
  roofs.reserve(schedule.tasks.size());
  for (size_t i = 0; i < schedule.tasks.size(); ++i) {
    const ScheduledTask& t = schedule.tasks[i];
    const double us = !measured_us.empty() ? (i < measured_us.size() ? measured_us[i] : -1)
                      : t.cal_start_ns >= 0 ? t.desc.duration_us_calibrated
                                            : -1;
    roofs.push_back(RoofOf(t, us, compiled, peaks));
  }
  return roofs;
}

std::string RunRooflineSvg(const Schedule& schedule, const std::vector<TaskRoof>& roofs, const RoofPeaks& peaks) {
  std::vector<RooflineChartPoint> points;
  size_t drawable = 0;
  for (const TaskRoof& r : roofs) drawable += r.point.has_cost && r.point.measured_us > 0 && r.point.flops > 0;
  if (drawable <= kRooflinePointsPerTaskUpTo) {
    for (size_t i = 0; i < roofs.size() && i < schedule.tasks.size(); ++i) {
      const ScheduledTask& t = schedule.tasks[i];
      if (t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H) continue;
      const std::string name = t.node_name.empty() ? t.desc.label : t.node_name;
      points.push_back({.label = name + " (" + t.op_type + ")", .dtype = roofs[i].dtype, .point = roofs[i].point});
    }
    return RooflineSvg(peaks, points);
  }
  // Per op type and dtype: untimed tasks and those without a cost model are
  // counted as points of their own, so the chart's note still adds up.
  struct Sum {
    Cost cost;
    double measured_us = 0;
    int64_t tasks = 0;
  };
  std::map<std::pair<std::string, DType>, Sum> sums;
  for (size_t i = 0; i < roofs.size() && i < schedule.tasks.size(); ++i) {
    const RooflinePoint& p = roofs[i].point;
    const std::string& type = schedule.tasks[i].op_type;
    if (!p.has_cost || !(p.measured_us > 0)) {
      if (type != "memcpy") points.push_back({.label = type, .dtype = roofs[i].dtype, .point = p});
      continue;
    }
    Sum& s = sums[{type, roofs[i].dtype}];
    s.cost.bytes_read += p.bytes;
    s.cost.flops += p.flops;
    s.measured_us += p.measured_us;
    ++s.tasks;
  }
  for (const auto& [key, s] : sums) {
    points.push_back({.label = key.first + " " + DTypeName(key.second) + " (" + std::to_string(s.tasks) + " tasks)",
                      .dtype = key.second,
                      .point = Roofline(s.cost, key.second, s.measured_us, peaks)});
  }
  return RooflineSvg(peaks, points);
}

}  // namespace opscope::graph
