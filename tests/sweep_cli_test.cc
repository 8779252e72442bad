// ops-debug sweep through the real binary and the example plugin
// (examples/perf_ops): the trap's fast wrong block=512 is FAILED and never
// best, a rerun resumes from sweep.json, Ctrl-C leaves a valid partial
// sweep.json and exit 130, and bad input is one line, exit 2, nothing
// written. No speed is asserted (the machine is shared): every check holds
// whichever candidate happens to be fastest. The roofs are given, so no test
// waits for a calibration.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "core/asan.h"
#include "tool_test_util.h"

extern char** environ;

namespace opscope {
namespace {

using nlohmann::json;
using testing::Contains;
using testing::Slurp;
using testing::TempDir;
using testing::ToolResult;
namespace fs = std::filesystem;

const std::string kOpsDebug = std::string(OPSCOPE_BINARY_DIR) + "/bin/ops-debug";
const std::string kPerfOps = std::string(OPSCOPE_BINARY_DIR) + "/lib/libperf_ops.so";

std::string SweepLine(const std::string& op, const std::string& shapes, const fs::path& dir, const std::string& extra) {
  const std::string iters = Contains(extra, "--iters") ? "" : " --iters 3";
  return kOpsDebug + " sweep --plugin " + kPerfOps + " --op " + op + " --input-shapes '" + shapes +
         "' --peak-bw 20 --peak-flops 100 --warmup 1" + iters + " --output-dir " + dir.string() + " " + extra;
}

json ReadJson(const fs::path& p) { return json::parse(Slurp(p)); }

const json* CandidateWith(const json& sweep, int64_t block) {
  for (const json& c : sweep["candidates"]) {
    if (c["tunables"]["block"] == block) return &c;
  }
  return nullptr;
}

TEST(SweepCli, TheTrapsFastWrongBlockIsFailedAndNeverBest) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  ToolResult r = testing::Shell(SweepLine("sweep_trap", "[3001]", dir, ""));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "") << "no progress when piped";
  const json s = ReadJson(dir / "sweep.json");
  EXPECT_EQ(s["schema"], "opscope.sweep/1");
  EXPECT_EQ(s["complete"], true);
  ASSERT_EQ(s["candidates"].size(), 5u);
  const json* trap = CandidateWith(s, 512);
  ASSERT_NE(trap, nullptr);
  EXPECT_EQ((*trap)["status"], "FAILED");
  EXPECT_TRUE(Contains((*trap)["why"], "mismatched")) << (*trap)["why"];
  // What failed, by kind: the skipped blocks are never written (NaN poison),
  // which "max abs err" alone leaves out.
  EXPECT_TRUE(Contains((*trap)["why"], "never written by the kernel")) << (*trap)["why"];
  EXPECT_TRUE(Contains((*trap)["why"], "(NaN poison)")) << (*trap)["why"];
  EXPECT_GT((*trap)["device"]["count"].get<int>(), 0) << "a wrong candidate is timed too, and still not best";
  for (int64_t b : {64, 128, 256, 1024}) EXPECT_EQ((*CandidateWith(s, b))["status"], "passed") << b;
  // Best: a passed candidate, whatever the timings were.
  ASSERT_TRUE(s["best"].is_object());
  EXPECT_NE(s["best"]["tunables"]["block"], 512);
  EXPECT_EQ(s["candidates"][s["best"]["index"].get<int>()]["status"], "passed");
  EXPECT_EQ(s["current"]["tunables"]["block"], 64);
  // The text: the trap listed as FAILED, current and best side by side.
  EXPECT_TRUE(std::regex_search(r.out, std::regex("block=512 +FAILED .*never best"))) << r.out;
  EXPECT_TRUE(Contains(r.out, "current")) << r.out;
  EXPECT_TRUE(Contains(r.out, "best")) << r.out;
  EXPECT_TRUE(Contains(r.out, "repro: ops-debug sweep --plugin")) << r.out;
  // The page: the heatmap's five cells, the trap's crossed.
  const std::string html = Slurp(dir / "sweep.html");
  EXPECT_TRUE(Contains(html, "<g class=\"cell failed\" data-x=\"512\">")) << html;
  EXPECT_FALSE(Contains(html, "<g class=\"cell failed best")) << html;
}

// Candidates faster than their "lower bound" are said once, with why.
TEST(SweepCli, CandidatesAboveTheirRoofAreSaidOnce) {
  TempDir tmp;
  const std::string line = kOpsDebug + " sweep --plugin " + kPerfOps +
                           " --op sweep_trap --input-shapes '[3001]' --warmup 1 --iters 3 --output-dir ";
  ToolResult low = testing::Shell(line + (tmp.path() / "low").string() + " --peak-bw 0.000001 --peak-flops 0.000001");
  ASSERT_EQ(low.exit_code, 0) << low.out << low.err;
  EXPECT_TRUE(std::regex_search(low.out, std::regex("\n  5 candidate\\(s\\) above their roof \\(efficiency over 100%\\):\n"
                                                    "    block=[0-9]+(, block=[0-9]+){4}: above the memory "
                                                    "roof: its data came from cache, not DRAM\n")))
      << low.out;
  EXPECT_TRUE(Contains(Slurp(tmp.path() / "low" / "sweep.html"), "<pre id=\"above-roof\">5 candidate(s) above their roof"));
  ToolResult far = testing::Shell(line + (tmp.path() / "far").string() + " --peak-bw 1000000 --peak-flops 1000000");
  ASSERT_EQ(far.exit_code, 0) << far.out << far.err;
  EXPECT_FALSE(Contains(far.out, "above the")) << far.out;
  EXPECT_FALSE(Contains(Slurp(tmp.path() / "far" / "sweep.html"), "above-roof"));
}

TEST(SweepCli, ARerunResumesFromSweepJson) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  ToolResult first = testing::Shell(SweepLine("contiguous_scale", "[37,53]", dir, "--block 64,128"));
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_TRUE(Contains(first.out, "(2 measured, 0 cached)")) << first.out;
  // One more value: the two measured are reused, only the new one runs.
  ToolResult second = testing::Shell(SweepLine("contiguous_scale", "[37,53]", dir, "--block 64,128,256"));
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_TRUE(Contains(second.out, "(1 measured, 2 cached)")) << second.out;
  EXPECT_TRUE(std::regex_search(second.out, std::regex("block=128 .*\\(cached\\)"))) << second.out;
  const json s = ReadJson(dir / "sweep.json");
  EXPECT_EQ((*CandidateWith(s, 64))["cached"], true);
  EXPECT_EQ((*CandidateWith(s, 128))["cached"], true);
  EXPECT_EQ((*CandidateWith(s, 256))["cached"], false);
  // Everything cached: nothing runs.
  ToolResult third = testing::Shell(SweepLine("contiguous_scale", "[37,53]", dir, "--block 64,128,256"));
  EXPECT_TRUE(Contains(third.out, "(0 measured, 3 cached)")) << third.out;
  // Another instance (shape) in the same folder: not reused.
  ToolResult other = testing::Shell(SweepLine("contiguous_scale", "[38,53]", dir, "--block 64,128"));
  EXPECT_TRUE(Contains(other.out, "(2 measured, 0 cached)")) << other.out;
  EXPECT_TRUE(Contains(other.out, "holds another op instance")) << other.out;
  // --no-cache measures again.
  ToolResult fresh = testing::Shell(SweepLine("contiguous_scale", "[38,53]", dir, "--block 64,128 --no-cache"));
  EXPECT_TRUE(Contains(fresh.out, "(2 measured, 0 cached)")) << fresh.out;
}

// A rebuilt plugin (here: the same file, written again) invalidates the
// cache: its timings and verdicts were the old kernel's.
TEST(SweepCli, ARebuiltPluginIsMeasuredAgain) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  const fs::path plugin = tmp.path() / "perf_ops.so";
  fs::copy_file(kPerfOps, plugin);
  const std::string line = kOpsDebug + " sweep --plugin " + plugin.string() +
                           " --op contiguous_scale --input-shapes '[37,53]' --peak-bw 20 --peak-flops 100 --warmup 1"
                           " --iters 3 --block 64,128 --output-dir " + dir.string();
  ToolResult first = testing::Shell(line);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_TRUE(Contains(first.out, "(2 measured, 0 cached)")) << first.out;
  EXPECT_TRUE(Contains(ReadJson(dir / "sweep.json")["build"].get<std::string>(), plugin.string()));
  ToolResult same = testing::Shell(line);
  EXPECT_TRUE(Contains(same.out, "(0 measured, 2 cached)")) << same.out;
  fs::last_write_time(plugin, fs::last_write_time(plugin) + std::chrono::seconds(5));
  ToolResult rebuilt = testing::Shell(line);
  ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.out << rebuilt.err;
  EXPECT_TRUE(Contains(rebuilt.out, "(2 measured, 0 cached)")) << rebuilt.out;
  EXPECT_TRUE(Contains(rebuilt.out, "another build of the kernels")) << rebuilt.out;
}

// SIGINT once the first candidate is in sweep.json (the handler is installed
// before any candidate runs): the sweep stops after the candidate it is on.
// Each candidate is hundreds of calls on a 16 MiB tensor, so the five take
// seconds and the signal lands long before the last one.
TEST(SweepCli, CtrlCLeavesAValidPartialSweepJsonAndExits130) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out", out = tmp.path() / "stdout", err = tmp.path() / "stderr";
  // Each candidate takes long enough for the signal to land among the five.
  // Under ASan one of [4096,1024] x 300 took two minutes, and Ctrl-C waits
  // for the current one: there, 160 times less work still takes seconds.
#ifdef OPSCOPE_ASAN
  const char *shape = "[256,1024]", *iters = "30";
#else
  const char *shape = "[4096,1024]", *iters = "300";
#endif
  const std::vector<std::string> args = {kOpsDebug, "sweep", "--plugin", kPerfOps, "--op", "sweep_trap",
                                         "--input-shapes", shape, "--peak-bw", "20", "--peak-flops", "100",
                                         "--warmup", "1", "--iters", iters, "--output-dir", dir.string()};
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, kOpsDebug.c_str(), &files, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&files);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(dir / "sweep.json") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(fs::exists(dir / "sweep.json")) << Slurp(err);
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << "\n" << Slurp(err);
  EXPECT_EQ(WEXITSTATUS(status), 130) << Slurp(out) << Slurp(err);
  const json s = ReadJson(dir / "sweep.json");  // parses: written whole
  EXPECT_EQ(s["complete"], false);
  EXPECT_EQ(s["candidates_planned"], 5);
  EXPECT_GE(s["candidates"].size(), 1u);
  EXPECT_LT(s["candidates"].size(), 5u);
  EXPECT_TRUE(Contains(Slurp(out), "partial   stopped after")) << Slurp(out);
  EXPECT_TRUE(Contains(Slurp(dir / "sweep.html"), "Partial: the sweep was stopped."));
}

TEST(SweepCli, BadInputIsOneLineExit2NothingWritten) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  const fs::path file = tmp.path() / "a_file";
  std::ofstream(file) << "x";
  struct Bad {
    std::string op, extra, says;
  };
  const std::vector<Bad> cases = {
      {"sweep_trap", "--block 64,100", "--block: op sweep_trap's tunable 'block' takes 64, 128, 256, 512, 1024; 100 is not one of them"},
      {"sweep_trap", "--block 64,x", "--block: expected integers separated by commas, got 'x'"},
      {"sweep_trap", "--vec 1,2", "--vec: op sweep_trap has no tunable 'vec' (it declares: block)"},
      {"sweep_trap", "--tunable tile=4", "--tunable tile: op sweep_trap has no tunable 'tile'"},
      {"sweep_trap", "--tunable tile", "--tunable 'tile': expected NAME=V1,V2,..."},
      {"sweep_trap", "--tunables block=100", "--tunables: op sweep_trap's tunable 'block' takes"},
      {"sweep_trap", "--iters 0", "--iters: expected at least 1 call to time, got 0"},
      {"sweep_trap", "--report r.json", "--report: not taken by sweep"},
      {"MatMul", "", "declares no tunables and none were asked: a sweep with no candidates"},
      {"sweep_trap", "--input-shapes '[2,x]'", "--input-shapes"},
  };
  for (const Bad& b : cases) {
    std::string line = SweepLine(b.op, "[3001]", dir, b.extra);
    if (b.op == "MatMul") line = SweepLine("MatMul", "[4,4];[4,4]", dir, b.extra);
    ToolResult r = testing::Shell(line);
    EXPECT_EQ(r.exit_code, 2) << b.extra << "\n" << r.out << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_TRUE(Contains(r.err, b.says)) << b.extra << "\n" << r.err;
    EXPECT_EQ(r.out, "") << b.extra;
    EXPECT_FALSE(fs::exists(dir)) << b.extra << ": written anyway";
  }
  // An --output-dir under a file, and (as a user other than root) a read-only folder.
  ToolResult r = testing::Shell(SweepLine("sweep_trap", "[3001]", file / "sub", ""));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "--output-dir " + (file / "sub").string() + ": " + file.string() + " is not a folder")) << r.err;
  if (geteuid() != 0) {
    const fs::path ro = tmp.path() / "ro";
    fs::create_directory(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    ToolResult w = testing::Shell(SweepLine("sweep_trap", "[3001]", ro, ""));
    EXPECT_EQ(w.exit_code, 2) << w.out << w.err;
    EXPECT_TRUE(Contains(w.err, "is not writable")) << w.err;
    fs::permissions(ro, fs::perms::owner_all);
  }
}

}  // namespace
}  // namespace opscope

namespace opscope {
namespace {

// --graph: the model runs once, its most expensive compiled nodes are swept
// as op instances, each into its own folder; one without tunables is skipped.
TEST(SweepCli, GraphSweepsTheTopTasks) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  const std::string model = std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/resnet_small.onnx";
  const std::string base = kOpsDebug + " sweep --graph " + model + " --peak-bw 20 --peak-flops 100 --warmup 1 --iters 3 ";
  ToolResult r = testing::Shell(base + "--top 3 --output-dir " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "the 3 compiled node(s) with the most task time among those whose ops declare tunables"))
      << r.out;
  int swept = 0;
  for (int i = 1; i <= 3; ++i) {
    EXPECT_TRUE(Contains(r.out, "task " + std::to_string(i) + "/3  ")) << r.out;
  }
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const json s = ReadJson(e.path() / "sweep.json");
    EXPECT_EQ(s["complete"], true) << e.path();
    EXPECT_TRUE(fs::exists(e.path() / "sweep.html"));
    ++swept;
  }
  EXPECT_GE(swept, 1) << r.out;
  // Bad input: one line, exit 2, nothing written.
  const fs::path none = tmp.path() / "none";
  for (const std::string& bad : {std::string("--top 0"), std::string("--op Relu")}) {
    ToolResult b = testing::Shell(base + bad + " --output-dir " + none.string());
    EXPECT_EQ(b.exit_code, 2) << bad << "\n" << b.out << b.err;
    EXPECT_EQ(b.err_lines(), 1) << b.err;
    EXPECT_FALSE(fs::exists(none)) << bad;
  }
  ToolResult missing = testing::Shell(kOpsDebug + " sweep --graph /nonexistent.onnx --output-dir " + none.string());
  EXPECT_EQ(missing.exit_code, 2) << missing.out << missing.err;
  EXPECT_TRUE(Contains(missing.err, "--graph /nonexistent.onnx")) << missing.err;
  // A value no conv takes skips every task: nothing swept is not a pass.
  ToolResult all_skipped = testing::Shell(base + "--top 2 --tunable tile=7 --output-dir " + (tmp.path() / "skip").string());
  EXPECT_EQ(all_skipped.exit_code, 1) << all_skipped.out << all_skipped.err;
  EXPECT_TRUE(Contains(all_skipped.out, "tile' takes 0, 64, 256, 1024; 7 is not one of them")) << all_skipped.out;
  EXPECT_TRUE(Contains(all_skipped.out, "verdict   nothing swept: each of the 2 task(s) was skipped")) << all_skipped.out;
}

}  // namespace
}  // namespace opscope
