// The lookups an iteration makes, made once (iteration_plan.h), against the
// schedule and graph they stand for, on the repo's example models on one and
// two compute streams: every slot names its value, every task's slots and
// arena blocks are its node's, and the run lets go of each computed value
// exactly once, at the last task that reads it.
#include "graph/runtime/iteration_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "graph/runtime/example_schedule_test_util.h"

namespace opscope::graph {
namespace {

// The names a plan's slots stand for.
std::vector<std::string> Names(const IterationPlan& plan, const std::vector<int>& slots) {
  std::vector<std::string> names;
  for (int s : slots) names.push_back(s < 0 ? std::string() : plan.names.at(static_cast<size_t>(s)));
  return names;
}

TEST(IterationPlan, TasksReadTheirNodesValuesAndLetGoAfterTheLastReader) {
  for (const char* name : {"resnet_small.onnx", "transformer_block.onnx", "two_branch.onnx", "const_if.onnx"}) {
    for (int streams : {1, 2}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(streams) + " compute stream(s)");
      const PlannedExample ex = PlanExample(name, streams);
      const Graph& g = ex.model.compiled;
      const IterationPlan plan = PlanIteration(g, ex.schedule, &ex.plan);
      ASSERT_EQ(plan.tasks.size(), ex.schedule.tasks.size());
      ASSERT_EQ(plan.constants.size(), plan.names.size());
      std::map<std::string, int> slot_of;
      for (size_t s = 0; s < plan.names.size(); ++s) {
        EXPECT_TRUE(slot_of.emplace(plan.names[s], static_cast<int>(s)).second) << plan.names[s] << " has two slots";
        const Value* v = g.FindValue(plan.names[s]);
        EXPECT_EQ(plan.constants[s] != nullptr, v != nullptr && v->constant.has_value()) << plan.names[s];
      }

      // The last task that reads each value, found here from the schedule.
      std::map<std::string, size_t> last_reader;
      for (size_t i = 0; i < ex.schedule.tasks.size(); ++i) {
        for (const std::string& v : ReadsOf(g, ex.schedule.tasks[i])) last_reader[v] = i;
      }
      std::map<std::string, size_t> released_at;
      int kernels = 0;
      for (size_t i = 0; i < plan.tasks.size(); ++i) {
        const ScheduledTask& t = ex.schedule.tasks[i];
        const PlannedTask& p = plan.tasks[i];
        EXPECT_TRUE(p.missing.ok()) << p.missing.ToString();
        for (int v : p.release) {
          EXPECT_TRUE(released_at.emplace(plan.names.at(static_cast<size_t>(v)), i).second)
              << plan.names[v] << " is let go of twice";
        }
        if (!IsKernelTask(t)) {
          EXPECT_EQ(p.node, nullptr);
          EXPECT_EQ(plan.names.at(static_cast<size_t>(p.value)), t.value);
          continue;
        }
        ++kernels;
        ASSERT_NE(p.node, nullptr);
        EXPECT_EQ(p.node->id, t.desc.op_node_id);
        ASSERT_NE(p.schema, nullptr);
        EXPECT_EQ(p.schema->name, p.node->op_type);
        EXPECT_EQ(Names(plan, p.inputs), p.node->inputs);
        EXPECT_EQ(Names(plan, p.outputs), p.node->outputs);
        ASSERT_EQ(p.places.size(), p.node->outputs.size());
        for (size_t o = 0; o < p.places.size(); ++o) {
          auto placed = ex.plan.places.find(p.node->outputs[o]);
          EXPECT_EQ(p.places[o], placed == ex.plan.places.end() ? nullptr : &placed->second) << p.node->outputs[o];
        }
      }
      EXPECT_GT(kernels, 0);
      // Every computed value is let go of once: at its last reader, or at
      // its writer when nothing reads it. Constants never are.
      for (size_t s = 0; s < plan.names.size(); ++s) {
        const std::string& v = plan.names[s];
        auto released = released_at.find(v);
        if (plan.constants[s] != nullptr) {
          EXPECT_EQ(released, released_at.end()) << "constant " << v << " is let go of";
          continue;
        }
        auto read = last_reader.find(v);
        if (read != last_reader.end()) {
          ASSERT_NE(released, released_at.end()) << v << " is read but never let go of";
          EXPECT_EQ(released->second, read->second) << v << " is let go of elsewhere than at its last reader";
        }
      }
      for (const auto& [v, at] : released_at) {
        if (last_reader.count(v) != 0) continue;
        const PlannedTask& writer = plan.tasks[at];
        EXPECT_NE(std::find(writer.outputs.begin(), writer.outputs.end(), slot_of.at(v)), writer.outputs.end())
            << v << " is read by nothing and let go of at a task that does not write it";
      }
    }
  }
}

// Without arenas (checked allocation) nothing is placed; a task whose node
// is not in the graph is said when it is queued, not when it is planned.
TEST(IterationPlan, NoArenasPlaceNothingAndAMissingNodeIsKeptForLater) {
  PlannedExample ex = PlanExample("resnet_small.onnx", 1);
  size_t kernel = ex.schedule.tasks.size();
  for (size_t i = 0; i < ex.schedule.tasks.size() && kernel == ex.schedule.tasks.size(); ++i) {
    if (IsKernelTask(ex.schedule.tasks[i])) kernel = i;
  }
  ASSERT_LT(kernel, ex.schedule.tasks.size());
  ex.schedule.tasks[kernel].desc.op_node_id = 987654;
  const IterationPlan plan = PlanIteration(ex.model.compiled, ex.schedule, nullptr);
  for (const PlannedTask& p : plan.tasks) {
    for (const ValuePlace* place : p.places) EXPECT_EQ(place, nullptr);
  }
  EXPECT_EQ(plan.tasks[kernel].node, nullptr);
  EXPECT_NE(plan.tasks[kernel].missing.message().find("987654"), std::string::npos)
      << plan.tasks[kernel].missing.ToString();
}

}  // namespace
}  // namespace opscope::graph
