#include "graph/runtime/iteration_stats.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "graph/runtime/stream_clock.h"

namespace opscope::graph {
namespace {

// The p-quantile of sorted values, interpolated between the two order
// statistics around it: with 5 iterations q1 is the 2nd value, q3 the 4th.
double Quantile(const std::vector<double>& sorted, double p) {
  const double at = p * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - static_cast<double>(lo));
}

bool IsCopy(const ScheduledTask& t) {
  return t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H;
}

double SpanUs(const IterationTimes& it) {
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (const TaskTimes& t : it) {
    if (t.cal_start_ns < 0) continue;
    first = std::min(first, t.cal_start_ns);
    last = std::max(last, t.cal_end_ns);
  }
  return last < first ? 0 : static_cast<double>(last - first) / 1e3;
}

double DurationUs(const TaskTimes& t) { return static_cast<double>(t.cal_end_ns - t.cal_start_ns) / 1e3; }

}  // namespace

Spread SpreadOf(std::vector<double> values) {
  Spread s;
  s.samples = static_cast<int>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.median_us = Quantile(values, 0.5);
  s.q1_us = Quantile(values, 0.25);
  s.q3_us = Quantile(values, 0.75);
  return s;
}

nlohmann::json SpreadJson(const Spread& s) {
  return {{"median_us", s.median_us}, {"q1_us", s.q1_us}, {"q3_us", s.q3_us}, {"iqr_us", s.iqr_us()},
          {"samples", s.samples}};
}

IterationTimes SnapshotIteration(const Schedule& schedule) {
  IterationTimes out;
  out.reserve(schedule.tasks.size());
  for (const ScheduledTask& t : schedule.tasks) {
    out.push_back({.raw_start_ns = t.raw_start_ns, .raw_end_ns = t.raw_end_ns, .cal_start_ns = t.cal_start_ns,
                   .cal_end_ns = t.cal_end_ns});
  }
  return out;
}

void RestoreIteration(Schedule& schedule, const IterationTimes& times) {
  for (size_t i = 0; i < schedule.tasks.size() && i < times.size(); ++i) {
    ScheduledTask& t = schedule.tasks[i];
    t.raw_start_ns = times[i].raw_start_ns;
    t.raw_end_ns = times[i].raw_end_ns;
    t.cal_start_ns = times[i].cal_start_ns;
    t.cal_end_ns = times[i].cal_end_ns;
  }
  DeriveRelativeTimes(schedule);
}

int MedianIteration(const std::vector<IterationTimes>& iterations) {
  if (iterations.empty()) return 0;
  std::vector<int> order(iterations.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> spans;
  for (const IterationTimes& it : iterations) spans.push_back(SpanUs(it));
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return spans[a] < spans[b]; });
  return order[(order.size() - 1) / 2];
}

RunTiming TimeRun(const Schedule& schedule, const std::vector<IterationTimes>& iterations, int warmup,
                  int median_iteration) {
  const std::vector<IterationTimes> own{SnapshotIteration(schedule)};
  const std::vector<IterationTimes>& its = iterations.empty() ? own : iterations;
  RunTiming r{.warmup = warmup, .iterations = static_cast<int>(its.size()),
              .median_iteration = iterations.empty() ? 0 : median_iteration};
  const size_t n = schedule.tasks.size();
  std::vector<std::vector<double>> task_us(n);
  std::vector<double> spans, totals;
  // Every iteration runs the same tasks, so an op type or node is either in
  // every iteration's totals or in none.
  std::map<std::string, std::vector<double>> type_us;
  std::map<int64_t, std::vector<double>> node_us;
  for (const IterationTimes& it : its) {
    spans.push_back(SpanUs(it));
    double total = 0;
    std::map<std::string, double> type_total;
    std::map<int64_t, double> node_total;
    for (size_t i = 0; i < n && i < it.size(); ++i) {
      if (it[i].cal_start_ns < 0) continue;
      const ScheduledTask& t = schedule.tasks[i];
      const double us = DurationUs(it[i]);
      task_us[i].push_back(us);
      total += us;
      type_total[IsCopy(t) ? kDataMovementRow : t.op_type] += us;
      if (t.desc.op_node_id >= 0 && !IsCopy(t)) node_total[t.desc.op_node_id] += us;
    }
    totals.push_back(total);
    for (const auto& [type, us] : type_total) type_us[type].push_back(us);
    for (const auto& [id, us] : node_total) node_us[id].push_back(us);
  }
  r.span = SpreadOf(spans);
  r.total_task = SpreadOf(totals);
  for (auto& v : task_us) r.tasks.push_back(SpreadOf(std::move(v)));
  for (auto& [type, v] : type_us) r.op_types[type] = SpreadOf(std::move(v));
  for (auto& [id, v] : node_us) r.nodes[id] = SpreadOf(std::move(v));
  return r;
}

std::vector<double> TaskMediansUs(const RunTiming& t) {
  std::vector<double> out;
  out.reserve(t.tasks.size());
  for (const Spread& s : t.tasks) out.push_back(s.samples > 0 ? s.median_us : -1);
  return out;
}

nlohmann::json RunTimingJson(const RunTiming& t) {
  return {{"warmup", t.warmup},
          {"iterations", t.iterations},
          {"median_iteration", t.median_iteration},
          {"statistic", "median over the timed iterations; q1, q3 their quartiles (the run's noise)"},
          {"span", SpreadJson(t.span)},
          {"total_task", SpreadJson(t.total_task)}};
}


}  // namespace opscope::graph
