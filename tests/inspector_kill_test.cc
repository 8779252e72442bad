// `inspector-cli run` killed with SIGKILL at many points of its run, into one
// folder, alternating two models: after every kill, `summary` and `export
// --format html` (the web UI's reader) either succeed and report the model
// that all the folder's run files belong to, or refuse it with exit 2 and one
// line. Never a model from a folder that mixes two runs, never a crash.
//
// The kill points come from clean runs measured first (process start, the
// first file written, the exit), not from fixed times: a third spread over
// the whole run, the rest over its writes, where a kill can split the folder.
// What each file belongs to is read here with nlohmann::json from the files
// themselves, and which model a fingerprint is was learnt from the clean runs.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tool_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace ::opscope::testing;  // tool_test_util.h

const std::string kCli = std::string(OPSCOPE_BINARY_DIR) + "/bin/inspector-cli";
const std::string kModels = std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/";
const char* const kModelNames[] = {"two_branch.onnx", "const_if.onnx"};

double Now() {
  timespec t;
  ::clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The run, started without a shell so that the kill reaches inspector-cli itself.
pid_t StartRun(const std::string& model, const fs::path& out) {
  const std::vector<std::string> args = {kCli, "run", kModels + model, "--output-dir", out.string(),
                                         // Fixed roofs: no calibration, nothing that depends on this machine.
                                         "--peak-bw", "10", "--peak-flops", "50"};
  ::opscope::testing::SpawnArgs spawn(args);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, kCli.c_str(), &actions, nullptr, spawn.argv.data(), spawn.env.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

// The file's last write, on the same clock as Now().
std::optional<double> WrittenAt(const fs::path& p) {
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  return static_cast<double>(st.st_mtim.tv_sec) + 1e-9 * static_cast<double>(st.st_mtim.tv_nsec);
}

struct CleanRun {
  double first_write_s = 0, exit_s = 0;  // after the start
  std::string fingerprint;               // the model's, as its files carry it
};

CleanRun MeasureCleanRun(const std::string& model, const fs::path& out) {
  CleanRun m;
  const double start = Now();
  const pid_t pid = StartRun(model, out);
  EXPECT_GT(pid, 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  m.exit_s = Now() - start;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << model << ": status " << status;
  if (std::optional<double> at = WrittenAt(out / "graph.json")) m.first_write_s = std::max(0.0, *at - start);
  const json graph = json::parse(Slurp(out / "graph.json"), nullptr, false);
  if (graph.is_object() && graph.contains("run")) m.fingerprint = graph["run"].value("model_fingerprint", "");
  return m;
}

// What the folder holds, read independently of the code under test.
struct FolderState {
  std::map<std::string, std::string> id_of;  // run file -> run id ("" when it has none or does not parse)
  std::set<std::string> ids, fingerprints;
  bool broken = false;  // a file without an identity, or not valid JSON
  bool Mixed() const { return ids.size() > 1 || broken; }
  bool Has(const std::string& f) const { return id_of.count(f) > 0; }
};

FolderState ReadFolder(const fs::path& dir) {
  FolderState s;
  for (const char* name : {"graph.json", "trace.json", "summary.json", "capture.json"}) {
    if (!fs::exists(dir / name)) continue;
    const json j = json::parse(Slurp(dir / name), nullptr, false);
    const json* run = nullptr;
    if (j.is_object()) {
      if (std::string(name) == "trace.json" && j.contains("otherData")) run = &j["otherData"]["run"];
      if (std::string(name) != "trace.json" && j.contains("run")) run = &j["run"];
    }
    if (!run || !run->is_object()) {
      s.broken = true;
      s.id_of[name] = "";
      continue;
    }
    s.id_of[name] = run->value("id", "");
    s.ids.insert(s.id_of[name]);
    s.fingerprints.insert(run->value("model_fingerprint", ""));
  }
  if (fs::exists(dir / "roofline.svg")) {
    const std::string svg = Slurp(dir / "roofline.svg");
    const size_t at = svg.find("data-run-id=\"");
    if (at == std::string::npos) {
      s.broken = true;
    } else {
      const size_t begin = at + 13;
      s.ids.insert(svg.substr(begin, svg.find('"', begin) - begin));
    }
  }
  return s;
}

void ExpectOneLineRefusal(const ToolResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << what << ": " << r.out << r.err;
  EXPECT_EQ(r.err_lines(), 1) << what << ": " << r.err;
  EXPECT_EQ(r.err.rfind("inspector-cli: error: ", 0), 0u) << what << ": " << r.err;
}

TEST(InspectorKill, AKilledRunNeverLeavesAFolderThatReadsAsAMixOfTwoRuns) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  std::map<std::string, std::string> model_of;  // fingerprint -> model name
  std::vector<CleanRun> clean;
  for (const char* model : kModelNames) {
    CleanRun m = MeasureCleanRun(model, tmp.path() / ("clean_" + std::string(model)));
    ASSERT_FALSE(m.fingerprint.empty()) << model;
    model_of[m.fingerprint] = model;
    clean.push_back(m);
  }
  ASSERT_EQ(model_of.size(), 2u) << "the two models must have different fingerprints";

  constexpr int kKills = 36;
  // On a machine too loaded to finish in time, fewer kills rather than a timeout.
  constexpr double kBudgetS = 45;
  const double began = Now();
  int done = 0, summaries_ok = 0, refused = 0, finished_runs = 0;
  std::map<std::string, int> states;  // which run files were there after a kill
  for (int i = 0; i < kKills && (i < 12 || Now() - began < kBudgetS); ++i, ++done) {
    const int which = i % 2;
    const CleanRun& m = clean[which];
    // A third of the kills spread over the whole run, the rest over its writes
    // (from a little before the first file until after the exit).
    const int k = i / 2, per_model = kKills / 2;
    double delay;
    if (k < per_model / 3) {
      delay = m.exit_s * (k + 0.5) / (per_model / 3);
    } else {
      const double lo = std::max(0.0, m.first_write_s - 0.3 * (m.exit_s - m.first_write_s));
      const int slot = k - per_model / 3, slots = per_model - per_model / 3;
      delay = lo + (m.exit_s * 1.05 - lo) * (slot + 0.5) / slots;
    }
    SCOPED_TRACE("kill " + std::to_string(i) + ": " + kModelNames[which] + " after " + std::to_string(delay) + " s");
    const pid_t pid = StartRun(kModelNames[which], dir);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFEXITED(status)) {
      ++finished_runs;
      EXPECT_EQ(WEXITSTATUS(status), 0) << "a run that was not killed failed";
    }

    const FolderState s = ReadFolder(dir);
    std::string present;
    for (const auto& [name, id] : s.id_of) present += (present.empty() ? "" : ",") + name;
    ++states[present.empty() ? "(none)" : present];

    const ToolResult summary = Shell(kCli + " summary " + dir.string());
    if (summary.exit_code == 0) {
      ++summaries_ok;
      EXPECT_FALSE(s.Mixed()) << "summary read a folder of two runs: " << summary.out;
      ASSERT_TRUE(s.Has("capture.json"));
      ASSERT_EQ(s.fingerprints.size(), 1u);
      const std::string model = model_of[*s.fingerprints.begin()];
      const std::string first_line = summary.out.substr(0, summary.out.find('\n'));
      EXPECT_NE(first_line.find("/" + model + " "), std::string::npos)
          << "summary names another model than the folder's files: " << first_line;
    } else {
      ++refused;
      ExpectOneLineRefusal(summary, "summary");
      if (s.ids.size() > 1) {
        EXPECT_NE(summary.err.find("files of two runs"), std::string::npos) << summary.err;
      }
    }

    const ToolResult html = Shell(kCli + " export --input-dir " + dir.string() + " --format html");
    if (html.exit_code == 0) {
      EXPECT_FALSE(s.Mixed()) << "the web report was built from a folder of two runs";
      ASSERT_TRUE(s.Has("graph.json") && s.Has("trace.json") && s.Has("summary.json"));
      const std::string model = model_of[*s.fingerprints.begin()];
      const std::string other = model == kModelNames[0] ? kModelNames[1] : kModelNames[0];
      const std::string page = Slurp(dir / "report.html");
      EXPECT_NE(page.find("/" + model), std::string::npos) << "the report does not show the folder's model";
      EXPECT_EQ(page.find("/" + other), std::string::npos) << "the report shows the other model";
    } else {
      ExpectOneLineRefusal(html, "export --format html");
    }
  }
  // One more run, not killed: it starts from whatever the kills left, and
  // leaves a whole run and no temporary file behind.
  ToolResult last = Shell(kCli + " run " + kModels + kModelNames[0] + " --output-dir " + dir.string() +
                          " --peak-bw 10 --peak-flops 50");
  ASSERT_EQ(last.exit_code, 0) << last.err;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  }
  ToolResult summary = Shell(kCli + " summary " + dir.string());
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find(kModelNames[0]), std::string::npos);

  std::string seen;
  for (const auto& [state, n] : states) seen += "\n  " + std::to_string(n) + "x " + state;
  std::printf("%d kills (clean runs %.3f s and %.3f s, first write at %.3f s and %.3f s): %d runs finished first, "
              "summary read %d folders and refused %d; run files left:%s\n",
              done, clean[0].exit_s, clean[1].exit_s, clean[0].first_write_s, clean[1].first_write_s,
              finished_runs, summaries_ok, refused, seen.c_str());
  EXPECT_GE(done, 12);
}

}  // namespace
