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
#include "graph/runtime/happens_before.h"

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

// Which tasks are ordered before which, found here by search over the
// schedule's edges (a stream's next task; an event's recorder to the tasks
// that wait on it later), not by happens_before.h's clocks.
class Reachable {
 public:
  explicit Reachable(const Schedule& s) : next_(s.tasks.size()) {
    std::vector<size_t> last_on(static_cast<size_t>(s.num_streams()) + 1, s.tasks.size());
    std::map<int64_t, size_t> recorder;
    for (size_t i = 0; i < s.tasks.size(); ++i) {
      const ScheduledTask& t = s.tasks[i];
      size_t& last = last_on.at(static_cast<size_t>(t.desc.stream_id));
      if (last < s.tasks.size()) next_[last].push_back(i);
      last = i;
      for (int64_t e : t.wait_events) {
        auto r = recorder.find(e);
        if (r != recorder.end()) next_[r->second].push_back(i);
      }
      if (t.desc.event_after >= 0) recorder[t.desc.event_after] = i;
    }
  }
  bool Before(size_t a, size_t b) const {
    std::vector<bool> seen(next_.size(), false);
    std::vector<size_t> todo = next_[a];
    while (!todo.empty()) {
      const size_t x = todo.back();
      todo.pop_back();
      if (x == b) return true;
      if (seen[x]) continue;
      seen[x] = true;
      todo.insert(todo.end(), next_[x].begin(), next_[x].end());
    }
    return false;
  }

 private:
  std::vector<std::vector<size_t>> next_;
};

// happens_before.h's clocks say of every pair of tasks what a search of the
// schedule's edges says, on one, two and three streams.
TEST(HappensBefore, AgreesWithASearchOfTheSchedulesEdgesOnEveryPair) {
  for (const char* name : {"resnet_small.onnx", "transformer_block.onnx", "two_branch.onnx"}) {
    for (int streams : {1, 2, 3}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(streams) + " compute stream(s)");
      const Planned p = PlanExample(name, streams);
      const HappensBefore hb(p.schedule);
      const Reachable order(p.schedule);
      int ordered = 0, concurrent = 0;  // pairs a < b
      for (size_t a = 0; a < p.schedule.tasks.size(); ++a) {
        EXPECT_FALSE(hb.Before(a, a));
        for (size_t b = 0; b < p.schedule.tasks.size(); ++b) {
          if (a == b) continue;
          const bool want = order.Before(a, b);
          ASSERT_EQ(hb.Before(a, b), want) << "tasks " << a << " and " << b;
          if (a < b && want) ++ordered;
          if (a < b && !want && !order.Before(b, a)) ++concurrent;
        }
      }
      EXPECT_GT(ordered, 0);
      // Two branches on two streams run at once: some pairs are ordered neither way.
      if (streams > 1 && std::string(name) == "two_branch.onnx") {
        EXPECT_GT(concurrent, 0);
      }
    }
  }
}

TEST(StreamArenas, ValuesAliveAtOnceNeverShareBytes) {
  for (const char* name : {"resnet_small.onnx", "transformer_block.onnx", "two_branch.onnx"}) {
    for (int streams : {1, 2}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(streams) + " compute stream(s)");
      const Planned p = PlanExample(name, streams);
      ASSERT_FALSE(p.plan.places.empty());
      const std::map<std::string, Uses> uses = UsesOf(p);
      const int shared = p.schedule.num_streams();
      ASSERT_EQ(p.plan.arena_bytes.size(), static_cast<size_t>(shared) + 1);
      struct Life {
        std::string value;
        size_t first, last;
        ValuePlace place;
        std::vector<size_t> tasks;
      };
      std::vector<Life> lives;
      for (const auto& [v, place] : p.plan.places) {
        const Uses& u = uses.at(v);
        bool two_streams = false;
        for (int s : u.streams) two_streams = two_streams || s != u.streams.front();
        EXPECT_EQ(place.stream == shared, two_streams) << v << ": the shared arena is for values of two streams";
        for (int s : u.streams) {
          if (place.stream == shared) continue;
          EXPECT_EQ(s, place.stream) << v << " is used off its arena's stream";
        }
        const Value* value = p.model.compiled.FindValue(v);
        ASSERT_NE(value, nullptr);
        EXPECT_FALSE(value->constant) << v;
        EXPECT_GE(place.bytes, value->bytes()) << v;
        EXPECT_EQ(place.offset % 64, 0) << v;
        EXPECT_LE(place.offset + place.bytes, p.plan.arena_bytes.at(static_cast<size_t>(place.stream))) << v;
        lives.push_back({v, u.tasks.front(), u.tasks.back(), place, u.tasks});
      }
      const Reachable order(p.schedule);
      // Every task of x's done before y's first (its writer) starts.
      auto all_before = [&](const Life& x, const Life& y) {
        for (size_t t : x.tasks) {
          if (!order.Before(t, y.first)) return false;
        }
        return true;
      };
      for (size_t a = 0; a < lives.size(); ++a) {
        for (size_t b = a + 1; b < lives.size(); ++b) {
          const Life &x = lives[a], &y = lives[b];
          if (x.place.stream != y.place.stream) continue;
          const bool apart = x.place.offset + x.place.bytes <= y.place.offset ||
                             y.place.offset + y.place.bytes <= x.place.offset;
          if (apart) continue;
          if (x.place.stream == shared) {
            EXPECT_TRUE(all_before(x, y) || all_before(y, x))
                << x.value << " and " << y.value << " share bytes of the shared arena with no order between them";
          } else {
            EXPECT_TRUE(x.last < y.first || y.last < x.first)
                << x.value << " and " << y.value << " are alive at once and share bytes";
          }
        }
      }
    }
  }
}

// On one stream value after value takes the memory of values it is done
// with; on two, a value both branches read (two_branch's input of both)
// goes to the shared arena.
TEST(StreamArenas, OneStreamReusesAndValuesOfTwoStreamsStayOut) {
  const Planned one = PlanExample("resnet_small.onnx", 1);
  int64_t blocks = 0;
  for (const auto& [v, place] : one.plan.places) blocks += place.bytes;
  // (24 KiB for 40 KiB of blocks.)
  EXPECT_LT(one.plan.total_bytes() * 4, blocks * 3) << "the arena holds more than 3/4 of the values' blocks";
  EXPECT_EQ(one.plan.arena_bytes.size(), static_cast<size_t>(one.schedule.num_streams()) + 1) << "and the shared arena";

  const Planned two = PlanExample("two_branch.onnx", 2);
  const std::map<std::string, Uses> uses = UsesOf(two);
  int crossing = 0;
  for (const auto& [v, u] : uses) {
    bool both = false;
    for (int s : u.streams) both = both || s != u.streams.front();
    const Value* value = two.model.compiled.FindValue(v);
    if (!both || value == nullptr || value->constant || value->is_graph_input) continue;
    ++crossing;
    auto placed = two.plan.places.find(v);
    ASSERT_NE(placed, two.plan.places.end()) << v << " is used on two streams and was not placed";
    EXPECT_EQ(placed->second.stream, two.schedule.num_streams()) << v << " is used on two streams, not in the shared arena";
  }
  EXPECT_GT(crossing, 0) << "two_branch on two streams has no value used on both";
}

}  // namespace
}  // namespace opscope::graph
