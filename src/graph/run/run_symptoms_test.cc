// The symptom table on runs laid out by hand (times in ns on the calibrated
// clock), so every figure the findings print is known here: a copy that a
// kernel overlaps counts only for its bare part, eight small copies pay
// their fixed cost, and a wait seen backwards on the calibrated clock is the
// time bases disagreeing. A laid-out run with none of it has no finding.
#include "graph/run/run_symptoms.h"

#include <gtest/gtest.h>

#include <string>

namespace opscope::graph {
namespace {

// A task on `stream` from `start` to `end` (us); copies move graph value `value`.
ScheduledTask Task(int64_t id, int stream, double start_us, double end_us, TaskKind kind = TaskKind::kKernel,
                   const std::string& value = "") {
  ScheduledTask t;
  t.desc.task_id = id;
  t.desc.stream_id = stream;
  t.desc.kind = kind;
  t.op_type = kind == TaskKind::kKernel ? "Relu" : "memcpy";
  t.node_name = "/n" + std::to_string(id);
  t.value = value;
  t.raw_start_ns = t.cal_start_ns = static_cast<int64_t>(start_us * 1e3);
  t.raw_end_ns = t.cal_end_ns = static_cast<int64_t>(end_us * 1e3);
  return t;
}

void AddValue(CapturedRun& run, const std::string& name, int64_t floats) {
  Value& v = run.model.compiled.GetOrAddValue(name);
  v.dtype = DType::kF32;
  v.dtype_known = true;
  v.dims = {floats};
  v.rank_known = true;
}

const SymptomFinding* Find(const std::vector<SymptomFinding>& all, const std::string& kind) {
  for (const SymptomFinding& f : all) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

TEST(RunSymptoms, CopiesDominateByTheirTimeNoKernelOverlaps) {
  CapturedRun run;
  run.schedule.compute_streams = 1;
  run.schedule.copy_stream = 1;
  AddValue(run, "x", 1 << 20);  // 4 MiB
  // The copy of x: 0..1000 us; a kernel beside it 200..600 us, another after it.
  run.schedule.tasks = {Task(0, 1, 0, 1000, TaskKind::kMemcpyH2D, "x"), Task(1, 0, 200, 600), Task(2, 0, 1000, 1250)};
  const std::vector<SymptomFinding> found = FindSymptoms(run);
  const SymptomFinding* f = Find(found, "data_movement");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->text, "data movement dominates: copies take 600.0 us of the 1.250 ms span (48%) with no compute beside them");
  ASSERT_EQ(f->evidence.size(), 2u);
  EXPECT_EQ(f->evidence[0], "stream copy: 1 copies of 4.00 MiB in 1.000 ms, 600.0 us (60%) overlapping no compute");
  EXPECT_EQ(Find(found, "time_bases"), nullptr);

  // Kernels overlapping the copy all but 200 us of it: 200 us of a 1250 us span is under 30%.
  run.schedule.tasks[1] = Task(1, 0, 0, 800);
  EXPECT_EQ(Find(FindSymptoms(run), "data_movement"), nullptr);
}

TEST(RunSymptoms, EightSmallCopiesOneWayPayTheirFixedCost) {
  CapturedRun run;
  run.schedule.compute_streams = 1;
  run.schedule.copy_stream = 1;
  run.peaks = RoofPeaks{.bandwidth_gbs = 10, .gflops_f32 = 100, .gflops_f64 = 50, .source = "test"};
  for (int i = 0; i < 8; ++i) {
    AddValue(run, "x" + std::to_string(i), 64);  // 256 B each, 2 KiB in all: 0.2 us at 10 GB/s
    run.schedule.tasks.push_back(Task(i, 1, 2.0 * i, 2.0 * i + 1, TaskKind::kMemcpyH2D, "x" + std::to_string(i)));
  }
  run.schedule.tasks.push_back(Task(8, 0, 16, 100));
  const std::vector<SymptomFinding> found = FindSymptoms(run);
  const SymptomFinding* f = Find(found, "data_movement");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->text, "copies split finer than their cost warrants: 8 host-to-device copies of 256 B (median) each pay a "
                     "copy's fixed cost: 1.0 us per copy, 8.0 us in all (8% of the span) for 2.0 KiB");
  ASSERT_EQ(f->evidence.size(), 1u);
  EXPECT_EQ(f->evidence[0].rfind("at the 10.0 GB/s memory bandwidth their bytes need 0.2 us: ", 0), 0u) << f->evidence[0];

  // Seven are not many; eight whose time is their bytes' (under 4x) pay no fixed cost worth a finding.
  CapturedRun fewer = run;
  fewer.schedule.tasks.erase(fewer.schedule.tasks.begin());
  EXPECT_EQ(Find(FindSymptoms(fewer), "data_movement"), nullptr);
  run.peaks->bandwidth_gbs = 0.5;  // 2 KiB need 4.1 us; 8 us is under 4x that
  EXPECT_EQ(Find(FindSymptoms(run), "data_movement"), nullptr);
}

TEST(RunSymptoms, AWaitSeenBackwardsOnTheCalibratedClockIsTimeBasesDisagreeing) {
  CapturedRun run;
  run.schedule.compute_streams = 2;
  run.schedule.copy_stream = 2;
  // compute 1's task waits on compute 0's, which ends at 100 us; on the raw
  // clocks it starts at 150 us, the calibration moved it 80 us early.
  ScheduledTask producer = Task(0, 0, 0, 100), consumer = Task(1, 1, 150, 170);
  consumer.deps = {0};
  consumer.cal_start_ns -= 80'000;
  consumer.cal_end_ns -= 80'000;
  run.schedule.tasks = {producer, consumer};
  const std::vector<SymptomFinding> found = FindSymptoms(run);
  const SymptomFinding* f = Find(found, "time_bases");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->text, "the streams' time bases disagree: /n1 (Relu) on compute 1 starts 30.0 us before /n0 (Relu) on "
                     "compute 0, which it waits for, has ended");
  ASSERT_EQ(f->evidence.size(), 3u);
  EXPECT_EQ(f->evidence[0], "compute 1 waiting on compute 0: 1 wait(s); calibrated, the waiting task starts up to 30.0 us "
                            "early; on the raw clocks, in order (50.0 us apart at the closest)");
  EXPECT_EQ(f->evidence[1], "stream compute 0: the calibration moved its clock by 0.0 us at its first task and 0.0 us at its last");
  EXPECT_EQ(f->evidence[2], "stream compute 1: the calibration moved its clock by -80.0 us at its first task and -80.0 us at its last");

  // Within a microsecond is in order (the event's own granularity).
  run.schedule.tasks[1].cal_start_ns = 100'000 - 900;
  EXPECT_EQ(Find(FindSymptoms(run), "time_bases"), nullptr);
}

// A compiled graph from elsewhere (this compiler never fuses so): Fused(A, B,
// C) also writes out B's result, which D reads again.
TEST(RunSymptoms, AFusedNodeThatWritesOutAnInnerTensorIsOverFusion) {
  CapturedRun run;
  Graph& fw = run.model.framework;
  Graph& cg = run.model.compiled;
  const auto node = [](Graph& g, int64_t id, const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
    Node n;
    n.id = id;
    n.name = "/" + op;
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    g.mutable_nodes().push_back(n);
    for (const std::string& v : n.inputs) g.GetOrAddValue(v);
    for (const std::string& v : n.outputs) g.GetOrAddValue(v);
  };
  node(fw, 0, "Mul", {"x"}, {"a"});
  node(fw, 1, "Add", {"a"}, {"b"});
  node(fw, 2, "Relu", {"b"}, {"c"});
  node(fw, 3, "Tanh", {"b"}, {"d"});
  node(cg, 10, "FusedElementwise", {"x"}, {"c", "b"});
  node(cg, 11, "Tanh", {"b"}, {"d"});
  cg.mutable_nodes()[0].fused_from = {0, 1, 2};
  cg.mutable_nodes()[0].name = "/fused";
  for (Graph* g : {&fw, &cg}) {
    g->inputs() = {"x"};
    g->GetOrAddValue("x").is_graph_input = true;
    g->outputs() = {"c", "d"};
    const Status built = g->Rebuild();  // producers, consumers and the node index
    ASSERT_TRUE(built.ok()) << built.message();
  }
  Value& b = cg.GetOrAddValue("b");
  b.dtype = DType::kF32;
  b.dtype_known = b.rank_known = true;
  b.dims = {1024};
  const std::vector<SymptomFinding> found = FindSymptoms(run);
  const SymptomFinding* f = Find(found, "over_fusion");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->text, "1 fused node(s) write intermediate results of their group back to memory for later nodes to read "
                     "(4.0 KiB per iteration): the fusion kept them in memory after all");
  ASSERT_EQ(f->evidence.size(), 1u);
  EXPECT_EQ(f->evidence[0], "/fused (FusedElementwise, 3 framework nodes) writes out b (4.0 KiB, read again by /Tanh)");

  // The same group writing only its last result is a fusion like this compiler's: nothing to say.
  cg.mutable_nodes()[0].outputs = {"c"};
  cg.mutable_nodes()[1].inputs = {"x"};
  ASSERT_TRUE(cg.Rebuild().ok());
  EXPECT_EQ(Find(FindSymptoms(run), "over_fusion"), nullptr);
}

}  // namespace
}  // namespace opscope::graph
