// The symptom table (graph/run/run_symptoms.h): each finding from the
// schedule of the median iteration, its compiled graph and its framework graph.
#include "graph/run/run_symptoms.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/text_format.h"
#include "graph/run/node_path.h"

namespace opscope::graph {
namespace {

// Tasks no framework node asked for: kernels of nodes the compiler inserted
// (layout conversions, casts) and copies beyond one per graph input and
// output. Counted by what they are, largest first.
std::optional<SymptomFinding> InsertedTasks(const CapturedRun& run) {
  const Graph& compiled = run.model.compiled;
  std::map<std::string, std::vector<std::string>> by_what;  // what -> task titles
  int64_t copies = 0, inserted = 0;
  for (const ScheduledTask& t : run.schedule.tasks) {
    if (t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H) {
      ++copies;
      by_what[t.desc.kind == TaskKind::kMemcpyH2D ? "host-to-device copy" : "device-to-host copy"].push_back(TaskTitle(t));
      continue;
    }
    const Node* n = t.desc.op_node_id >= 0 ? compiled.FindNode(t.desc.op_node_id) : nullptr;
    if (!n || !n->fused_from.empty()) continue;
    ++inserted;
    const std::string what = n->kind == NodeKind::kTransdata ? n->op_type + " (layout " + n->layout_from + " to " + n->layout_to + ")"
                                                             : n->op_type;
    by_what[what].push_back(TaskTitle(t));
  }
  const int64_t io = static_cast<int64_t>(compiled.inputs().size() + compiled.outputs().size());
  if (inserted == 0 && copies <= io) return std::nullopt;  // a copy in and out per graph tensor is no symptom
  int64_t framework_ops = 0;
  for (const Node& f : run.model.framework.nodes()) framework_ops += f.op_type != "Constant";
  SymptomFinding f{.kind = "inserted_tasks"};
  f.text = std::to_string(run.schedule.tasks.size()) + " tasks for " + std::to_string(framework_ops) +
           " framework nodes: the compiler inserted " + std::to_string(inserted) + " kernel task(s) no framework node asked for" +
           (copies > io ? " and " + std::to_string(copies) + " copies for " + std::to_string(io) + " graph inputs and outputs" : "");
  std::vector<std::pair<std::string, std::vector<std::string>>> rows(by_what.begin(), by_what.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  for (const auto& [what, titles] : rows) {  // a few kinds: copies, transdata, casts
    std::string line = std::to_string(titles.size()) + " x " + what + ": " + titles[0];
    if (titles.size() > 1) line += (titles.size() > 2 ? ", ... " : ", ") + titles.back();
    f.evidence.push_back(line);
  }
  f.look = "the compiler's passes that insert nodes (layout, casts): `inspector-cli run --dump-passes` shows each pass's graph";
  return f;
}

// Framework nodes that did not run as themselves: fused (into which node),
// on a branch that did not run (which branch), resolved or folded at
// compile time. Grouped by why, the largest group first.
std::optional<SymptomFinding> NotExecuted(const CapturedRun& run) {
  std::map<std::string, std::vector<std::string>> by_why;  // "fused into X" -> framework node names
  int64_t count = 0, total = 0;
  for (const Node& n : run.model.framework.nodes()) {
    if (n.op_type == "Constant") continue;
    ++total;
    if (n.executed) continue;
    ++count;
    by_why[n.not_executed_reason.empty() ? "no reason recorded" : n.not_executed_reason].push_back(n.name.empty() ? n.op_type : n.name);
  }
  if (count == 0) return std::nullopt;
  SymptomFinding f{.kind = "not_executed",
                   .text = std::to_string(count) + " of " + std::to_string(total) +
                           " framework nodes did not run as themselves: fused into a compiled node, on a branch that did "
                           "not run, or resolved at compile time"};
  std::vector<std::pair<std::string, std::vector<std::string>>> rows(by_why.begin(), by_why.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  // Bounded: a 100,000-node model has tens of thousands of fusions.
  constexpr size_t kGroups = 8, kNames = 4;
  size_t rest = 0;
  for (size_t k = 0; k < rows.size(); ++k) {
    const auto& [why, names] = rows[k];
    if (k >= kGroups) {
      rest += names.size();
      continue;
    }
    std::string line = why + ": " + names[0];
    for (size_t i = 1; i < names.size() && i < kNames; ++i) line += ", " + names[i];
    if (names.size() > kNames) line += " and " + std::to_string(names.size() - kNames) + " more";
    f.evidence.push_back(line);
  }
  if (rest > 0) {
    f.evidence.push_back("and " + std::to_string(rows.size() - kGroups) + " more groups of " + std::to_string(rest) +
                         " nodes (graph.json has every node's reason)");
  }
  f.look = "graph.json: each framework node's executed and reason, and the compiled node it maps to (`inspector-cli path --node NAME`)";
  return f;
}

// Copies that dominate the run. 30% of the span on copies nothing overlaps
// is the share at which overlapping them would visibly shorten the run; the
// 1 MiB floor keeps a model with a few tiny tensors (whose copies are fixed
// cost, judged below) out of it.
constexpr double kExposedShare = 0.3;
constexpr double kDominatingBytes = 1 << 20;
// Many small copies one way: eight or more, the median at most 64 KiB, and
// (when the run knows its memory bandwidth) taking at least 4x the time
// their bytes need at it: three quarters of their time is the copies' fixed
// cost. Measured time only grows on a loaded machine, so a run that shows it
// shows it under any load.
constexpr size_t kManyCopies = 8;
constexpr double kSmallCopyBytes = 64 << 10;
constexpr double kFixedCostFactor = 4;

using Interval = std::pair<int64_t, int64_t>;  // [start, end) on the calibrated clock, ns

std::vector<Interval> Merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.first <= out.back().second) out.back().second = std::max(out.back().second, i.second);
    else out.push_back(i);
  }
  return out;
}

// How much of [a, b) the merged intervals cover.
int64_t Covered(int64_t a, int64_t b, const std::vector<Interval>& merged) {
  int64_t covered = 0;
  for (const Interval& m : merged) {
    if (m.first >= b) break;
    covered += std::max<int64_t>(0, std::min(b, m.second) - std::max(a, m.first));
  }
  return covered;
}

bool Timed(const ScheduledTask& t) { return t.cal_start_ns >= 0 && t.cal_end_ns >= t.cal_start_ns; }
bool IsCopyTask(const ScheduledTask& t) {
  return t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H;
}
double Percent(double part, double whole) { return whole > 0 ? 100 * part / whole : 0; }
std::string Pct(double part, double whole) {
  char s[32];
  std::snprintf(s, sizeof s, "%.0f%%", Percent(part, whole));
  return s;
}

std::optional<SymptomFinding> DataMovement(const CapturedRun& run) {
  const Schedule& s = run.schedule;
  int64_t first = INT64_MAX, last = INT64_MIN;
  std::vector<Interval> compute;
  for (const ScheduledTask& t : s.tasks) {
    if (!Timed(t)) continue;
    first = std::min(first, t.cal_start_ns);
    last = std::max(last, t.cal_end_ns);
    if (!IsCopyTask(t)) compute.push_back({t.cal_start_ns, t.cal_end_ns});
  }
  if (first >= last) return std::nullopt;
  const double span_us = static_cast<double>(last - first) / 1e3;
  compute = Merged(std::move(compute));

  struct StreamCopies {
    int count = 0;
    double busy_us = 0, exposed_us = 0, bytes = 0;
  };
  struct Direction {
    std::vector<double> bytes, us;
    std::vector<std::string> titles;
  };
  std::map<int, StreamCopies> streams;
  std::map<TaskKind, Direction> ways;
  std::vector<Interval> copies;
  const ScheduledTask* largest = nullptr;
  double largest_bytes = -1, all_bytes = 0;
  for (const ScheduledTask& t : s.tasks) {
    if (!Timed(t) || !IsCopyTask(t)) continue;
    const Value* v = run.model.compiled.FindValue(t.value);
    const double bytes = v && v->bytes() > 0 ? static_cast<double>(v->bytes()) : 0;
    const double us = static_cast<double>(t.cal_end_ns - t.cal_start_ns) / 1e3;
    StreamCopies& c = streams[t.desc.stream_id];
    ++c.count;
    c.busy_us += us;
    c.exposed_us += static_cast<double>(t.cal_end_ns - t.cal_start_ns - Covered(t.cal_start_ns, t.cal_end_ns, compute)) / 1e3;
    c.bytes += bytes;
    all_bytes += bytes;
    Direction& d = ways[t.desc.kind];
    d.bytes.push_back(bytes);
    d.us.push_back(us);
    d.titles.push_back(TaskTitle(t));
    copies.push_back({t.cal_start_ns, t.cal_end_ns});
    if (bytes > largest_bytes) largest = &t, largest_bytes = bytes;
  }
  if (copies.empty()) return std::nullopt;
  double exposed_us = 0;  // copy time (any stream) with no compute beside it
  for (const Interval& c : Merged(std::move(copies))) {
    exposed_us += static_cast<double>(c.second - c.first - Covered(c.first, c.second, compute)) / 1e3;
  }

  SymptomFinding f{.kind = "data_movement"};
  const bool dominates = all_bytes >= kDominatingBytes && exposed_us >= kExposedShare * span_us;
  if (dominates) {
    f.text = "data movement dominates: copies take " + FormatMicros(exposed_us) + " of the " + FormatMicros(span_us) +
             " span (" + Pct(exposed_us, span_us) + ") with no compute beside them";
    for (const auto& [id, c] : streams) {
      f.evidence.push_back("stream " + StreamName(s, id) + ": " + std::to_string(c.count) + " copies of " +
                           FormatBytes(c.bytes) + " in " + FormatMicros(c.busy_us) + ", " + FormatMicros(c.exposed_us) +
                           " (" + Pct(c.exposed_us, c.busy_us) + ") overlapping no compute");
    }
    const double us = static_cast<double>(largest->cal_end_ns - largest->cal_start_ns) / 1e3;
    char rate[64];
    std::snprintf(rate, sizeof rate, "%.2f GB/s", us > 0 ? largest_bytes / us / 1e3 : 0.0);
    f.evidence.push_back("the largest: " + TaskTitle(*largest) + ", " + FormatBytes(largest_bytes) + " in " +
                         FormatMicros(us) + " (" + rate + ")");
  }
  for (const auto& [kind, d] : ways) {
    if (d.bytes.size() < kManyCopies) continue;
    std::vector<double> sorted_bytes = d.bytes, sorted_us = d.us;
    std::sort(sorted_bytes.begin(), sorted_bytes.end());
    std::sort(sorted_us.begin(), sorted_us.end());
    const double median_bytes = sorted_bytes[sorted_bytes.size() / 2], median_us = sorted_us[sorted_us.size() / 2];
    double total_us = 0, total_bytes = 0;
    for (size_t i = 0; i < d.us.size(); ++i) total_us += d.us[i], total_bytes += d.bytes[i];
    const double bandwidth_gbs = run.peaks ? run.peaks->bandwidth_gbs : 0;
    const double need_us = bandwidth_gbs > 0 ? total_bytes / bandwidth_gbs / 1e3 : 0;
    if (median_bytes > kSmallCopyBytes || (bandwidth_gbs > 0 && total_us < kFixedCostFactor * need_us)) continue;
    const std::string way = kind == TaskKind::kMemcpyH2D ? "host-to-device" : "device-to-host";
    const std::string line = std::to_string(d.bytes.size()) + " " + way + " copies of " + FormatBytes(median_bytes) +
                             " (median) each pay a copy's fixed cost: " + FormatMicros(median_us) + " per copy, " +
                             FormatMicros(total_us) + " in all (" + Pct(total_us, span_us) + " of the span) for " +
                             FormatBytes(total_bytes);
    if (f.text.empty()) f.text = "copies split finer than their cost warrants: " + line;
    else f.evidence.push_back(line);
    std::string names = d.titles[0] + ", " + d.titles[1] + (d.titles.size() > 2 ? ", ... " + d.titles.back() : "");
    if (bandwidth_gbs > 0) {
      char need[96];
      std::snprintf(need, sizeof need, "at the %.1f GB/s memory bandwidth their bytes need %s", bandwidth_gbs,
                    FormatMicros(need_us).c_str());
      f.evidence.push_back(std::string(need) + ": " + names);
    } else {
      f.evidence.push_back(names);
    }
  }
  if (f.text.empty()) return std::nullopt;
  f.look = "the copy stream on the timeline (trace.json; colour: op type, data movement): overlap the copies with "
           "compute (more --streams, inputs copied ahead), keep tensors on the device across iterations, or stack "
           "small inputs into one tensor";
  return f;
}

// A wait across streams seen backwards: the waiting task starting before
// the task it waits on has ended. Ordered by an event, so on one clock it
// never happens; past 1 us on the calibrated clock, the streams' time bases
// disagree and every cross-stream reading of the timeline is off by as much.
constexpr int64_t kBackwardsSlackNs = 1000;

std::optional<SymptomFinding> TimeBases(const CapturedRun& run) {
  const Schedule& s = run.schedule;
  struct Pair {
    int waits = 0;
    int64_t worst_after = INT64_MIN, worst_before = INT64_MIN;
    const ScheduledTask *producer = nullptr, *consumer = nullptr;
  };
  std::map<std::pair<int, int>, Pair> pairs;  // (producer stream, consumer stream)
  for (const ScheduledTask& t : s.tasks) {
    if (!Timed(t)) continue;
    for (int64_t d : t.deps) {
      if (d < 0 || d >= static_cast<int64_t>(s.tasks.size())) continue;
      const ScheduledTask& p = s.tasks[static_cast<size_t>(d)];
      if (!Timed(p) || p.desc.stream_id == t.desc.stream_id) continue;
      Pair& pr = pairs[{p.desc.stream_id, t.desc.stream_id}];
      ++pr.waits;
      const int64_t after = p.cal_end_ns - t.cal_start_ns;
      if (after > pr.worst_after) pr.worst_after = after, pr.producer = &p, pr.consumer = &t;
      if (p.raw_end_ns >= 0 && t.raw_start_ns >= 0) pr.worst_before = std::max(pr.worst_before, p.raw_end_ns - t.raw_start_ns);
    }
  }
  const Pair* worst = nullptr;
  for (const auto& [key, pr] : pairs) {
    if (pr.worst_after > kBackwardsSlackNs && (!worst || pr.worst_after > worst->worst_after)) worst = &pr;
  }
  if (!worst) return std::nullopt;
  const auto us = [](int64_t ns) { return (ns < 0 ? "-" : "") + FormatMicros(static_cast<double>(ns < 0 ? -ns : ns) / 1e3); };
  SymptomFinding f{.kind = "time_bases"};
  f.text = "the streams' time bases disagree: " + TaskTitle(*worst->consumer) + " on " +
           StreamName(s, worst->consumer->desc.stream_id) + " starts " + us(worst->worst_after) + " before " +
           TaskTitle(*worst->producer) + " on " + StreamName(s, worst->producer->desc.stream_id) +
           ", which it waits for, has ended";
  for (const auto& [key, pr] : pairs) {
    const auto overlap = [&](int64_t ns) { return ns > 0 ? "starts up to " + us(ns) + " early" : "in order (" + us(-ns) + " apart at the closest)"; };
    std::string line = StreamName(s, key.second) + " waiting on " + StreamName(s, key.first) + ": " +
                       std::to_string(pr.waits) + " wait(s); calibrated, the waiting task " + overlap(pr.worst_after);
    if (pr.worst_before != INT64_MIN) line += "; on the raw clocks, " + overlap(pr.worst_before);
    f.evidence.push_back(line);
  }
  // What the calibration did to each stream: its correction at the stream's
  // first and last task (the offset, and the drift between them).
  std::map<int, std::pair<const ScheduledTask*, const ScheduledTask*>> ends;
  for (const ScheduledTask& t : s.tasks) {
    if (!Timed(t) || t.raw_start_ns < 0) continue;
    auto& [a, b] = ends[t.desc.stream_id];
    if (!a || t.raw_start_ns < a->raw_start_ns) a = &t;
    if (!b || t.raw_start_ns > b->raw_start_ns) b = &t;
  }
  for (const auto& [id, e] : ends) {
    const int64_t at_first = e.first->cal_start_ns - e.first->raw_start_ns, at_last = e.second->cal_start_ns - e.second->raw_start_ns;
    f.evidence.push_back("stream " + StreamName(s, id) + ": the calibration moved its clock by " + us(at_first) +
                         " at its first task and " + us(at_last) + " at its last");
  }
  f.look = "the clock calibration (graph/runtime/stream_clock.h: each stream read against the host before and after "
           "the run): a clock that jumps between the anchors, or a trace merged from tools on different clocks; "
           "until then, do not read cross-stream overlap off the timeline";
  return f;
}

// A fused kernel that also writes out a tensor from inside its group, for
// other nodes to read: the fusion saved no memory traffic for it, and a
// kernel built around keeping it in registers now stores and reloads it.
// This compiler's fusions take chains whose links feed only the next, so
// its own graphs never show it; a compiled graph from elsewhere can.
std::optional<SymptomFinding> OverFusion(const CapturedRun& run) {
  const Graph& compiled = run.model.compiled;
  const Graph& framework = run.model.framework;
  std::vector<std::string> lines;
  double total_bytes = 0;
  int nodes = 0;
  for (const Node& n : compiled.nodes()) {
    if (n.fused_from.size() < 2 || n.outputs.size() < 2) continue;
    std::set<int64_t> group(n.fused_from.begin(), n.fused_from.end());
    std::string line;
    for (const std::string& out : n.outputs) {
      const Value* fv = out.empty() ? nullptr : framework.FindValue(out);
      const Value* cv = out.empty() ? nullptr : compiled.FindValue(out);
      if (!fv || !cv || fv->producer < 0 || !group.count(fv->producer)) continue;
      // Inside the group: some framework node of the group reads it on.
      bool read_inside = false;
      for (int64_t c : fv->consumers) read_inside |= group.count(c) > 0;
      if (!read_inside || cv->consumers.empty()) continue;
      std::vector<std::string> readers;
      for (int64_t c : cv->consumers) {
        if (const Node* r = compiled.FindNode(c)) readers.push_back(r->name.empty() ? r->op_type : r->name);
      }
      const int64_t bytes = cv->bytes();
      total_bytes += bytes > 0 ? static_cast<double>(bytes) : 0;
      line += (line.empty() ? "" : "; ") + out + " (" + (bytes > 0 ? FormatBytes(static_cast<double>(bytes)) : "size unknown") +
              ", read again by " + JoinStrings(readers, ", ") + ")";
    }
    if (line.empty()) continue;
    ++nodes;
    lines.push_back((n.name.empty() ? n.op_type : n.name) + " (" + n.op_type + ", " + std::to_string(n.fused_from.size()) +
                    " framework nodes) writes out " + line);
  }
  if (lines.empty()) return std::nullopt;
  SymptomFinding f{.kind = "over_fusion"};
  f.text = std::to_string(nodes) + " fused node(s) write intermediate results of their group back to memory for later "
           "nodes to read (" + FormatBytes(total_bytes) + " per iteration): the fusion kept them in memory after all";
  f.evidence = std::move(lines);
  f.look = "the fusion pass that made them (`inspector-cli run --dump-passes`): a group should end where a value "
           "leaves it, or the value be recomputed by its readers";
  return f;
}

}  // namespace

std::vector<SymptomFinding> FindSymptoms(const CapturedRun& run) {
  std::vector<SymptomFinding> out;
  for (auto finding : {InsertedTasks(run), NotExecuted(run), DataMovement(run), TimeBases(run), OverFusion(run)}) {
    if (finding) out.push_back(std::move(*finding));
  }
  return out;
}

}  // namespace opscope::graph
