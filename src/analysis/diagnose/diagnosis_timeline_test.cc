// diagnosis.json -> the timeline the web UI draws. The documents are written
// by the real writer (DiagnosisJson) from a Diagnosis built here, so the
// reader is held to what ops-debug diagnose writes; the browser test's
// hand-written fixture (tests/web/diagnosis/) is converted as well.
#include "analysis/diagnose/diagnosis_timeline.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "opscope/diagnose.h"

namespace opscope {
namespace {

using nlohmann::json;

DiagLaunch Launch(uint64_t seq, int stream, const std::string& op, const std::string& op_id, const std::string& state,
                  double start, double end) {
  DiagLaunch l{.seq = seq, .kind = "launch", .op = op, .kernel = op + "_cpu", .device = "cpu", .op_id = op_id,
               .stream_id = stream, .state = state, .start_us = start, .end_us = end};
  l.grid = {4, 1, 1}, l.block = {64, 1, 1}, l.vector_width = 2;
  DiagTensor x{.role = "input", .name = "x", .dtype = "float32", .shape = {256}, .address = 0x1000, .bytes = 1024};
  x.has_stats = true, x.count = 256, x.nan = 1, x.min = -2, x.max = 3, x.mean = 0.5;
  l.tensors = {x};
  return l;
}

DiagLaunch Sync(uint64_t seq, const std::string& kind, int stream, double at, uint64_t event = 0) {
  return DiagLaunch{.seq = seq, .kind = kind, .device = "cpu", .stream_id = stream, .state = "enqueued",
                    .start_us = at, .event = event};
}

// A crash on stream 0 while stream 1 goes on: a record/wait pair, a launch
// whose end was inferred, the reference on the host, the failing launch.
Diagnosis Crashed() {
  Diagnosis d;
  d.status = DiagnosisStatus::kCrashed, d.signal = 11, d.signal_name = "SIGSEGV", d.op = "pool", d.op_id = "cc…03";
  d.trajectory = {Launch(1, 0, "scale", "aa…01", "finished", 10, 50), Sync(2, "record", 0, 52, 0x10),
                  Sync(3, "wait", 1, 55, 0x10), Launch(4, 1, "bias", "bb…02", "finished", 60, -1),
                  Launch(5, 1, "relu", "dd…04", "finished", 90, 130), Launch(6, 0, "pool", "cc…03",
                  "started, never finished", 100, -1), Launch(7, -1, "pool", "", "finished", 5, 8)};
  d.trajectory[5].failing = true;
  d.trajectory[6].device = "host";
  d.causes = {DiagCause{.cause = "out-of-bounds write on y in op pool (kernel pool_cpu, op_id cc…03)",
                        .confidence = "high", .rule = "out-of-bounds", .evidence = {"guard page"}, .fix = "bound it"},
              DiagCause{.cause = "input x of op bias (kernel bias_cpu, op_id bb…02) already held NaN",
                        .confidence = "low", .rule = "upstream-values", .evidence = {}, .fix = "look upstream"},
              DiagCause{.cause = "hang: kernel pool_cpu (op pool) started and never finished", .confidence = "medium",
                        .rule = "hang", .evidence = {}, .fix = "a loop"},
              DiagCause{.cause = "killed by SIGKILL", .confidence = "low", .rule = "killed", .evidence = {}, .fix = ""}};
  d.threads = {DiagThread{.tid = 7, .faulting = true, .frames = {DiagFrame{.pc = 0x42, .function = "pool_cpu",
                                                                             .file = "pool.cc", .module = "libp.so",
                                                                             .line = 12}}}};
  return d;
}

struct Converted {
  json trace, panel;
  std::string title;
};

Converted Convert(const std::string& text) {
  StatusOr<DiagnosisTimeline> t = DiagnosisTimelineFromJson(text, "d/diagnosis.json");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return {};
  return {json::parse(t->trace), json::parse(t->panel), t->title};
}

// The trace's events of one phase, by their record's seq.
std::map<uint64_t, json> BySeq(const json& trace, const std::string& ph) {
  std::map<uint64_t, json> out;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == ph) out[e["args"]["seq"].get<uint64_t>()] = e;
  }
  return out;
}

TEST(DiagnosisTimeline, TheFailingLaunchIsMarkedAndOnlyIt) {
  const Converted c = Convert(DiagnosisJson(Crashed()));
  EXPECT_EQ(c.trace["schema"], "opscope.diagnosis_timeline/1");
  int failing = 0;
  for (const json& e : c.trace["traceEvents"]) {
    if (e.contains("args") && e["args"].value("failing", false)) {
      ++failing;
      EXPECT_EQ(e["ph"], "X");
      EXPECT_EQ(e["args"]["seq"], 6);
      EXPECT_EQ(e["name"], "pool");
      EXPECT_EQ(e["args"]["op_id"], "cc…03");
      EXPECT_EQ(e["args"]["kernel"], "pool_cpu");
      EXPECT_EQ(e["args"]["state"], "started, never finished");
      EXPECT_EQ(e["args"]["grid"], json({4, 1, 1}));
      EXPECT_EQ(e["args"]["block"], json({64, 1, 1}));
      EXPECT_EQ(e["args"]["vector_width"], 2);
      EXPECT_EQ(e["args"]["tensors"][0]["stats"]["nan"], 1) << "tensors keep their stats";
      EXPECT_EQ(e["args"]["inputs"][0]["address"], "0x1000");
    }
  }
  EXPECT_EQ(failing, 1);
  EXPECT_EQ(c.panel["failing_seq"], 6);
  EXPECT_EQ(c.title, "pool: crashed (SIGSEGV)");
}

TEST(DiagnosisTimeline, ANeverFinishedLaunchRunsToTheEndOfTheRecording) {
  const std::map<uint64_t, json> bars = BySeq(Convert(DiagnosisJson(Crashed())).trace, "X");
  const json& pool = bars.at(6);
  // The last time recorded is relu's end, 130 µs.
  EXPECT_DOUBLE_EQ(pool["ts"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(pool["dur"].get<double>(), 30);
  EXPECT_TRUE(pool["args"]["unfinished"].get<bool>());
  EXPECT_TRUE(pool["args"]["end_us"].is_null()) << "the drawn end is not passed off as a measured one";
  EXPECT_FALSE(bars.at(5)["args"].contains("unfinished"));
  EXPECT_DOUBLE_EQ(bars.at(5)["dur"].get<double>(), 40);
  // Finished by stream order but with no end recorded: up to the next record on its stream.
  EXPECT_DOUBLE_EQ(bars.at(4)["dur"].get<double>(), 30);
  EXPECT_TRUE(bars.at(4)["args"]["end_inferred"].get<bool>());

  // The last thing recorded: it still gets a bar one can see (2% of the span, at least 1 µs).
  Diagnosis last = Crashed();
  last.trajectory[4].end_us = 95;
  const json alone = BySeq(Convert(DiagnosisJson(last)).trace, "X").at(6);
  EXPECT_NEAR(alone["dur"].get<double>(), 0.02 * (100 - 5), 1e-9);
  EXPECT_GT(alone["dur"].get<double>(), 0);
}

TEST(DiagnosisTimeline, OneLanePerDeviceAndStream) {
  const json trace = Convert(DiagnosisJson(Crashed())).trace;
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> lanes;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["name"] == "thread_name") lanes[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{1, "cpu"}, {2, "host"}}));
  EXPECT_EQ(lanes, (std::map<std::pair<int, int>, std::string>{
                       {{1, 0}, "stream 0"}, {{1, 1}, "stream 1"}, {{2, -1}, "no stream"}}));
  // Every record is on the lane of its device and stream.
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X" && e["ph"] != "i") continue;
    const int pid = e["args"]["device"] == "cpu" ? 1 : 2;
    EXPECT_EQ(e["pid"], pid) << e.dump();
    EXPECT_EQ(e["tid"], e["args"]["stream"]) << e.dump();
  }
}

TEST(DiagnosisTimeline, SyncRecordsAreInstantsAndAWaitIsJoinedToItsRecord) {
  const json trace = Convert(DiagnosisJson(Crashed())).trace;
  const std::map<uint64_t, json> instants = BySeq(trace, "i");
  ASSERT_EQ(instants.size(), 2u);
  EXPECT_EQ(instants.at(2)["name"], "record");
  EXPECT_EQ(instants.at(2)["tid"], 0);
  EXPECT_EQ(instants.at(3)["name"], "wait");
  EXPECT_EQ(instants.at(3)["tid"], 1);
  EXPECT_EQ(instants.at(3)["s"], "t");
  std::vector<json> flow;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "s" || e["ph"] == "f") flow.push_back(e);
  }
  ASSERT_EQ(flow.size(), 2u);
  EXPECT_EQ(flow[0]["ph"], "s");
  EXPECT_DOUBLE_EQ(flow[0]["ts"].get<double>(), 52);
  EXPECT_EQ(flow[0]["tid"], 0);
  EXPECT_DOUBLE_EQ(flow[1]["ts"].get<double>(), 55);
  EXPECT_EQ(flow[1]["tid"], 1);
  EXPECT_EQ(flow[0]["id"], flow[1]["id"]);
}

TEST(DiagnosisTimeline, ACauseNamesTheLaunchesItsTextNames) {
  const json panel = Convert(DiagnosisJson(Crashed())).panel;
  ASSERT_EQ(panel["causes"].size(), 4u);
  EXPECT_EQ(panel["causes"][0]["rank"], 1);
  EXPECT_EQ(panel["causes"][0]["launches"], json({6}));
  EXPECT_EQ(panel["causes"][1]["launches"], json({4}));
  EXPECT_EQ(panel["causes"][2]["launches"], json({6})) << "a hang names its kernel, not an op_id";
  EXPECT_EQ(panel["causes"][3]["launches"], json::array());
  EXPECT_EQ(panel["causes"][0]["evidence"], json({"guard page"}));
  EXPECT_EQ(panel["stack"][0]["function"], "pool_cpu");
  EXPECT_EQ(panel["stack"][0]["line"], 12);
  EXPECT_EQ(panel["signal"], "SIGSEGV");
}

TEST(DiagnosisTimeline, TheBrowserTestsFixtureConverts) {
  std::ifstream in(std::string(OPSCOPE_SOURCE_DIR) + "/tests/web/diagnosis/diagnosis.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  const Converted c = Convert(text);
  EXPECT_EQ(c.panel["failing_seq"], 7);
  EXPECT_EQ(BySeq(c.trace, "X").at(7)["args"]["unfinished"], true);
  EXPECT_EQ(c.panel["causes"][1]["launches"], json({5}));
}

TEST(DiagnosisTimeline, BadInputIsOneLineNamingTheFileAndWhatWasExpected) {
  // The lines core/json_field writes for every file opscope reads, with what file was expected.
  json wrong_type = json::parse(DiagnosisJson(Crashed()));
  wrong_type["snapshot"]["trajectory"][3]["start_us"] = "soon";
  json no_causes = json::parse(DiagnosisJson(Crashed()));
  no_causes.erase("causes");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "d/diagnosis.json: not valid JSON (line 1, column 3: unexpected 'o')"},
      {"[1, 2]", "d/diagnosis.json: expected a JSON object, found an array"},
      {R"({"schema": "opscope.report/1"})", "field schema: \"opscope.report/1\", not \"opscope.diagnosis/1\""},
      {R"({"status": "crashed"})", "field schema: missing (expected a string)"},
      {R"({"schema": "opscope.diagnosis/1", "status": "crashed"})", "field snapshot: missing (expected an array)"},
      {wrong_type.dump(), "d/diagnosis.json: field snapshot.trajectory[3].start_us: expected a number, found a string"},
      {no_causes.dump(), "field causes: missing (expected an array)"},
  };
  for (const auto& [text, expected] : cases) {
    StatusOr<DiagnosisTimeline> t = DiagnosisTimelineFromJson(text, "d/diagnosis.json");
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    const std::string message(t.status().message());
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.rfind("d/diagnosis.json: ", 0), 0u) << message;
    EXPECT_NE(message.find("expected an opscope.diagnosis/1 file"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace opscope
