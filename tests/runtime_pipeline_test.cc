// The runtime end to end on the example models: import, compile, schedule on
// two compute streams, execute on the cpu device, calibrate, map; then the
// trace.json and summary.json a user would open.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "graph/export/trace_json.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/run/critical_path.h"
#include "graph/run/mapping.h"
#include "graph/run/summary.h"
#include "graph/runtime/executor.h"
#include "graph/runtime/inorder_eval.h"
#include "graph/runtime/scheduler.h"
#include "graph/runtime/stream_arenas.h"
#include "opscope/npy.h"

namespace opscope::graph {
namespace {

std::string Example(const std::string& name) { return std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/" + name; }

struct Pipeline {
  Model model;
  Schedule schedule;
  ExecutionResult result;
};

void RunPipeline(const std::string& name, int streams, Pipeline& p, const std::string& save_dir = "") {
  auto imported = ImportOnnx(Example(name));
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  p.model = std::move(imported).value();
  ASSERT_TRUE(Compile(p.model).ok());
  auto s = ScheduleGraph(p.model.compiled, {.compute_streams = streams});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  p.schedule = std::move(s).value();
  auto cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok());
  auto r = Execute(p.model.compiled, p.schedule,
                   {.device = *cpu, .iterations = 2, .seed = 11, .save_outputs_dir = save_dir});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  p.result = std::move(r).value();
  ASSERT_TRUE(MapTasks(p.model, p.schedule).ok());
}

void ExpectMatchesFramework(const Pipeline& p, const std::string& name) {
  auto cpu = GetDevice("cpu");
  auto want = EvaluateInOrder(p.model.framework, p.result.inputs, *cpu);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_EQ(want->size(), p.result.outputs.size());
  for (const auto& [out, w] : *want) {
    ASSERT_TRUE(p.result.outputs.count(out)) << out;
    const Tensor& g = p.result.outputs.at(out);
    ASSERT_EQ(g.shape(), w.shape()) << name << " " << out;
    for (int64_t i = 0; i < w.numel(); ++i) {
      const double e = w.FlatGetAsDouble(i);
      ASSERT_NEAR(g.FlatGetAsDouble(i), e, 1e-4 + 1e-4 * std::fabs(e)) << name << " " << out << "[" << i << "]";
    }
  }
}

void ExpectTimesAndMapping(const Pipeline& p) {
  // Every task ran, has an op_id when it is a kernel, and its times are on one clock.
  for (const ScheduledTask& t : p.schedule.tasks) {
    EXPECT_GE(t.raw_start_ns, 0) << t.desc.task_id;
    EXPECT_GE(t.raw_end_ns, t.raw_start_ns) << t.desc.task_id;
    EXPECT_GE(t.desc.start_us, 0);
    if (t.desc.op_node_id >= 0) {
      EXPECT_NE(t.op_id, 0u) << t.node_name;
      EXPECT_FALSE(t.desc.kernel_name.empty()) << t.node_name;
    } else {
      EXPECT_NE(t.desc.label.find("inserted"), std::string::npos) << t.desc.task_id;
    }
    // The calibrated times are those of the clocks the result reports (the
    // median iteration's, whose uncertainty bounds them), not another's.
    EXPECT_EQ(t.cal_start_ns, std::llround(p.result.clocks[t.desc.stream_id].ToCommonNs(t.raw_start_ns)))
        << t.desc.task_id;
    // A task starts after every task it reads from ended: exactly on the raw
    // clock (one steady_clock on cpu), within the clocks' uncertainty once calibrated.
    for (int64_t d : t.deps) {
      const ScheduledTask& dt = p.schedule.tasks[d];
      EXPECT_GE(t.raw_start_ns, dt.raw_end_ns) << t.desc.task_id << " after " << d;
      const double slack = p.result.clocks[t.desc.stream_id].uncertainty_ns +
                           p.result.clocks[dt.desc.stream_id].uncertainty_ns + 1;
      EXPECT_GE(static_cast<double>(t.cal_start_ns) + slack, static_cast<double>(dt.cal_end_ns)) << t.desc.task_id;
    }
  }
  // On the cpu every stream reads steady_clock: the event's timestamp lies
  // inside the host's before/after bracket, so the measured offset is within
  // the calibration's own uncertainty (half the widest bracket), however long
  // a loaded machine made that bracket.
  for (const StreamClock& c : p.result.clocks) {
    EXPECT_LE(std::fabs(c.begin_offset_ns), c.uncertainty_ns + 1) << c.stream_id;
    EXPECT_LE(std::fabs(c.end_offset_ns), c.uncertainty_ns + 1) << c.stream_id;
  }
  for (const Node& c : p.model.compiled.nodes()) {
    if (c.executed) {
      EXPECT_EQ(c.mapped_task_ids.size(), 1u) << c.name;
    } else {
      EXPECT_FALSE(c.not_executed_reason.empty()) << c.name;
    }
  }
  for (const Node& f : p.model.framework.nodes()) {
    if (f.mapped_task_ids.empty()) {
      EXPECT_FALSE(f.executed) << f.name;
      EXPECT_FALSE(f.not_executed_reason.empty()) << f.name;
    } else {
      // A fused framework node maps to the task of the compiled node standing for it.
      const ScheduledTask& t = p.schedule.tasks[f.mapped_task_ids[0]];
      const Node* c = p.model.compiled.FindNode(t.desc.op_node_id);
      ASSERT_NE(c, nullptr);
      EXPECT_NE(std::find(c->fused_from.begin(), c->fused_from.end(), f.id), c->fused_from.end()) << f.name;
    }
  }
}

void ExpectValidTrace(const Pipeline& p) {
  const TraceData data = BuildTraceData(p.schedule, p.model.compiled, "cpu");
  nlohmann::json j = nlohmann::json::parse(TraceJson(data));
  EXPECT_EQ(j["schema"], "opscope.trace/1");
  std::set<int> named_tids, used_tids;
  bool process_named = false;
  std::map<int, std::vector<std::pair<double, double>>> slices;
  std::map<int64_t, std::vector<std::string>> flows;
  size_t x_events = 0;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "thread_name") named_tids.insert(e["tid"].get<int>());
      if (e["name"] == "process_name") process_named = true;
    } else if (ph == "X") {
      ++x_events;
      for (const char* k : {"task_id", "node_id", "op_id", "op_type", "kernel", "grid", "block"}) {
        EXPECT_TRUE(e["args"].contains(k)) << k << " in " << e.dump();
      }
      used_tids.insert(e["tid"].get<int>());
      slices[e["tid"]].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
    } else if (ph == "s" || ph == "f") {
      flows[e["id"].get<int64_t>()].push_back(ph);
      if (ph == "f") EXPECT_EQ(e["bp"], "e");
    }
  }
  EXPECT_TRUE(process_named);
  EXPECT_EQ(x_events, p.schedule.tasks.size());
  for (int tid : used_tids) EXPECT_TRUE(named_tids.count(tid)) << "tid " << tid << " has no thread_name";
  for (const auto& [id, phs] : flows) {
    ASSERT_EQ(phs.size(), 2u) << "flow " << id;
    EXPECT_EQ(phs[0], "s");
    EXPECT_EQ(phs[1], "f");
  }
  size_t waits = 0;
  for (const ScheduledTask& t : p.schedule.tasks) waits += t.wait_events.size();
  EXPECT_EQ(flows.size(), waits);
  // Durations nest per tid: two slices are disjoint or one holds the other.
  for (auto& [tid, v] : slices) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i) {
      const bool disjoint = v[i].first >= v[i - 1].second;
      const bool nested = v[i].second <= v[i - 1].second;
      EXPECT_TRUE(disjoint || nested) << "tid " << tid << " slices partially overlap at " << v[i].first;
    }
  }
}

void ExpectValidSummary(const Pipeline& p) {
  Summary s = Summarize(p.schedule, 5);
  nlohmann::json j = nlohmann::json::parse(SummaryJson(s).dump());
  EXPECT_EQ(j["schema"], "opscope.summary/1");
  double share = 0;
  int64_t count = 0;
  bool movement = false;
  for (const auto& r : j["op_types"]) {
    share += r["share_pct"].get<double>();
    count += r["count"].get<int64_t>();
    movement |= r["data_movement"].get<bool>();
  }
  EXPECT_NEAR(share, 100.0, 1e-6);
  EXPECT_EQ(count, static_cast<int64_t>(p.schedule.tasks.size()));
  EXPECT_TRUE(movement);
  EXPECT_EQ(j["top_tasks"].size(), std::min<size_t>(5, p.schedule.tasks.size()));
  for (const StreamRow& r : s.streams) EXPECT_NEAR(r.busy_us + r.idle_us, s.span_us, 1e-6 + 1e-9 * s.span_us);
  // The critical path is a chain of dependencies or stream order, and no longer than... the sum of all tasks.
  ASSERT_FALSE(s.critical_path.task_ids.empty());
  EXPECT_LE(s.critical_path.total_us, s.total_task_us + 1e-9);
}

TEST(RuntimePipeline, ResnetSmall) {
  Pipeline p;
  RunPipeline("resnet_small.onnx", 2, p);
  ExpectMatchesFramework(p, "resnet_small");
  ExpectTimesAndMapping(p);
  ExpectValidTrace(p);
  ExpectValidSummary(p);
}

TEST(RuntimePipeline, TransformerBlock) {
  Pipeline p;
  RunPipeline("transformer_block.onnx", 2, p);
  ExpectMatchesFramework(p, "transformer_block");
  ExpectTimesAndMapping(p);
  ExpectValidTrace(p);
  ExpectValidSummary(p);
}

TEST(RuntimePipeline, TwoBranchUsesTwoStreamsWithEventWaits) {
  const std::string dir = std::string(OPSCOPE_BINARY_DIR) + "/runtime_pipeline_test_out";
  std::filesystem::remove_all(dir);
  Pipeline p;
  RunPipeline("two_branch.onnx", 2, p, dir);
  ExpectMatchesFramework(p, "two_branch");
  ExpectTimesAndMapping(p);
  ExpectValidTrace(p);
  ExpectValidSummary(p);
  // The two branches (conv on "image", matmul on "features") land on distinct compute streams.
  std::set<int> compute_streams;
  for (const ScheduledTask& t : p.schedule.tasks) {
    if (t.desc.op_node_id >= 0) compute_streams.insert(t.desc.stream_id);
  }
  EXPECT_EQ(compute_streams, (std::set<int>{0, 1}));
  // The join waits for the other branch's last task through an event, and ran after it.
  bool join_waits = false;
  for (const ScheduledTask& t : p.schedule.tasks) {
    if (t.op_type != "Concat") continue;
    for (int64_t d : t.deps) {
      const ScheduledTask& producer = p.schedule.tasks[d];
      if (producer.desc.stream_id == t.desc.stream_id) continue;
      ASSERT_GE(producer.desc.event_after, 0);
      EXPECT_NE(std::find(t.wait_events.begin(), t.wait_events.end(), producer.desc.event_after),
                t.wait_events.end());
      EXPECT_GE(t.raw_start_ns, producer.raw_end_ns);
      join_waits = true;
    }
  }
  EXPECT_TRUE(join_waits);
  // --save-outputs wrote what the run returned.
  for (const auto& [name, t] : p.result.outputs) {
    auto back = ReadNpy(dir + "/" + OutputFileName(name));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_EQ(back->shape(), t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(back->FlatGetAsDouble(i), t.FlatGetAsDouble(i));
  }
}

TEST(RuntimePipeline, OneStreamMatchesTwoStreams) {
  Pipeline one, two;
  RunPipeline("two_branch.onnx", 1, one);
  RunPipeline("two_branch.onnx", 2, two);
  // One compute stream: events only link it with the copy stream.
  for (const ScheduledTask& t : one.schedule.tasks) {
    for (int64_t d : t.deps) {
      if (one.schedule.tasks[d].desc.stream_id == t.desc.stream_id) continue;
      EXPECT_TRUE(t.desc.stream_id == one.schedule.copy_stream ||
                  one.schedule.tasks[d].desc.stream_id == one.schedule.copy_stream);
    }
  }
  for (const auto& [name, t] : one.result.outputs) {
    const Tensor& u = two.result.outputs.at(name);
    for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.FlatGetAsDouble(i), u.FlatGetAsDouble(i)) << name;
  }
}

// Each stream's values live in its arena (stream_arenas.h): an iteration
// holds the arenas, the inputs and the values used on two streams, not
// every value it made, and gives the framework's outputs on one stream and
// on two. With
// the arenas switched off (checked allocation: a guard page after every
// output) it holds more, and gives the same outputs.
TEST(RuntimePipeline, ArenasHoldLessThanEveryValueWithTheSameOutputs) {
  for (const char* name : {"resnet_small.onnx", "transformer_block.onnx", "two_branch.onnx"}) {
    for (int streams : {1, 2}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(streams) + " compute stream(s)");
      Pipeline p;
      RunPipeline(name, streams, p);
      ExpectMatchesFramework(p, name);
      const StreamArenas plan = PlanStreamArenas(p.model.compiled, p.schedule);
      EXPECT_GE(p.result.peak_tensor_bytes, plan.total_bytes());
      // (two_branch's values are tens of bytes: rounded to 64 each, its arenas are no smaller.)
      if (std::string(name) != "two_branch.onnx") {
        EXPECT_LT(p.result.peak_tensor_bytes * 3, p.result.produced_tensor_bytes * 2);  // resnet_small: 27 of 44 KB
      }
    }
  }
  Device* cpu = GetDevice("cpu").value();
  Pipeline arenas;
  RunPipeline("resnet_small.onnx", 1, arenas);
  ASSERT_TRUE(cpu->SetCheckedAllocation(true).ok());
  Pipeline own;
  RunPipeline("resnet_small.onnx", 1, own);
  ASSERT_TRUE(cpu->SetCheckedAllocation(false).ok());
  EXPECT_GT(own.result.peak_tensor_bytes, arenas.result.peak_tensor_bytes);
  for (const auto& [out, t] : arenas.result.outputs) {
    const Tensor& u = own.result.outputs.at(out);
    for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.FlatGetAsDouble(i), u.FlatGetAsDouble(i)) << out;
  }
}

TEST(RuntimePipeline, ConeOfJoinHasBothBranchesUpstream) {
  Pipeline p;
  RunPipeline("two_branch.onnx", 2, p);
  for (const Node& n : p.model.framework.nodes()) {
    if (n.op_type != "Concat") continue;
    auto cone = ConeOf(p.model.framework, n.id);
    ASSERT_TRUE(cone.ok());
    std::set<std::string> up;
    for (int64_t id : cone->ancestors) up.insert(p.model.framework.FindNode(id)->op_type);
    EXPECT_TRUE(up.count("Conv") && up.count("MatMul") && up.count("Tanh"));
    ASSERT_EQ(cone->descendants.size(), 1u);
    EXPECT_EQ(p.model.framework.FindNode(cone->descendants[0])->op_type, "Gemm");
  }
  EXPECT_FALSE(ConeOf(p.model.framework, 987654).ok());
}

TEST(RuntimePipeline, BadInputsAreNamed) {
  Model m = ImportOnnx(Example("two_branch.onnx")).value();
  ASSERT_TRUE(Compile(m).ok());
  Schedule s = ScheduleGraph(m.compiled, {.compute_streams = 2}).value();
  Device* cpu = GetDevice("cpu").value();
  auto wrong_name = Execute(m.compiled, s, {.device = cpu, .inputs = {{"nope", Tensor::Zeros(DType::kF32, {1}).value()}}});
  ASSERT_FALSE(wrong_name.ok());
  EXPECT_NE(wrong_name.status().message().find("'nope'"), std::string::npos);
  auto wrong_shape = Execute(m.compiled, s, {.device = cpu, .inputs = {{"image", Tensor::Zeros(DType::kF32, {1}).value()}}});
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_NE(wrong_shape.status().message().find("'image'"), std::string::npos);
  EXPECT_FALSE(ScheduleGraph(m.compiled, {.compute_streams = 0}).ok());
}

}  // namespace
}  // namespace opscope::graph
