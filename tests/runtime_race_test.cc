// The race check over graph runs (graph/runtime/run_races.h): the executor on
// two compute streams with its schedule intact reports no race; with one
// cross-stream event wait dropped on purpose, the race is reported, naming
// the producing and the consuming task.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/run/summary.h"
#include "graph/runtime/executor.h"
#include "graph/runtime/run_races.h"
#include "graph/runtime/scheduler.h"
#include "tool_test_util.h"

namespace opscope::graph {
namespace {

using namespace ::opscope::testing;  // tool_test_util.h

struct Compiled {
  Model model;
  Schedule schedule;
};

void CompileOnTwoStreams(const std::string& name, Compiled& c) {
  auto imported = ImportOnnx(std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/" + name);
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  c.model = std::move(imported).value();
  ASSERT_TRUE(Compile(c.model).ok());
  auto s = ScheduleGraph(c.model.compiled, {.compute_streams = 2});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  c.schedule = std::move(s).value();
}

RaceCheckOutcome ExecuteChecked(Compiled& c, const TempDir& dir, int iterations = 1) {
  auto cpu = GetDevice("cpu");
  EXPECT_TRUE(cpu.ok());
  const std::string ring = (dir.path() / kRaceRingFile).string();
  auto r = Execute(c.model, c.schedule, {.device = *cpu, .iterations = iterations, .seed = 3, .race_ring = ring});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(ring)) << "the scratch ring is removed once judged";
  return r.ok() ? r->race_check : RaceCheckOutcome{};
}

// A kernel that waits for a kernel on the other stream, and is the first
// task of its stream to wait for that event: without the wait, nothing else
// orders the two.
struct DroppedWait {
  int64_t producer = -1, consumer = -1, event = -1;
};

DroppedWait DropOneWait(Schedule& s) {
  for (ScheduledTask& t : s.tasks) {
    if (t.desc.op_node_id < 0) continue;
    for (size_t w = 0; w < t.wait_events.size(); ++w) {
      const int64_t e = t.wait_events[w];
      int64_t producer = -1;
      bool waited_before = false;
      for (const ScheduledTask& o : s.tasks) {
        if (o.desc.event_after == e) producer = o.desc.task_id;
        if (o.desc.task_id < t.desc.task_id && o.desc.stream_id == t.desc.stream_id) {
          waited_before |= std::find(o.wait_events.begin(), o.wait_events.end(), e) != o.wait_events.end();
        }
      }
      if (producer < 0 || s.tasks[producer].desc.op_node_id < 0 || waited_before) continue;
      t.wait_events.erase(t.wait_events.begin() + static_cast<std::ptrdiff_t>(w));
      t.desc.event_before = t.wait_events.empty() ? -1 : t.wait_events.front();
      return {producer, t.desc.task_id, e};
    }
  }
  return {};
}

TEST(RuntimeRace, IntactScheduleOnTwoStreamsHasNoRace) {
  for (const char* name : {"two_branch.onnx", "resnet_small.onnx", "transformer_block.onnx"}) {
    SCOPED_TRACE(name);
    Compiled c;
    ASSERT_NO_FATAL_FAILURE(CompileOnTwoStreams(name, c));
    TempDir dir;
    const RaceCheckOutcome out = ExecuteChecked(c, dir, /*iterations=*/2);
    EXPECT_TRUE(out.ran) << out.skipped;
    EXPECT_TRUE(out.unjudged.empty()) << out.unjudged;
    EXPECT_GT(out.accesses, 0);
    // One iteration's sync records fit the recorder's fixed ring (kFlightSyncSlots).
    EXPECT_LE(out.sync_records, kFlightSyncSlots);
    for (const StreamRace& r : out.races) ADD_FAILURE() << RaceText(r);
    std::printf("%s: %lld accesses, %lld sync records, %lld launch slots per stream\n", name,
                static_cast<long long>(out.accesses), static_cast<long long>(out.sync_records),
                static_cast<long long>(out.ring_slots));
  }
}

TEST(RuntimeRace, ADroppedEventWaitIsReportedNamingProducerAndConsumer) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(CompileOnTwoStreams("two_branch.onnx", c));
  const DroppedWait dropped = DropOneWait(c.schedule);
  ASSERT_GE(dropped.consumer, 0) << "two_branch on two streams has a kernel waiting for a kernel";
  const ScheduledTask& producer = c.schedule.tasks[dropped.producer];
  const ScheduledTask& consumer = c.schedule.tasks[dropped.consumer];
  ASSERT_NE(producer.desc.stream_id, consumer.desc.stream_id);
  TempDir dir;
  const RaceCheckOutcome out = ExecuteChecked(c, dir);
  ASSERT_TRUE(out.ran) << out.skipped;
  EXPECT_TRUE(out.unjudged.empty()) << out.unjudged;
  const StreamRace* found = nullptr;
  for (const StreamRace& r : out.races) {
    if (r.first.task_id == dropped.producer && r.second.task_id == dropped.consumer) found = &r;
  }
  ASSERT_NE(found, nullptr) << "no race between task " << dropped.producer << " '" << producer.node_name
                            << "' and task " << dropped.consumer << " '" << consumer.node_name << "' among "
                            << out.races.size();
  EXPECT_TRUE(found->first.writes);
  EXPECT_FALSE(found->second.writes);
  EXPECT_EQ(found->first.name, producer.node_name);
  EXPECT_EQ(found->second.name, consumer.node_name);
  EXPECT_EQ(found->first.stream_id, producer.desc.stream_id);
  EXPECT_EQ(found->second.stream_id, consumer.desc.stream_id);
  EXPECT_FALSE(found->first.kernel.empty());
  // The buffer is the value the producer wrote and the consumer read.
  const Node* p = c.model.compiled.FindNode(producer.desc.op_node_id);
  ASSERT_NE(p, nullptr);
  EXPECT_NE(std::find(p->outputs.begin(), p->outputs.end(), found->first.tensor), p->outputs.end())
      << found->first.tensor;
  EXPECT_EQ(found->first.tensor, found->second.tensor);
  EXPECT_GT(found->bytes, 0u);
  const std::string line = RaceText(*found);
  std::printf("dropped event %lld: %s\n", static_cast<long long>(dropped.event), line.c_str());
  EXPECT_NE(line.find(producer.node_name), std::string::npos) << line;
  EXPECT_NE(line.find(consumer.node_name), std::string::npos) << line;

  // summary.json and capture.json carry it: "races" at the top, the rest in "race_check".
  Summary s = Summarize(c.schedule, 5);
  s.race_check = out;
  const nlohmann::json j = SummaryJson(s);
  ASSERT_TRUE(j.contains("races"));
  ASSERT_EQ(j["races"].size(), out.races.size());
  EXPECT_FALSE(j["race_check"].contains("races"));
  EXPECT_TRUE(j["race_check"]["ran"].get<bool>());
  const nlohmann::json written = RaceCheckJson(out);
  JsonFields fields("race_check");
  const RaceCheckOutcome back = RaceCheckFromJson(fields.Root(written));
  ASSERT_TRUE(fields.ok()) << fields.status().ToString();
  ASSERT_EQ(back.races.size(), out.races.size());
  EXPECT_EQ(RaceText(back.races[0]), RaceText(out.races[0]));
}

TEST(RuntimeRace, TheRingHoldsTheBusiestStream) {
  Compiled c;
  ASSERT_NO_FATAL_FAILURE(CompileOnTwoStreams("transformer_block.onnx", c));
  std::vector<int64_t> kernels(c.schedule.num_streams(), 0);
  for (const ScheduledTask& t : c.schedule.tasks) kernels[t.desc.stream_id] += t.desc.op_node_id >= 0;
  EXPECT_GE(RaceRingSlots(c.schedule), *std::max_element(kernels.begin(), kernels.end()));
}

}  // namespace
}  // namespace opscope::graph
