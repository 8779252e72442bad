#include "graph/export/trace_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/text_format.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

TraceTask MakeTask(int64_t id, std::string name) {
  TraceTask t;
  t.task_id = id;
  t.node_id = id * 3 - 1;
  t.op_id = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(id + 1);
  t.tid = static_cast<int>(id % 3);
  t.ts_ns = id * 1'234'567;
  t.dur_ns = id * 1'001;
  t.name = std::move(name);
  t.category = "kernel";
  t.op_type = "Conv";
  t.kernel = "conv2d_nchw_cpu";
  t.launch_known = id % 2 == 0;
  t.grid = {id, 1, 123'456'789'012};
  t.block = {256, 1, 1};
  return t;
}

// Every field parses back to exactly what was given, whatever the string
// holds (quotes, backslashes, control characters, UTF-8) and whatever the
// sign and size of the numbers.
TEST(TraceJson, FieldsRoundTripThroughAJsonParser) {
  TraceData d;
  d.pid = 4;
  d.process_name = "cpu";
  d.threads = {{0, "compute 0"}, {1, "copy \"c\""}, {2, "tab\there"}};
  const std::string names[] = {"/a/b/Conv", "", "q\"uote\\back\x01\x1f", "ünïcödé ŝtream name, long enough to span words"};
  for (int64_t i = 0; i < 64; ++i) d.tasks.push_back(MakeTask(i, names[i % 4]));
  d.tasks[5].ts_ns = -42'001;  // before the origin: a negative time
  d.tasks[6].op_id = 0;
  d.tasks[7].op_id = std::numeric_limits<uint64_t>::max();
  d.tasks[8].node_id = -1;
  d.flows.push_back({.id = 1, .from_tid = 0, .to_tid = 1, .from_ts_ns = 999, .to_ts_ns = 1'000'000'007,
                     .name = "event 0"});

  const json j = json::parse(TraceJson(d));
  EXPECT_EQ(j["schema"], "opscope.trace/1");
  std::vector<json> x, m, flows;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "X") x.push_back(e);
    if (e["ph"] == "M") m.push_back(e);
    if (e["ph"] == "s" || e["ph"] == "f") flows.push_back(e);
  }
  ASSERT_EQ(m.size(), 1 + d.threads.size());
  EXPECT_EQ(m[2]["args"]["name"], "copy \"c\"");
  EXPECT_EQ(m[3]["args"]["name"], "tab\there");
  ASSERT_EQ(x.size(), d.tasks.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const TraceTask& t = d.tasks[i];
    const json& e = x[i];
    EXPECT_EQ(e["pid"], 4);
    EXPECT_EQ(e["tid"], t.tid);
    EXPECT_EQ(std::llround(e["ts"].get<double>() * 1000), t.ts_ns) << e.dump();
    EXPECT_EQ(std::llround(e["dur"].get<double>() * 1000), t.dur_ns) << e.dump();
    EXPECT_EQ(e["name"], t.name);
    EXPECT_EQ(e["args"]["task_id"], t.task_id);
    EXPECT_EQ(e["args"]["node_id"], t.node_id);
    EXPECT_EQ(e["args"]["op_id"], Hex(t.op_id));
    EXPECT_EQ(e["args"]["kernel"], t.kernel);
    if (t.launch_known) {
      EXPECT_EQ(e["args"]["grid"], json::array({t.grid.x, t.grid.y, t.grid.z}));
      EXPECT_EQ(e["args"]["block"], json::array({t.block.x, t.block.y, t.block.z}));
    } else {
      EXPECT_TRUE(e["args"]["grid"].is_null());
    }
  }
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0]["ph"], "s");
  EXPECT_EQ(flows[1]["ph"], "f");
  EXPECT_EQ(flows[1]["bp"], "e");
  EXPECT_EQ(std::llround(flows[1]["ts"].get<double>() * 1000), 1'000'000'007);
}

TEST(TraceJson, EmptyTraceIsStillJson) {
  const json j = json::parse(TraceJson(TraceData{}));
  ASSERT_EQ(j["traceEvents"].size(), 1u);  // the process name
  EXPECT_EQ(j["traceEvents"][0]["name"], "process_name");
}

}  // namespace
}  // namespace opscope::graph
