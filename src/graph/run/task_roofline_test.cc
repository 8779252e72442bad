// The run's chart stays readable: a point per task while they are few, one
// per op type and dtype beyond that, with the tasks that cannot be drawn
// still counted in its note.
#include "graph/run/task_roofline.h"

#include <gtest/gtest.h>

#include <string>

#include "core/text_format.h"

namespace opscope::graph {
namespace {

const RoofPeaks kPeaks{.bandwidth_gbs = 100, .gflops_f32 = 1000, .gflops_f64 = 500, .source = "test"};

// `n` timed tasks alternating Add and MatMul, plus one op without a cost model.
void MakeRun(int n, Schedule& s, std::vector<TaskRoof>& roofs) {
  for (int i = 0; i <= n; ++i) {
    ScheduledTask t;
    t.desc.task_id = i;
    t.op_type = i == n ? "Custom" : (i % 2 ? "MatMul" : "Add");
    t.node_name = "/n" + std::to_string(i);
    t.cal_start_ns = 1000 * i;
    s.tasks.push_back(t);
    const std::optional<Cost> cost =
        i == n ? std::nullopt : std::optional<Cost>(Cost{.bytes_read = 1'000'000, .flops = i % 2 ? 2e8 : 2.5e5});
    roofs.push_back({.dtype = DType::kF32, .point = Roofline(cost, DType::kF32, 20, kPeaks)});
  }
}

TEST(RunRooflineSvg, APointPerTaskWhileFew) {
  Schedule s;
  std::vector<TaskRoof> roofs;
  MakeRun(6, s, roofs);
  const std::string svg = RunRooflineSvg(s, roofs, kPeaks);
  EXPECT_EQ(CountOccurrences(svg, "<circle"), 6u);
  EXPECT_NE(svg.find("/n5 (MatMul)"), std::string::npos);
  EXPECT_NE(svg.find("1 without a cost model"), std::string::npos);
}

TEST(RunRooflineSvg, APointPerOpTypeWhenMany) {
  Schedule s;
  std::vector<TaskRoof> roofs;
  MakeRun(1000, s, roofs);
  const std::string svg = RunRooflineSvg(s, roofs, kPeaks);
  EXPECT_EQ(CountOccurrences(svg, "<circle"), 2u) << svg;
  EXPECT_NE(svg.find("MatMul float32 (500 tasks)"), std::string::npos);
  // The sums keep each op type's efficiency: 500 x 10 us of bound in 500 x 20 us.
  EXPECT_NE(svg.find("Add float32 (500 tasks): 50 GB/s, 12.5 GFLOP/s, efficiency 50.0%"), std::string::npos) << svg;
  EXPECT_NE(svg.find("1 without a cost model"), std::string::npos);
  EXPECT_LT(svg.size(), 8000u);
}

}  // namespace
}  // namespace opscope::graph
