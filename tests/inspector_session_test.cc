// Capture sessions end to end: `inspector-cli start` prints an environment,
// an ordinary program (examples/session_demo, no session code) runs under it,
// `inspector-cli export` turns the records into graph.json, trace.json and
// summary.json. Counts are checked against the model file and the schedule
// the library makes of it, not against numbers written down here.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "capture/session.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/runtime/scheduler.h"
#include "onnx/onnx_pb.h"
#include "graph_json_test_util.h"
#include "tool_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kDemoDispatches = 2;  // session_demo dispatches Relu and Add itself

using Result = ::opscope::testing::ToolResult;
using namespace ::opscope::testing;  // tool_test_util.h

std::string Bin(const std::string& name) { return std::string(OPSCOPE_BINARY_DIR) + "/bin/" + name; }
std::string Model() { return std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/two_branch.onnx"; }

class InspectorSession : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("inspector_session_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs a shell script with stdout and stderr captured.
  Result Shell(const std::string& script) {
    const fs::path file = dir_ / "script.sh", out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    std::ofstream(file) << script << "\n";
    const std::string line = "sh " + file.string() + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(line.c_str());
    Result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(out);
    r.err = Slurp(err);
    for (const fs::path& p : {file, out, err}) fs::remove(p);
    return r;
  }
  Result Inspector(const std::string& args) { return Shell(Bin("inspector-cli") + " " + args); }

  // start, then the demo in a shell that evaluated what start printed.
  fs::path Record(const std::string& collectors) {
    const fs::path session = dir_ / "session";
    Result start = Inspector("start --output-dir " + session.string() + " " + collectors);
    EXPECT_EQ(start.exit_code, 0) << start.err;
    EXPECT_NE(start.out.find("export OPSCOPE_SESSION="), std::string::npos) << start.out;
    Result demo = Shell(start.out + "\n" + Bin("session_demo") + " " + Model());
    EXPECT_EQ(demo.exit_code, 0) << demo.out << demo.err;
    EXPECT_TRUE(demo.err.empty()) << demo.err;
    return session;
  }

  static std::set<std::string> Files(const fs::path& d) {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(d)) names.insert(e.path().filename().string());
    return names;
  }
  static int CountPrefix(const std::set<std::string>& names, const std::string& prefix) {
    int n = 0;
    for (const std::string& s : names) n += s.rfind(prefix, 0) == 0;
    return n;
  }

  fs::path dir_;
};

// What the library schedules for the model on the demo's two streams.
struct Expected {
  int onnx_nodes = 0;
  int64_t tasks = 0, kernel_tasks = 0;
};

Expected ExpectedFromModel() {
  Expected e;
  onnx::ModelProto proto;
  std::ifstream f(Model(), std::ios::binary);
  EXPECT_TRUE(proto.ParseFromIstream(&f));
  e.onnx_nodes = proto.graph().node_size();
  auto model = opscope::graph::ImportOnnx(Model());
  EXPECT_TRUE(model.ok());
  EXPECT_TRUE(opscope::graph::Compile(*model).ok());
  auto s = opscope::graph::ScheduleGraph(model->compiled, {.compute_streams = 2});
  EXPECT_TRUE(s.ok());
  e.tasks = static_cast<int64_t>(s->tasks.size());
  for (const auto& t : s->tasks) e.kernel_tasks += t.desc.kind == opscope::graph::TaskKind::kKernel;
  return e;
}

std::vector<json> XEvents(const json& trace) {
  std::vector<json> x;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") x.push_back(e);
  }
  return x;
}

TEST_F(InspectorSession, BothCollectorsGiveGraphTasksAndDispatches) {
  const Expected want = ExpectedFromModel();
  ASSERT_GT(want.tasks, 0);
  const fs::path session = Record("--enable-graph --enable-runtime");
  const std::set<std::string> recorded = Files(session);
  EXPECT_EQ(CountPrefix(recorded, "graph-"), 1);
  EXPECT_EQ(CountPrefix(recorded, "runtime-"), 1);

  Result exp = Inspector("export --input-dir " + session.string() + " --format json");
  ASSERT_EQ(exp.exit_code, 0) << exp.err;

  const json graph = ReadGraphJson(session / "graph.json");
  EXPECT_EQ(graph.at("schema"), "opscope.graph/3");
  EXPECT_EQ(static_cast<int>(graph.at("framework").at("nodes").size()), want.onnx_nodes);
  EXPECT_TRUE(graph.at("session").at("framework_known").get<bool>());

  const json trace = json::parse(Slurp(session / "trace.json"));
  EXPECT_EQ(trace.at("schema"), "opscope.trace/1");
  const std::vector<json> x = XEvents(trace);
  int64_t dispatched = 0, graph_tasks = 0;
  std::set<std::pair<int, std::string>> tids;
  for (const json& e : x) {
    const json& a = e.at("args");
    ASSERT_TRUE(a.contains("op_id")) << e.dump();
    EXPECT_EQ(a.at("op_id").get<std::string>().rfind("0x", 0), 0u) << e.dump();
    if (e.at("cat") == "kernel") {
      EXPECT_NE(a.at("op_id"), "0x0") << e.dump();
      // Asynchronous launches report their launch config too.
      EXPECT_TRUE(a.at("grid").is_array()) << e.dump();
      EXPECT_GE(a.at("grid").at(0).get<int64_t>(), 1);
    }
    EXPECT_GE(e.at("dur").get<double>(), 0.0);
    if (e.at("name").get<std::string>().rfind("dispatched ", 0) == 0) ++dispatched;
    else ++graph_tasks;
  }
  EXPECT_EQ(graph_tasks, want.tasks);
  EXPECT_EQ(dispatched, kDemoDispatches);

  // The launches the graph ran are its tasks, not counted twice.
  const std::string runtime_name = *std::find_if(recorded.begin(), recorded.end(), [](const std::string& s) {
    return s.rfind("runtime-", 0) == 0;
  });
  const json runtime = json::parse(Slurp(session / runtime_name));
  EXPECT_EQ(runtime.at("schema"), "opscope.session-runtime/1");
  EXPECT_EQ(static_cast<int64_t>(runtime.at("launches").size()), want.kernel_tasks + kDemoDispatches);
  EXPECT_EQ(runtime.at("dropped"), 0);

  const json summary = json::parse(Slurp(session / "summary.json"));
  EXPECT_EQ(summary.at("schema"), "opscope.summary/1");
  int64_t count = 0;
  for (const json& r : summary.at("op_types")) count += r.at("count").get<int64_t>();
  EXPECT_EQ(count, static_cast<int64_t>(x.size()));
}

TEST_F(InspectorSession, RuntimeOnlyGivesTraceAndSummaryFromLaunches) {
  const Expected want = ExpectedFromModel();
  const fs::path session = Record("--enable-runtime");
  const std::set<std::string> recorded = Files(session);
  EXPECT_EQ(CountPrefix(recorded, "graph-"), 0);
  EXPECT_EQ(CountPrefix(recorded, "runtime-"), 1);
  Result exp = Inspector("export --input-dir " + session.string() + " --format json");
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  EXPECT_NE(exp.out.find("no graph collected"), std::string::npos) << exp.out;
  EXPECT_FALSE(fs::exists(session / "graph.json"));
  const json trace = json::parse(Slurp(session / "trace.json"));
  const std::vector<json> x = XEvents(trace);
  EXPECT_EQ(static_cast<int64_t>(x.size()), want.kernel_tasks + kDemoDispatches);
  // One tid per stream: the executor's two compute streams and the default stream.
  std::set<int> tids;
  for (const json& e : x) tids.insert(e.at("tid").get<int>());
  int thread_names = 0;
  for (const json& e : trace.at("traceEvents")) thread_names += e.at("ph") == "M" && e.at("name") == "thread_name";
  EXPECT_EQ(static_cast<int>(tids.size()), thread_names);
  EXPECT_EQ(thread_names, 3);
  const json summary = json::parse(Slurp(session / "summary.json"));
  int64_t count = 0;
  for (const json& r : summary.at("op_types")) count += r.at("count").get<int64_t>();
  EXPECT_EQ(count, static_cast<int64_t>(x.size()));
}

TEST_F(InspectorSession, TwoProgramsInOneSessionAreMergedApart) {
  const Expected want = ExpectedFromModel();
  const fs::path session = Record("--enable-graph --enable-runtime");
  // The same shell session, a second program.
  Result second = Shell("OPSCOPE_SESSION=" + session.string() + " " + Bin("session_demo") + " " + Model());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const std::set<std::string> recorded = Files(session);
  EXPECT_EQ(CountPrefix(recorded, "graph-"), 2);
  EXPECT_EQ(CountPrefix(recorded, "runtime-"), 2);
  Result exp = Inspector("export --input-dir " + session.string() + " --format json");
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  const json trace = json::parse(Slurp(session / "trace.json"));
  const std::vector<json> x = XEvents(trace);
  EXPECT_EQ(static_cast<int64_t>(x.size()), 2 * (want.tasks + kDemoDispatches));
  // Each process's streams are its own tids, named with its pid.
  std::set<int> tids;
  for (const json& e : x) tids.insert(e.at("tid").get<int>());
  int named = 0;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "M" || e.at("name") != "thread_name") continue;
    ++named;
    EXPECT_EQ(e.at("args").at("name").get<std::string>().rfind("pid ", 0), 0u) << e.dump();
  }
  EXPECT_EQ(static_cast<int>(tids.size()), named);
  EXPECT_EQ(named, 2 * 4);  // per process: 2 compute streams, the copy stream, the default stream
  // Flow events pair up: every wait of both runs found its recorder.
  int starts = 0, finishes = 0;
  for (const json& e : trace.at("traceEvents")) starts += e.at("ph") == "s", finishes += e.at("ph") == "f";
  EXPECT_EQ(starts, finishes);
  EXPECT_GT(starts, 0);
  const json graph = ReadGraphJson(session / "graph.json");
  EXPECT_EQ(graph.at("session").at("graphs_collected"), 2);
}

TEST_F(InspectorSession, CollectorsOffRecordNothingAndExportSaysSo) {
  const fs::path session = Record("");
  EXPECT_EQ(Files(session), std::set<std::string>{"session.json"});
  ExpectUsageError(Inspector("export --input-dir " + session.string() + " --format json"), "recorded nothing");
  EXPECT_EQ(Files(session), std::set<std::string>{"session.json"});
}

TEST_F(InspectorSession, StartAgainClearsTheEarlierRecords) {
  const fs::path session = Record("--enable-runtime");
  ASSERT_EQ(CountPrefix(Files(session), "runtime-"), 1);
  Result again = Inspector("start --output-dir " + session.string() + " --enable-graph");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Files(session), std::set<std::string>{"session.json"});
  const json config = json::parse(Slurp(session / "session.json"));
  EXPECT_EQ(config.at("schema"), "opscope.session/1");
  EXPECT_TRUE(config.at("collectors").at("graph").get<bool>());
  EXPECT_FALSE(config.at("collectors").at("runtime").get<bool>());
}

TEST_F(InspectorSession, BadInputIsOneLine) {
  const fs::path blocker = dir_ / "a_file";
  std::ofstream(blocker) << "x";
  ExpectUsageError(Inspector("start --output-dir " + (blocker / "session").string() + " --enable-runtime"),
                     "--output-dir");
  ExpectUsageError(Inspector("start --enable-runtime"), "--output-dir");
  // A broken record names its file.
  const fs::path session = dir_ / "broken";
  ASSERT_EQ(Inspector("start --output-dir " + session.string() + " --enable-runtime").exit_code, 0);
  std::ofstream(session / "runtime-12.json") << "{\"schema\": \"opscope.session-runtime/1\"}";
  ExpectUsageError(Inspector("export --input-dir " + session.string()), "runtime-12.json");
  EXPECT_FALSE(fs::exists(session / "trace.json"));
}

// summary and path read a session folder as they read a `run` folder: summary
// merges the records (export need not have run), path reads the last graph.
TEST_F(InspectorSession, SummaryAndPathReadTheSessionFolder) {
  const Expected want = ExpectedFromModel();
  const fs::path session = Record("--enable-graph --enable-runtime");
  // Every row of every table (--top bounds them all).
  Result summary = Inspector("summary " + session.string() + " --top 1000");
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_FALSE(fs::exists(session / "summary.json")) << "summary writes nothing";
  for (const char* s : {"op type", "data movement", "compute 0", "copy", "critical path"}) {
    EXPECT_NE(summary.out.find(s), std::string::npos) << s << " in\n" << summary.out;
  }
  Result top3 = Inspector("summary " + session.string() + " --top 3");
  ASSERT_EQ(top3.exit_code, 0) << top3.err;
  EXPECT_NE(top3.out.find("top 3 tasks"), std::string::npos) << top3.out;
  EXPECT_NE(summary.out.find("tasks " + std::to_string(want.tasks + kDemoDispatches) + "\n"), std::string::npos)
      << summary.out;
  // Every op-type row says what export's summary.json says.
  ASSERT_EQ(Inspector("export --input-dir " + session.string() + " --format json").exit_code, 0);
  const json rows = json::parse(Slurp(session / "summary.json")).at("op_types");
  ASSERT_FALSE(rows.empty());
  for (const json& r : rows) {
    char row[128];
    std::snprintf(row, sizeof(row), "\n%-24s %6lld ", r.at("op_type").get<std::string>().c_str(),
                  static_cast<long long>(r.at("count").get<int64_t>()));
    EXPECT_NE(summary.out.find(row), std::string::npos) << row << " in\n" << summary.out;
  }

  // The cones equal those of a `run` of the same model, reached by importing it again.
  const fs::path run_dir = dir_ / "run";
  ASSERT_EQ(Inspector("run " + Model() + " --streams 2 --output-dir " + run_dir.string()).exit_code, 0);
  const std::string node = "/join/concat/Concat";
  Result from_session = Inspector("path " + session.string() + " --node " + node + " --json");
  Result from_run = Inspector("path " + run_dir.string() + " --node " + node + " --json");
  ASSERT_EQ(from_session.exit_code, 0) << from_session.err;
  ASSERT_EQ(from_run.exit_code, 0) << from_run.err;
  const json a = json::parse(from_session.out), b = json::parse(from_run.out);
  // A session's graph records carry no inferred dtypes and shapes: the
  // tensors are compared by name and by where they come from and go to.
  const auto cone = [](json layer) {
    for (const char* side : {"inputs", "outputs"}) {
      for (json& t : layer.at(side)) t.erase("dtype"), t.erase("shape");
    }
    return layer;
  };
  EXPECT_EQ(cone(a.at("framework")), cone(b.at("framework")));
  EXPECT_EQ(cone(a.at("compiled")), cone(b.at("compiled")));
  EXPECT_FALSE(a.at("framework").at("ancestors").empty());
  EXPECT_EQ(a.at("session").at("source"), ReadGraphJson(session / "graph.json").at("session").at("source"));
  // The critical path runs through that graph's own tasks only, the launches outside it left out.
  const json& cp = a.at("critical_path").at("tasks");
  ASSERT_FALSE(cp.empty());
  for (const json& t : cp) EXPECT_LT(t.at("task_id").get<int64_t>(), want.tasks) << t.dump();
  EXPECT_TRUE(a.at("critical_path").at("node_on_path").get<bool>());

  Result text = Inspector("path " + session.string() + " --node " + node);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("session graph graph-"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ancestors"), std::string::npos) << text.out;
  ExpectUsageError(Inspector("path " + session.string() + " --node /join/concat/Conca"),
                     "closest: /join/concat/Concat");

  // A record whose graph reads values nothing makes is refused, naming the record.
  const std::string source = a.at("session").at("source").get<std::string>();
  json record = json::parse(Slurp(session / source));
  opscope::graph::ExpandGraphJson(record.at("graph"));  // rows, whose tensors name values (not indices into them)
  record.at("graph").at("compiled")["values"] = json::array();
  std::ofstream(session / source) << record.dump();
  ExpectUsageError(Inspector("path " + session.string() + " --node " + node), source + ": compiled graph: ");
}

TEST_F(InspectorSession, SummaryOfLaunchesAloneAndPathNeedsTheGraphCollector) {
  const Expected want = ExpectedFromModel();
  const fs::path session = Record("--enable-runtime");
  Result summary = Inspector("summary " + session.string());
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("tasks " + std::to_string(want.kernel_tasks + kDemoDispatches) + "\n"),
            std::string::npos)
      << summary.out;
  ExpectUsageError(Inspector("path " + session.string() + " --node /join/concat/Concat"), "--enable-graph");

  const fs::path empty = dir_ / "empty";
  ASSERT_EQ(Inspector("start --output-dir " + empty.string() + " --enable-graph").exit_code, 0);
  ExpectUsageError(Inspector("summary " + empty.string()), "recorded nothing");
  ExpectUsageError(Inspector("path " + empty.string() + " --node x"), "collected no graph");
  // A broken graph record is named.
  std::ofstream(empty / "graph-12-0.json") << "{\"schema\": \"opscope.session-graph/1\"}";
  ExpectUsageError(Inspector("path " + empty.string() + " --node x"), "graph-12-0.json");
  ExpectUsageError(Inspector("summary " + empty.string()), "graph-12-0.json");
  EXPECT_EQ(Files(empty), (std::set<std::string>{"graph-12-0.json", "session.json"}));
}

TEST_F(InspectorSession, NoSessionVariableMeansNoSession) {
  // This test program links libopscope.so and runs with no OPSCOPE_SESSION.
  ASSERT_EQ(std::getenv(opscope::kSessionEnv), nullptr);
  EXPECT_EQ(opscope::ActiveSession(), nullptr);
  // A session folder that cannot be read is reported and records nothing.
  Result r = Shell("OPSCOPE_SESSION=" + (dir_ / "nowhere").string() + " " + Bin("session_demo") + " " + Model());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("recording nothing"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "nowhere"));
}

}  // namespace
