// Trustworthy timing and diff: `inspector-cli run --warmup W --iterations K`
// keeps every iteration and reports medians with their quartiles; `diff`
// weighs a change against both runs' noise, refuses two different models and
// writes diff.json only where --output says; `path --node` shows tensors and
// cut trees; `summary --top` bounds its tables. The real binary on the
// example models; the medians are recomputed here from capture.json's raw
// per-iteration times, and the noise rule is fed times made up here.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/text_format.h"
#include "graph/export/capture_json.h"
#include "graph/run/captured_run.h"
#include "graph/run/run_diff.h"
#include "graph/run/run_summary.h"
#include "graph/run/summary.h"
#include "inspector_tool_test.h"
#include "onnx/onnx_pb.h"
#include "graph_json_test_util.h"
#include "tool_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using opscope::graph::Judge;
using opscope::graph::Spread;
using Result = ::opscope::testing::ToolResult;
using namespace ::opscope::testing;  // tool_test_util.h

class InspectorTiming : public ::opscope::testing::InspectorToolTest {
 protected:
  // Fixed roofs: no test waits for a calibration.
  std::string RunModel(const std::string& model, const std::string& out_name, const std::string& extra = "") {
    const std::string out = (dir_ / out_name).string();
    Result r = Run("run " + model + " --output-dir " + out + " --peak-bw 10 --peak-flops 50 " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return out;
  }
};

// The median as a statistics text defines it, apart from the code under test.
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double Us(const json& ns_pair_end, const json& ns_pair_start) {
  return (ns_pair_end.get<double>() - ns_pair_start.get<double>()) / 1e3;
}

TEST_F(InspectorTiming, RunKeepsEveryIterationAndReportsMedians) {
  const fs::path out = RunModel(Model("two_branch.onnx"), "run", "--warmup 2 --iterations 5");
  const json capture = json::parse(Slurp(out / "capture.json"));
  EXPECT_EQ(capture["iterations"], 5);
  EXPECT_EQ(capture["warmup"], 2);
  const json& tasks = capture["tasks"];
  ASSERT_FALSE(tasks.empty());
  // Per iteration, from the raw record: the span and the sum of task times.
  std::vector<double> spans(5), totals(5);
  for (int k = 0; k < 5; ++k) {
    double first = 1e300, last = -1e300;
    for (const json& t : tasks) {
      ASSERT_EQ(t["iterations_ns"].size(), 5u);
      const json& x = t["iterations_ns"][k];  // raw start, raw end, calibrated start, end
      first = std::min(first, x[2].get<double>());
      last = std::max(last, x[3].get<double>());
      totals[k] += Us(x[3], x[2]);
    }
    spans[k] = (last - first) / 1e3;
  }
  // Iterations are really distinct measurements, not one copied five times.
  EXPECT_GT(*std::max_element(totals.begin(), totals.end()), *std::min_element(totals.begin(), totals.end()));

  const json summary = json::parse(Slurp(out / "summary.json"));
  EXPECT_EQ(summary["timing"]["iterations"], 5);
  EXPECT_EQ(summary["timing"]["warmup"], 2);
  double sum_of_medians = 0;
  for (const json& t : tasks) {
    std::vector<double> durations;
    for (const json& x : t["iterations_ns"]) durations.push_back(Us(x[3], x[2]));
    sum_of_medians += Median(durations);
  }
  EXPECT_NEAR(summary["total_task_us"].get<double>(), sum_of_medians, 1e-6);
  EXPECT_NEAR(summary["timing"]["total_task"]["median_us"].get<double>(), Median(totals), 1e-6);
  EXPECT_NEAR(summary["timing"]["span"]["median_us"].get<double>(), Median(spans), 1e-6);
  const json& q = summary["timing"]["span"];
  EXPECT_LE(q["q1_us"].get<double>(), q["median_us"].get<double>());
  EXPECT_LE(q["median_us"].get<double>(), q["q3_us"].get<double>());

  // The trace is the median iteration, each event carrying its task's median.
  const int m = capture["median_iteration"].get<int>();
  ASSERT_GE(m, 0);
  ASSERT_LT(m, 5);
  EXPECT_DOUBLE_EQ(spans[m], Median(spans));  // five iterations: the median span is one that ran
  const json trace = json::parse(Slurp(out / "trace.json"));
  EXPECT_EQ(trace["otherData"]["timing"]["median_iteration"], m);
  int events = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++events;
    const json& t = tasks[e["args"]["task_id"].get<size_t>()];
    EXPECT_NEAR(e["dur"].get<double>(), Us(t["iterations_ns"][m][3], t["iterations_ns"][m][2]), 1.1e-3);
    std::vector<double> durations;
    for (const json& x : t["iterations_ns"]) durations.push_back(Us(x[3], x[2]));
    EXPECT_NEAR(e["args"]["median_us"].get<double>(), Median(durations), 1e-6);
    EXPECT_EQ(e["args"]["iterations"], 5);
    EXPECT_LE(e["args"]["q1_us"].get<double>(), e["args"]["q3_us"].get<double>());
  }
  EXPECT_EQ(events, static_cast<int>(tasks.size()));

  const json graph = ReadGraphJson(out / "graph.json");
  EXPECT_EQ(graph["timing"]["iterations"], 5);
  int timed_nodes = 0;
  for (const json& n : graph["compiled"]["nodes"]) {
    if (!n.contains("time_us")) continue;
    ++timed_nodes;
    EXPECT_EQ(n["time_us"]["samples"], 5);
  }
  EXPECT_GT(timed_nodes, 0);

  Result text = Run("run " + Model("two_branch.onnx") + " --output-dir " + (dir_ / "text").string() +
                    " --peak-bw 10 --peak-flops 50 --iterations 3 --warmup 0");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("3 timed iteration(s) after 0 warm-up"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--warmup 0 --iterations 3"), std::string::npos) << text.out;  // the repro line
  ExpectUsageError(Run("run " + Model("two_branch.onnx") + " --output-dir " + (dir_ / "bad").string() +
                         " --warmup -1"),
                     "--warmup -1: expected >= 0");
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

// Every table of a summary is built from one figure per task, its median
// over the iterations, recomputed here from capture.json's raw record: the
// op types add up to the total, the time-lost table's measured time is the
// op type's total, and a task's efficiency is its bound over the median
// printed beside it (not over the one iteration the schedule holds).
TEST_F(InspectorTiming, TheSummaryTablesAgreeWithEachOtherAndWithCaptureJson) {
  const fs::path out = RunModel(Model("transformer_block.onnx"), "tables", "--iterations 5");
  const json capture = json::parse(Slurp(out / "capture.json"));
  const json graph = ReadGraphJson(out / "graph.json");
  std::map<int64_t, std::string> type_of_node;
  for (const json& n : graph["compiled"]["nodes"]) type_of_node[n["node_id"].get<int64_t>()] = n["op_type"];
  std::map<int64_t, double> median_of_task;
  std::map<std::string, double> type_total;
  double total = 0;
  for (const json& t : capture["tasks"]) {
    std::vector<double> durations;
    for (const json& x : t["iterations_ns"]) durations.push_back(Us(x[3], x[2]));
    const double m = Median(durations);
    median_of_task[t["task_id"].get<int64_t>()] = m;
    const int64_t node = t["node_id"].get<int64_t>();
    type_total[node < 0 ? "data movement" : type_of_node.at(node)] += m;
    total += m;
  }
  const json summary = json::parse(Slurp(out / "summary.json"));
  EXPECT_NE(summary.value("figures", "").find("sums of those medians"), std::string::npos);
  EXPECT_NEAR(summary["total_task_us"].get<double>(), total, 1e-6);
  double types = 0;
  std::map<std::string, int64_t> type_count;
  for (const json& r : summary["op_types"]) {
    const std::string type = r["op_type"];
    EXPECT_NEAR(r["total_us"].get<double>(), type_total.at(type), 1e-6) << type;
    type_count[type] = r["count"];
    types += r["total_us"].get<double>();
  }
  EXPECT_NEAR(types, total, 1e-6);

  ASSERT_TRUE(summary.contains("roofline"));
  std::map<std::string, double> bounded_measured;
  for (const json& t : summary["roofline"]["tasks"]) {
    const double m = median_of_task.at(t["task_id"].get<int64_t>());
    EXPECT_NEAR(t["duration_us"].get<double>(), m, 1e-6);
    if (t["bound"] == "none") continue;
    bounded_measured[t["op_type"]] += m;
    EXPECT_NEAR(t["efficiency"].get<double>(), t["lower_bound_us"].get<double>() / m, 1e-9);
  }
  int whole_types = 0;
  for (const json& l : summary["roofline"]["lost_by_op_type"]) {
    const std::string type = l["op_type"];
    EXPECT_NEAR(l["measured_us"].get<double>(), bounded_measured.at(type), 1e-6) << type;
    if (l["count"] != type_count.at(type)) continue;  // some of its tasks without a bound
    ++whole_types;
    EXPECT_NEAR(l["measured_us"].get<double>(), type_total.at(type), 1e-6) << type;
  }
  EXPECT_GE(whole_types, 3);
  ASSERT_FALSE(summary["top_tasks"].empty());
  for (const json& t : summary["top_tasks"]) {
    const double m = median_of_task.at(t["task_id"].get<int64_t>());
    EXPECT_NEAR(t["duration_us"].get<double>(), m, 1e-6);
    if (t["efficiency"].is_number()) {
      EXPECT_NEAR(t["efficiency"].get<double>(), t["lower_bound_us"].get<double>() / m, 1e-9) << t["name"];
    }
  }
}

TEST(DiffJudge, AChangeCountsOnlyBeyondTheThresholdAndTheNoise) {
  const Spread tight{.median_us = 100, .q1_us = 98, .q3_us = 102, .samples = 5};
  const Spread wide_slower{.median_us = 130, .q1_us = 90, .q3_us = 170, .samples = 5};
  const Spread apart_slower{.median_us = 130, .q1_us = 125, .q3_us = 135, .samples = 5};
  const Spread apart_faster{.median_us = 70, .q1_us = 65, .q3_us = 75, .samples = 5};
  const Spread small_change{.median_us = 105, .q1_us = 104, .q3_us = 106, .samples = 5};
  const Spread zero{};
  EXPECT_EQ(Judge(tight, small_change, 10, true), "unchanged");
  EXPECT_EQ(Judge(tight, wide_slower, 10, true), "within noise");   // +30%, but the quartiles overlap
  EXPECT_EQ(Judge(tight, apart_slower, 10, true), "slower");
  EXPECT_EQ(Judge(tight, apart_slower, 40, true), "unchanged");      // inside a larger threshold
  EXPECT_EQ(Judge(tight, apart_faster, 10, true), "faster");
  EXPECT_EQ(Judge(zero, tight, 10, true), "new");                    // not "+100%", nor infinite
  EXPECT_EQ(Judge(tight, zero, 10, true), "gone");
  EXPECT_EQ(Judge(tight, wide_slower, 10, false), "slower");         // noise unknown: the threshold decides
}

// Times made up on a real run's schedule: stretched beyond the noise is a
// regression; the same growth with a scatter as large is not.
TEST_F(InspectorTiming, DiffWeighsTheSpanAgainstBothRunsNoise) {
  const std::string a = RunModel(Model("two_branch.onnx"), "a", "--iterations 5");
  auto base = opscope::graph::LoadCapture(a);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  // Iteration k of the base takes (1 + 0.01 k) times as long; `now` scales that.
  auto stretch = [](opscope::graph::CapturedRun& run, const std::vector<double>& factors) {
    ASSERT_EQ(run.iteration_times.size(), factors.size());
    for (size_t k = 0; k < factors.size(); ++k) {
      auto& it = run.iteration_times[k];
      int64_t origin = INT64_MAX;
      for (const auto& t : it) origin = std::min(origin, t.cal_start_ns);
      for (auto& t : it) {
        t.cal_start_ns = origin + static_cast<int64_t>((t.cal_start_ns - origin) * factors[k]);
        t.cal_end_ns = origin + static_cast<int64_t>((t.cal_end_ns - origin) * factors[k]);
      }
    }
  };
  // Every iteration alike first, so that only the factors below differ; a
  // quiet machine on both sides (whatever ran beside this test).
  for (auto& it : base->iteration_times) it = base->iteration_times[0];
  base->other_cpu_share = 0;
  opscope::graph::CapturedRun steady = *base, slower = *base, noisy = *base;
  stretch(steady, {1.00, 1.01, 1.02, 1.03, 1.04});
  stretch(slower, {1.50, 1.51, 1.52, 1.53, 1.54});
  stretch(noisy, {0.90, 1.00, 1.50, 2.00, 2.10});  // median 1.5 too, but quartiles 1.0 .. 2.0

  const auto regressed = opscope::graph::DiffRuns(steady, slower, {.threshold_time_pct = 10});
  EXPECT_TRUE(regressed.regressed) << regressed.json.dump(1);
  EXPECT_EQ(regressed.json["span"]["verdict"], "slower");
  EXPECT_NEAR(regressed.json["span"]["change_pct"].get<double>(), 100.0 * (1.52 - 1.02) / 1.02, 0.5);
  EXPECT_TRUE(regressed.json["noise"]["known"].get<bool>());

  const auto within = opscope::graph::DiffRuns(steady, noisy, {.threshold_time_pct = 10});
  EXPECT_FALSE(within.regressed) << within.json.dump(1);
  EXPECT_EQ(within.json["span"]["verdict"], "within noise");
  EXPECT_TRUE(within.json["regressions"].empty());

  const auto same = opscope::graph::DiffRuns(steady, steady, {.threshold_time_pct = 10});
  EXPECT_FALSE(same.regressed);
  for (const json& e : same.json["op_types"]) EXPECT_EQ(e["verdict"], "unchanged") << e.dump();
  for (const json& e : same.json["node_times"]) EXPECT_EQ(e["verdict"], "unchanged") << e.dump();
  EXPECT_TRUE(same.json["changed_settings"].empty());

  // The same 50% slowdown while other processes took half the machine during
  // the new run: their time, as likely as the model's; no time is judged.
  slower.other_cpu_share = 0.5;
  const auto loaded = opscope::graph::DiffRuns(steady, slower, {.threshold_time_pct = 10});
  EXPECT_FALSE(loaded.regressed) << loaded.json.dump(1);
  EXPECT_EQ(loaded.json["span"]["verdict"], "within noise");
  EXPECT_TRUE(loaded.json["noise"]["machine_loaded"].get<bool>());
  EXPECT_NE(loaded.json["noise"]["rule"].get<std::string>().find("0% of the machine's CPU during the base run and 50% during "
                                                                   "the new one"),
            std::string::npos)
      << loaded.json["noise"].dump();
  EXPECT_FALSE(loaded.json["noise"].contains("load_unknown"));

  // A run too short for the kernel's ticks has no share: the times are
  // judged, and the diff says which side's load it could not know.
  slower.other_cpu_share = -1;
  const auto unknown = opscope::graph::DiffRuns(steady, slower, {.threshold_time_pct = 10});
  EXPECT_TRUE(unknown.regressed) << unknown.json.dump(1);
  EXPECT_FALSE(unknown.json["noise"]["machine_loaded"].get<bool>());
  EXPECT_TRUE(unknown.json["noise"]["other_cpu_share"]["new"].is_null());
  EXPECT_NE(unknown.json["noise"].value("load_unknown", "").find("not known for the new run: a run timed for under 250 ms is"),
            std::string::npos)
      << unknown.json["noise"].dump();
  EXPECT_FALSE(regressed.json["noise"].contains("load_unknown")) << "both sides' shares were given";
}

// A node 20x slower in one iteration than in the others: a variance finding
// naming both times and the likely reason, in summary.json and the text.
TEST_F(InspectorTiming, ANodeTenTimesSlowerInOneIterationIsAVarianceFinding) {
  const std::string a = RunModel(Model("two_branch.onnx"), "variance", "--iterations 5");
  auto run = opscope::graph::LoadCapture(a);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  for (auto& it : run->iteration_times) it = run->iteration_times[0];
  // The longest kernel task of a node that has only one task.
  std::map<int64_t, int> tasks_of;
  for (const auto& t : run->schedule.tasks) tasks_of[t.desc.op_node_id]++;
  int64_t id = -1, longest = 0;
  for (const auto& t : run->schedule.tasks) {
    const auto& times = run->iteration_times[0][static_cast<size_t>(t.desc.task_id)];
    if (t.desc.op_node_id >= 0 && tasks_of[t.desc.op_node_id] == 1 && times.cal_end_ns - times.cal_start_ns > longest) {
      longest = times.cal_end_ns - times.cal_start_ns, id = t.desc.task_id;
    }
  }
  ASSERT_GE(id, 0);
  ASSERT_GT(longest, 0);
  const std::string node = run->schedule.tasks[static_cast<size_t>(id)].node_name;
  // 20x, and at least 100 us longer: beyond the finding's floor of 50 us.
  const int64_t stretched = std::max<int64_t>(20 * longest, longest + 100000);
  auto slow_in = [&](size_t iteration) {
    opscope::graph::CapturedRun r = *run;
    auto& t = r.iteration_times[iteration][static_cast<size_t>(id)];
    t.cal_end_ns = t.cal_start_ns + stretched;
    return opscope::graph::SummarizeRun(r, 10).summary;
  };
  const auto middle = slow_in(2);
  ASSERT_EQ(middle.variance.size(), 1u) << opscope::graph::SummaryJson(middle)["variance"].dump(1);
  EXPECT_EQ(middle.variance[0].node, node);
  EXPECT_EQ(middle.variance[0].slowest, 2);
  EXPECT_NE(middle.variance[0].text.find("in iteration 3 of 5"), std::string::npos) << middle.variance[0].text;
  EXPECT_NE(middle.variance[0].text.find("contention or oversubscription"), std::string::npos) << middle.variance[0].text;
  const json j = opscope::graph::SummaryJson(middle);
  ASSERT_EQ(j["variance"].size(), 1u);
  EXPECT_EQ(j["variance"][0]["slowest_iteration"], 3);
  const auto first = slow_in(0);
  ASSERT_EQ(first.variance.size(), 1u);
  EXPECT_NE(first.variance[0].text.find("a first call"), std::string::npos) << first.variance[0].text;
  // Every iteration alike: no finding.
  EXPECT_TRUE(opscope::graph::SummarizeRun(*run, 10).summary.variance.empty());
}

// The same model run three times while busy loops hold every core, every
// pair diffed: none is a regression (issue 25: two of three such diffs said
// "REGRESSION span +218.5%"). The runs record what else took the machine.
TEST_F(InspectorTiming, RunsOfTheSameModelUnderLoadNeverDiffAsARegression) {
  // One busy loop per core, so the load is the same share on any machine.
  std::vector<pid_t> loops;
  const long cores = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  for (long i = 0; i < cores; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      for (volatile uint64_t x = 0;; x = x + 1) {
      }
    }
    ASSERT_GT(pid, 0);
    loops.push_back(pid);
  }
  std::vector<std::string> runs;
  // /proc/stat counts 10 ms ticks, so a run timed under 0.25 s a core has no
  // share (a run of 60 iterations, ~10 ms, read 0.2 on CI, 2026-12-06): the
  // iterations double until the run is long enough, on any machine.
  int iterations = 100;
  for (int i = 0; i < 3; ++i) {
    for (;;) {
      runs.push_back(RunModel(Model("two_branch.onnx"), "loaded" + std::to_string(i) + "_" + std::to_string(iterations),
                              "--iterations " + std::to_string(iterations)));
      const json capture = json::parse(Slurp(fs::path(runs.back()) / "capture.json"));
      if (capture["other_cpu_share"].is_number() || iterations >= 100000) break;
      runs.pop_back();
      iterations *= 2;
    }
  }
  for (pid_t pid : loops) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const json capture = json::parse(Slurp(fs::path(runs[i]) / "capture.json"));
    ASSERT_TRUE(capture["other_cpu_share"].is_number()) << runs[i];
    EXPECT_GT(capture["other_cpu_share"].get<double>(), 0.25) << "a busy loop on every core, seen as others' load";
    for (size_t k = i + 1; k < runs.size(); ++k) {
      Result d = Run("diff " + runs[i] + " " + runs[k]);
      EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
      EXPECT_EQ(d.out.find("REGRESSION"), std::string::npos) << d.out;
      EXPECT_NE(d.out.find("noise  too large to judge times: other processes took "), std::string::npos) << d.out;
      EXPECT_EQ(d.out.find("not known for"), std::string::npos) << d.out;
    }
  }
}

TEST_F(InspectorTiming, DiffRefusesOtherModelsReportsSettingsAndWritesOnlyWhereTold) {
  const std::string a = RunModel(Model("two_branch.onnx"), "a", "--iterations 3");
  const std::string b = RunModel(Model("two_branch.onnx"), "b", "--iterations 3 --streams 1");
  const std::string other = RunModel(Model("const_if.onnx"), "other", "--iterations 3");

  // The settings that make the times incomparable come first.
  Result settings = Run("diff " + a + " " + b);
  ASSERT_TRUE(settings.exit_code == 0 || settings.exit_code == 1) << settings.err;
  EXPECT_EQ(settings.out.rfind("setting changed  streams  2 -> 1\n", 0), 0u) << settings.out;
  for (const std::string& d : {a, b}) EXPECT_FALSE(fs::exists(fs::path(d) / "diff.json"));

  ExpectUsageError(Run("diff " + a + " " + other), "different models");
  ExpectUsageError(Run("diff " + a + " " + other + " --output " + (dir_ / "refused.json").string()),
                     "--allow-different-models");
  EXPECT_FALSE(fs::exists(dir_ / "refused.json"));

  const fs::path out = dir_ / "reports" / "diff.json";
  fs::create_directories(out.parent_path());
  Result allowed = Run("diff " + a + " " + other + " --allow-different-models --output " + out.string());
  EXPECT_EQ(allowed.exit_code, 1) << allowed.out << allowed.err;  // the node counts moved
  EXPECT_EQ(allowed.out.rfind("models differ", 0), 0u) << allowed.out;
  const json d = json::parse(Slurp(out));
  EXPECT_EQ(d["schema"], "opscope.diff/1");
  EXPECT_FALSE(d["models"]["same"].get<bool>());
  // Op types only one model has are "new" or "gone", never a percentage of zero.
  bool any_new = false;
  for (const json& e : d["op_types"]) {
    if (e["base"]["samples"] == 0) {
      EXPECT_EQ(e["verdict"], "new") << e.dump();
      EXPECT_TRUE(e["change_pct"].is_null()) << e.dump();
      any_new = true;
    }
  }
  EXPECT_TRUE(any_new) << d["op_types"].dump();
  // Per layer, the names only one model has, read here from each run's graph.json.
  for (const char* layer : {"framework", "compiled"}) {
    auto names = [&](const std::string& run) {
      std::set<std::string> s;
      const json graph = ReadGraphJson(fs::path(run) / "graph.json");
      for (const json& n : graph[layer]["nodes"]) s.insert(n["name"].get<std::string>());
      return s;
    };
    const std::set<std::string> in_base = names(a), in_new = names(other);
    std::vector<std::string> added, removed;
    std::set_difference(in_new.begin(), in_new.end(), in_base.begin(), in_base.end(), std::back_inserter(added));
    std::set_difference(in_base.begin(), in_base.end(), in_new.begin(), in_new.end(), std::back_inserter(removed));
    EXPECT_FALSE(added.empty() || removed.empty()) << layer;
    EXPECT_EQ(d["nodes"][layer]["added"], json(added)) << layer;
    EXPECT_EQ(d["nodes"][layer]["removed"], json(removed)) << layer;
    if (!added.empty()) {
      EXPECT_NE(allowed.out.find("  added  " + added[0] + "\n"), std::string::npos) << allowed.out;
    }
    if (!removed.empty()) {
      EXPECT_NE(allowed.out.find("  removed  " + removed[0] + "\n"), std::string::npos) << allowed.out;
    }
  }
  EXPECT_FALSE(fs::exists(fs::path(other) / "diff.json"));

  Result itself = Run("diff " + a + " " + a + " --output " + (dir_ / "self.json").string());
  EXPECT_EQ(itself.exit_code, 0) << itself.out << itself.err;
  EXPECT_EQ(json::parse(Slurp(dir_ / "self.json"))["span"]["verdict"], "unchanged");

  Result one = Run("diff " + RunModel(Model("two_branch.onnx"), "one", "--iterations 1") + " " + a);
  EXPECT_NE(one.out.find("noise unknown"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("setting changed  iterations  1 -> 3"), std::string::npos) << one.out;
}

// A folder written before capture.json kept the compiled graph is reread
// with this opscope's compiler: where that compiles the model to other tasks
// than the one that made the run (a pass added, say), the refusal names the
// first pass whose result differs and what to do.
TEST_F(InspectorTiming, AnOldRunFromAnotherCompilerNamesThePassThatDiffers) {
  const fs::path run = RunModel(Model("two_branch.onnx"), "older", "--iterations 1");
  json capture = json::parse(Slurp(run / "capture.json"));
  ASSERT_TRUE(capture.contains("compiled_graph"));
  capture.erase("compiled_graph");  // as an older opscope wrote it
  ASSERT_GE(capture["tasks"].size(), 2u);
  ASSERT_GE(capture["passes"].size(), 3u);
  // As if the run's compiler had left one node more from pass 3 on.
  capture["tasks"].erase(capture["tasks"].size() - 1);
  for (size_t i = 2; i < capture["passes"].size(); ++i) {
    capture["passes"][i]["nodes_after"] = capture["passes"][i]["nodes_after"].get<int64_t>() + 1;
  }
  const json third = capture["passes"][2];
  std::ofstream(run / "capture.json", std::ios::binary | std::ios::trunc) << capture.dump();
  ExpectUsageError(Run("summary " + run.string()),
                   "after pass 3 (" + third["name"].get<std::string>() + ") the run's graph had " +
                       std::to_string(third["nodes_after"].get<int64_t>()) + " nodes, this opscope's has " +
                       std::to_string(third["nodes_after"].get<int64_t>() - 1) +
                       " (run the model again with this opscope to compare with it)");
}

// Time lost below zero is a bound beaten: run and summary say so once, each
// op type under the roof it beat and why, and summary.json keeps the why.
TEST_F(InspectorTiming, OpTypesAboveTheirRoofAreSaidOnce) {
  const std::string low = (dir_ / "low").string(), far = (dir_ / "far").string();
  Result ran = Run("run " + Model("two_branch.onnx") + " --output-dir " + low + " --iterations 1 --peak-bw 0.000001 "
                   "--peak-flops 0.000001");
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.out.find("  above their roof (efficiency over 100%):\n    "), std::string::npos) << ran.out;
  Result below = Run("summary " + low);
  ASSERT_EQ(below.exit_code, 0) << below.err;
  // Both roofs were given by flag: no FMA peak beside them, so a beaten compute roof is a roof too low.
  const std::regex said(" op type\\(s\\) above their roof \\(eff. over 100%, time lost below 0\\):\n"
                        "(    [A-Za-z, ]+: above the (memory roof: its data came from cache, not DRAM|compute roof, which "
                        "is then too low for this machine: [^\n]*--peak-flops[^\n]*)\n)+");
  EXPECT_TRUE(std::regex_search(below.out, said)) << below.out;
  const json summary = json::parse(Slurp(fs::path(low) / "summary.json"));
  int64_t with_why = 0;
  for (const json& l : summary["roofline"]["lost_by_op_type"]) {
    EXPECT_EQ(l.contains("above_roof"), l["efficiency"].get<double>() > 1) << l.dump();
    with_why += l.contains("above_roof");
  }
  EXPECT_GT(with_why, 0);
  // Every task beat a roof given that low: the trace names which, for the page.
  const json trace = json::parse(Slurp(fs::path(low) / "trace.json"));
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || !e["args"].contains("bound") || e["args"]["bound"] == "none") continue;
    EXPECT_EQ(e["args"]["above_roof"], e["args"]["bound"] == "memory" ? "cache" : "roof_too_low") << e.dump();
  }
  Result high = Run("run " + Model("two_branch.onnx") + " --output-dir " + far + " --iterations 1 --peak-bw 1000000 "
                    "--peak-flops 1000000");
  ASSERT_EQ(high.exit_code, 0) << high.err;
  EXPECT_EQ(high.out.find("above their roof"), std::string::npos) << high.out;
  EXPECT_EQ(Run("summary " + far).out.find("above their roof"), std::string::npos);
}

// capture.json keeps the compiled graph and the schedule the run executed:
// a run compiled without a pass reads back as it ran (export rewrites its
// graph.json unchanged), and diff against a run with the pass says which
// pass the compilers differ by and what it fused. With the same passes, a
// pass whose node count differs is named as another version of the compiler.
TEST_F(InspectorTiming, ARunWithoutAPassIsReadAsItRanAndDiffNamesThePass) {
  const fs::path full = RunModel(Model("resnet_small.onnx"), "full", "--iterations 2");
  const fs::path lean = RunModel(Model("resnet_small.onnx"), "lean", "--iterations 2 --disable-pass bias_activation_fusion");
  const json capture = json::parse(Slurp(lean / "capture.json"));
  const std::string graph_before = Slurp(lean / "graph.json");
  Result exported = Run("export --input-dir " + lean.string());
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(Slurp(lean / "graph.json"), graph_before) << "the folder was read with another graph than it ran";
  const json graph = json::parse(graph_before);
  ASSERT_EQ(graph["passes"].size(), 9u);
  int64_t relus = 0;
  for (const json& t : capture["tasks"]) relus += t["op_type"] == "Relu";
  EXPECT_GT(relus, 0) << "without bias_activation_fusion the Relus run alone";
  Result summary = Run("summary " + lean.string());
  EXPECT_NE(summary.out.find("\ncompiled without bias_activation_fusion, which this opscope runs\n"), std::string::npos)
      << summary.out;
  EXPECT_EQ(Run("summary " + full.string()).out.find("compiled without"), std::string::npos);

  Result d = Run("diff " + full.string() + " " + lean.string() + " --output " + (dir_ / "d.json").string());
  EXPECT_EQ(d.exit_code, 1) << d.out << d.err;  // more compiled nodes: a regression by the node threshold
  EXPECT_NE(d.out.find("compiler  the new run was compiled without bias_activation_fusion\n"), std::string::npos)
      << d.out;
  const json dj = json::parse(Slurp(dir_ / "d.json"));
  EXPECT_EQ(dj["compiler"]["left_out_by_new"], json::array({"bias_activation_fusion"}));
  EXPECT_EQ(dj["compiler"]["added_by_new"], json::array());
  // The residual block's conv keeps its BatchNormalization (conv_bn_folding) but not its Add and Relu.
  EXPECT_NE(std::find(dj["fusions"]["changed"].begin(), dj["fusions"]["changed"].end(),
                      json{{"node", "/layer1/block2/conv/Conv"},
                           {"base", "FusedConv <- Conv BatchNormalization Add Relu"},
                           {"new", "Conv <- Conv BatchNormalization"}}),
            dj["fusions"]["changed"].end())
      << dj["fusions"].dump();
  Result back = Run("diff " + lean.string() + " " + full.string());
  EXPECT_NE(back.out.find("compiler  the base run was compiled without bias_activation_fusion\n"), std::string::npos)
      << back.out;

  // The same passes, one of which left another count: as a folder from another opscope would read.
  json other = json::parse(Slurp(full / "capture.json"));
  ASSERT_GE(other["passes"].size(), 7u);
  const json seventh = other["passes"][6];
  for (size_t i = 6; i < other["passes"].size(); ++i) {
    other["passes"][i]["nodes_after"] = other["passes"][i]["nodes_after"].get<int64_t>() + 3;
  }
  fs::copy(full, dir_ / "other");
  std::ofstream(dir_ / "other" / "capture.json", std::ios::trunc) << other.dump();
  Result versions = Run("diff " + full.string() + " " + (dir_ / "other").string());
  const std::string n = std::to_string(seventh["nodes_after"].get<int64_t>());
  EXPECT_NE(versions.out.find("compiler  pass 7 (" + seventh["name"].get<std::string>() + ") left " + n +
                              " nodes in the base run, " + std::to_string(std::stoll(n) + 3) +
                              " in the new: another version of the compiler\n"),
            std::string::npos) << versions.out << versions.err;
  Result same = Run("diff " + full.string() + " " + full.string());
  EXPECT_EQ(same.out.find("compiler  "), std::string::npos) << same.out;

  ExpectUsageError(Run("run " + Model("resnet_small.onnx") + " --output-dir " + (dir_ / "bad").string() +
                       " --disable-pass no_such_pass"),
                   "--disable-pass: unknown pass 'no_such_pass'; the passes are shape_inference, ");
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

// The graph and schedule capture.json keeps are checked against each other:
// a task naming a node the graph lacks, or depending on a later task, is one
// line naming the field.
TEST_F(InspectorTiming, AKeptScheduleThatDisagreesWithItsGraphIsNamed) {
  const fs::path run = RunModel(Model("two_branch.onnx"), "run", "--iterations 1");
  const json capture = json::parse(Slurp(run / "capture.json"));
  auto with = [&](const json& c) {
    std::ofstream(run / "capture.json", std::ios::trunc) << c.dump();
    return Run("summary " + run.string());
  };
  json c = capture;
  c["tasks"][1]["node_id"] = 99999;
  ExpectUsageError(with(c), "capture.json: field tasks[1].node_id: names compiled node 99999, which compiled_graph lacks");
  c = capture;
  c["tasks"][1]["deps"] = {5};
  ExpectUsageError(with(c), "capture.json: field tasks[1].deps[0]: expected an earlier task's id");
  c = capture;
  c["tasks"][1]["events"] = {-1, 100000};
  ExpectUsageError(with(c), "capture.json: field tasks[1].events[1]: expected -1 or an event id below num_events");
  c = capture;
  c["compiled_graph"]["nodes"][0]["inputs"] = {"nowhere"};
  ExpectUsageError(with(c), "capture.json: field compiled_graph: ");
  EXPECT_EQ(with(capture).exit_code, 0);
}

TEST_F(InspectorTiming, PathShowsTensorsAndTreesCutAtTheDepth) {
  const std::string out = RunModel(Model("two_branch.onnx"), "run", "--iterations 1");
  Result deep = Run("path " + out + " --node /join/concat/Concat --json --depth 50");
  ASSERT_EQ(deep.exit_code, 0) << deep.err;
  const json j = json::parse(deep.out);
  const json& f = j["framework"];
  ASSERT_FALSE(f["inputs"].empty());
  for (const json& t : f["inputs"]) {
    EXPECT_TRUE(t["shape"].is_string()) << t.dump();  // "[1,8]": every shape of this model is known
    EXPECT_TRUE(t["from"].is_string()) << t.dump();
  }
  ASSERT_EQ(f["outputs"].size(), 1u);
  EXPECT_EQ(f["outputs"][0]["to"], json::array({"/join/head/Gemm"}));
  // Deep enough, the tree holds every ancestor (each once) and cuts nothing.
  std::vector<std::string> in_tree;
  std::function<void(const json&)> walk = [&](const json& children) {
    for (const json& c : children) {
      EXPECT_FALSE(c.contains("beyond")) << c.dump();
      if (!c.value("repeat", false)) in_tree.push_back(c["node"]);
      if (c.contains("children")) walk(c["children"]);
    }
  };
  walk(f["ancestor_tree"]);
  std::vector<std::string> flat = f["ancestors"];
  std::sort(in_tree.begin(), in_tree.end());
  std::sort(flat.begin(), flat.end());
  EXPECT_EQ(in_tree, flat);

  Result shallow = Run("path " + out + " --node /join/concat/Concat --json --depth 1");
  ASSERT_EQ(shallow.exit_code, 0) << shallow.err;
  int64_t counted = 0;
  const json cut = json::parse(shallow.out);
  for (const json& c : cut["framework"]["ancestor_tree"]) {
    EXPECT_FALSE(c.contains("children")) << c.dump();
    counted += 1 + c.value("beyond", int64_t{0});
  }
  // Two branches into the join share no node, so the cut counts add up to all ancestors.
  EXPECT_EQ(counted, static_cast<int64_t>(flat.size()));

  Result text = Run("path " + out + " --node /join/concat/Concat --depth 1");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("more beyond (--depth)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  inputs ("), std::string::npos) << text.out;
  ExpectUsageError(Run("path " + out + " --node /join/concat/Concat --depth 0"), "--depth 0: expected >= 1");
  ExpectUsageError(Run("path " + out + " --node /join/head/Gem"), "closest: /join/head/Gemm");
}

// x -> Relu (a long name) -> y, so that the tables must cut it.
std::string WriteLongNameModel(const fs::path& path, const std::string& name) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("long");
  for (const auto& [info, value] : {std::pair{g->add_input(), "x"}, std::pair{g->add_output(), "y"}}) {
    info->set_name(value);
    auto* t = info->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {4, 256}) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->set_name(name);
  n->add_input("x");
  n->add_output("y");
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path.string();
}

TEST_F(InspectorTiming, SummaryTopBoundsEveryTableAndCutsNamesInTheMiddle) {
  const std::string start = "/encoder/layer.11/attention/self/", end = "/output/dense/Relu";
  const std::string name = start + std::string(60, 'm') + end;
  const std::string out = RunModel(WriteLongNameModel(dir_ / "long.onnx", name), "run", "--iterations 3");
  Result r = Run("summary " + out + " --top 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The tables come before the suspects, whose sentences name the node whole.
  auto tables = [](const std::string& text) { return text.substr(0, text.find("\nsuspects")); };
  EXPECT_EQ(tables(r.out).find(name), std::string::npos) << "the whole name was printed:\n" << r.out;
  // The start and the end of the name survive, its middle does not.
  const std::string cut = opscope::CutMiddle(name + " (Relu)", 40);
  EXPECT_EQ(cut.size(), 40u);
  EXPECT_EQ(cut.rfind("/encoder/layer.11/", 0), 0u) << cut;
  EXPECT_NE(cut.find("dense/Relu (Relu)"), std::string::npos) << cut;
  // All three tasks listed, the Relu among them: the next column where it belongs.
  Result three = Run("summary " + out + " --top 3");
  ASSERT_EQ(three.exit_code, 0) << three.err;
  EXPECT_NE(three.out.find(cut + " stream"), std::string::npos) << three.out;
  EXPECT_EQ(tables(three.out).find(name), std::string::npos) << three.out;
  // Two op types (Relu, data movement), three streams, three tasks on the
  // critical path: each table shows one row and counts the rest.
  EXPECT_NE(r.out.find("\ntop 1 tasks\n"), std::string::npos) << r.out;
  size_t more = 0;
  for (size_t at = 0; (at = r.out.find(" more (--top)", at)) != std::string::npos; ++at) ++more;
  EXPECT_GE(more, 3u) << r.out;
  Result all = Run("summary " + out + " --top 100");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out.find("more (--top)"), std::string::npos) << all.out;
  ExpectUsageError(Run("summary " + out + " --top -1"), "--top -1: expected >= 0");
}

TEST(CutMiddle, KeepsBothEndsAndWholeCharacters) {
  EXPECT_EQ(opscope::CutMiddle("short", 10), "short");
  EXPECT_EQ(opscope::CutMiddle("abcdefghijklmnopqrstuvwxyz", 11), "abcd...wxyz");
  const std::string cut = opscope::CutMiddle("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 8);  // six é
  EXPECT_LE(cut.size(), 8u);
  for (size_t i = 0; i < cut.size(); ++i) {
    if (static_cast<unsigned char>(cut[i]) == 0xC3) {
      ASSERT_LT(i + 1, cut.size()) << "a character cut in two";
      EXPECT_EQ(static_cast<unsigned char>(cut[i + 1]), 0xA9);
    }
  }
}

}  // namespace
