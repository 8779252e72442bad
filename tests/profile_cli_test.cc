// ops-debug profile end to end (the real binary, spawned): what it prints,
// on a terminal and off one, the files it writes, and the bad input it
// refuses with one line and exit 2. The roofs are given, so no case waits
// for a calibration or depends on this machine's speed.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tool_test_util.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;
using namespace ::opscope::testing;  // tool_test_util.h

const std::string kOpsDebug = std::string(OPSCOPE_BINARY_DIR) + "/bin/ops-debug";
// A memory roof no machine reaches: every kernel is far over twice its bound.
const std::string kFarRoofs = " --peak-bw 1000000 --peak-flops 1000000";
const std::string kReluAnyIters = "profile --op Relu --input-shapes '[4096]' --warmup 1";
const std::string kRelu = kReluAnyIters + " --iters 3";

ToolResult OpsDebug(const std::string& args) { return Shell(kOpsDebug + " " + args); }

// Under a pseudo-terminal (util-linux's script), as a user at a shell sees it.
ToolResult OnTerminal(const std::string& env, const std::string& args) {
  return Shell(env + " script -qec \"" + kOpsDebug + " " + args + "\" /dev/null");
}

TEST(ProfileCli, PrintsTheKernelAgainstItsBoundAndWritesTimelinePageAndReport) {
  TempDir dir;
  const fs::path timeline = dir.path() / "timeline.json", report = dir.path() / "report.json";
  ToolResult r = OpsDebug(kRelu + kFarRoofs + " --output " + timeline.string() + " --report " + report.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "status passed")) << r.out;
  EXPECT_TRUE(Contains(r.out, "kernel    relu_cpu  median ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "memory-bound  lower bound ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "x its lower bound")) << r.out;
  EXPECT_TRUE(Contains(r.out, "api time  median ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "overhead  recording adds ")) << r.out;
  EXPECT_FALSE(Contains(r.out, "\033[")) << "colour on a pipe";
  nlohmann::json t = nlohmann::json::parse(Slurp(timeline));
  EXPECT_EQ(t["schema"], "opscope.timeline/1");
  const std::string page = Slurp(dir.path() / "timeline.html");
  EXPECT_TRUE(Contains(page, "opscope-data-trace.json")) << "the page embeds the timeline";
  EXPECT_TRUE(Contains(page, "<svg")) << "the page has the roofline chart";
  nlohmann::json j = nlohmann::json::parse(Slurp(report));
  EXPECT_EQ(j["profile"]["iterations"], 3);
  EXPECT_EQ(j["profile"]["timeline"], timeline.string());
  EXPECT_EQ(j["profile"]["html"], (dir.path() / "timeline.html").string());
}

TEST(ProfileCli, TheWarningIsYellowOnATerminalOnlyAndNoColorTurnsItOff) {
  ToolResult tty = OnTerminal("", kRelu + kFarRoofs);
  ASSERT_EQ(tty.exit_code, 0) << tty.out << tty.err;
  EXPECT_TRUE(Contains(tty.out, "\033[33m")) << tty.out;
  EXPECT_TRUE(Contains(tty.out, "x its lower bound\033[0m")) << tty.out;
  ToolResult plain = OnTerminal("NO_COLOR=1", kRelu + kFarRoofs);
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  EXPECT_TRUE(Contains(plain.out, "x its lower bound")) << plain.out;
  EXPECT_FALSE(Contains(plain.out, "\033[")) << plain.out;
  // A roof the kernel cannot fall short of by 2x: no warning at all.
  ToolResult near = OnTerminal("", kRelu + " --peak-bw 0.000001 --peak-flops 0.000001");
  ASSERT_EQ(near.exit_code, 0) << near.out << near.err;
  EXPECT_FALSE(Contains(near.out, "its lower bound")) << near.out;
  EXPECT_FALSE(Contains(plain.out, "above the")) << plain.out;
}

// A kernel faster than its "lower bound" is told apart: past 100% the line
// says which roof it beat and why, never a bare efficiency over 100%.
TEST(ProfileCli, AKernelAboveItsRoofSaysWhichRoofAndWhy) {
  ToolResult memory = OpsDebug(kRelu + " --peak-bw 0.000001 --peak-flops 1000000");
  ASSERT_EQ(memory.exit_code, 0) << memory.out << memory.err;
  EXPECT_TRUE(Contains(memory.out, "memory-bound  lower bound ")) << memory.out;
  EXPECT_TRUE(Contains(memory.out, "%  (above the memory roof: its data came from cache, not DRAM)\n")) << memory.out;
  ToolResult compute = OpsDebug(
      "profile --op MatMul --input-shapes '[64,64];[64,64]' --warmup 1 --iters 3 --peak-bw 1000000 --peak-flops 0.000001");
  ASSERT_EQ(compute.exit_code, 0) << compute.out << compute.err;
  EXPECT_TRUE(Contains(compute.out, "compute-bound  lower bound ")) << compute.out;
  EXPECT_TRUE(Contains(compute.out, "%  (above the compute roof, which is then too low for this machine: ")) << compute.out;
  EXPECT_FALSE(Contains(OpsDebug(kRelu + kFarRoofs).out, "above the")) << "a kernel under its roof";
}

TEST(ProfileCli, BadInputIsOneLineAndExitTwoAndWritesNothing) {
  TempDir dir;
  const std::string out = " --output " + (dir.path() / "t.json").string();
  ExpectUsageError(OpsDebug(kReluAnyIters + kFarRoofs + out + " --iters 0"), "--iters: expected at least 1 call to time, got 0", {.no_report = true});
  ExpectUsageError(OpsDebug(kRelu + out + " --peak-bw 0 --peak-flops 5"), "--peak-bw: expected a positive number of GB/s", {.no_report = true});
  ExpectUsageError(OpsDebug(kRelu + out + " --peak-flops -2 --peak-bw 5"), "--peak-flops: expected a positive number of GFLOP/s", {.no_report = true});
  ExpectUsageError(OpsDebug(kRelu + kFarRoofs + out + " --tunables blok=64"), "--tunables: op Relu has no tunable 'blok'", {.no_report = true});
  ExpectUsageError(OpsDebug(kRelu + kFarRoofs + " --output /proc/timeline.json"), "--output /proc/timeline.json: folder /proc is not writable", {.no_report = true});
  ExpectUsageError(OpsDebug(kRelu + kFarRoofs + " --output " + (dir.path() / "t.txt").string()), "--output", {.no_report = true});
  // A folder where a file is needed, and a file where a folder is: refused before anything runs.
  TempDir other;
  fs::create_directory(other.path() / "t.json");
  ExpectUsageError(OpsDebug(kRelu + kFarRoofs + " --output " + (other.path() / "t.json").string()),
                   "names a folder, expected a file name", {.no_report = true});
  const std::string readme = std::string(OPSCOPE_SOURCE_DIR) + "/README.md";
  ExpectUsageError(OpsDebug(kRelu + kFarRoofs + " --output " + readme + "/t.json"), "is not a folder", {.no_report = true});
  EXPECT_TRUE(fs::is_empty(dir.path())) << "a refused profile wrote a file";
}

// Missing folders of --output are made, as sweep, diagnose and verify make theirs.
TEST(ProfileCli, MissingFoldersOfTheOutputAreMade) {
  TempDir dir;
  const fs::path timeline = dir.path() / "a" / "b" / "t.json";
  ToolResult r = OpsDebug(kRelu + kFarRoofs + " --output " + timeline.string());
  EXPECT_NE(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(fs::is_regular_file(timeline)) << r.out << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "a" / "b" / "t.html")) << r.out << r.err;
}

}  // namespace
}  // namespace opscope
