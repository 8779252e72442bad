// The runtime's per-stream arenas (stream_arenas.h) on the repo's example
// models, on one and on two compute streams: values alive at the same time
// never share a byte, every placed value is written and read on its arena's
// stream alone, and memory is reused.
#include "graph/runtime/stream_arenas.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "graph/runtime/example_schedule_test_util.h"

namespace opscope::graph {
namespace {

using Planned = PlannedExample;

// Each value's uses in the schedule, found here again: the tasks that
// write it and read it, by index, and their streams.
struct Uses {
  std::vector<size_t> tasks;
  std::vector<int> streams;
};

std::map<std::string, Uses> UsesOf(const Planned& p) {
  std::map<std::string, Uses> uses;
  for (size_t i = 0; i < p.schedule.tasks.size(); ++i) {
    const ScheduledTask& t = p.schedule.tasks[i];
    auto use = [&](const std::string& v) {
      uses[v].tasks.push_back(i);
      uses[v].streams.push_back(t.desc.stream_id);
    };
    if (t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H) {
      use(t.value);
      continue;
    }
    const Node* n = p.model.compiled.FindNode(t.desc.op_node_id);
    EXPECT_NE(n, nullptr) << "task " << i;
    if (n == nullptr) continue;
    for (const std::string& v : n->inputs) {
      if (!v.empty()) use(v);
    }
    for (const std::string& v : n->outputs) {
      if (!v.empty()) use(v);
    }
  }
  return uses;
}

TEST(StreamArenas, ValuesAliveAtOnceNeverShareBytes) {
  for (const char* name : {"resnet_small.onnx", "transformer_block.onnx", "two_branch.onnx"}) {
    for (int streams : {1, 2}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(streams) + " compute stream(s)");
      const Planned p = PlanExample(name, streams);
      ASSERT_FALSE(p.plan.places.empty());
      const std::map<std::string, Uses> uses = UsesOf(p);
      struct Life {
        std::string value;
        size_t first, last;
        ValuePlace place;
      };
      std::vector<Life> lives;
      for (const auto& [v, place] : p.plan.places) {
        const Uses& u = uses.at(v);
        for (int s : u.streams) EXPECT_EQ(s, place.stream) << v << " is used off its arena's stream";
        const Value* value = p.model.compiled.FindValue(v);
        ASSERT_NE(value, nullptr);
        EXPECT_FALSE(value->constant) << v;
        EXPECT_GE(place.bytes, value->bytes()) << v;
        EXPECT_EQ(place.offset % 64, 0) << v;
        EXPECT_LE(place.offset + place.bytes, p.plan.arena_bytes.at(static_cast<size_t>(place.stream))) << v;
        lives.push_back({v, u.tasks.front(), u.tasks.back(), place});
      }
      for (size_t a = 0; a < lives.size(); ++a) {
        for (size_t b = a + 1; b < lives.size(); ++b) {
          const Life &x = lives[a], &y = lives[b];
          if (x.place.stream != y.place.stream || x.last < y.first || y.last < x.first) continue;
          const bool apart = x.place.offset + x.place.bytes <= y.place.offset ||
                             y.place.offset + y.place.bytes <= x.place.offset;
          EXPECT_TRUE(apart) << x.value << " and " << y.value << " are alive at once and share bytes";
        }
      }
    }
  }
}

// On one stream value after value takes the memory of values it is done
// with; on two, a value both branches read (two_branch's input of both) is
// given memory of its own.
TEST(StreamArenas, OneStreamReusesAndValuesOfTwoStreamsStayOut) {
  const Planned one = PlanExample("resnet_small.onnx", 1);
  int64_t blocks = 0;
  for (const auto& [v, place] : one.plan.places) blocks += place.bytes;
  // (24 KiB for 40 KiB of blocks.)
  EXPECT_LT(one.plan.total_bytes() * 4, blocks * 3) << "the arena holds more than 3/4 of the values' blocks";
  EXPECT_EQ(one.plan.arena_bytes.size(), static_cast<size_t>(one.schedule.num_streams()));

  const Planned two = PlanExample("two_branch.onnx", 2);
  const std::map<std::string, Uses> uses = UsesOf(two);
  int crossing = 0;
  for (const auto& [v, u] : uses) {
    bool both = false;
    for (int s : u.streams) both = both || s != u.streams.front();
    if (!both) continue;
    ++crossing;
    EXPECT_EQ(two.plan.places.count(v), 0u) << v << " is used on two streams but was placed";
  }
  EXPECT_GT(crossing, 0) << "two_branch on two streams has no value used on both";
}

}  // namespace
}  // namespace opscope::graph
