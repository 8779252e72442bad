// The causes `ops-debug run` names (issue 24), end to end through the real
// tool with the kernels of examples/buggy_ops/cause_ops.cc: each bug gets its
// finding in the text and in report.json; the same op with bug=0 passes and
// gets none.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "cli/apps.h"
#include "opscope/npy.h"
#include "opscope/tensor.h"
#include "tool_test_util.h"

namespace opscope {
namespace {

using testing::Contains;
using testing::Slurp;
using testing::TempDir;
using testing::ToolResult;

const std::string kBuggy = std::string(OPSCOPE_BINARY_DIR) + "/lib/libbuggy_ops.so";

struct ToolRun {
  ToolResult tool;
  nlohmann::json report;
};

ToolRun OpsDebugRun(const TempDir& dir, const std::string& args) {
  const auto report = dir.path() / "report.json";
  std::filesystem::remove(report);
  ToolRun r;
  r.tool = testing::InProcessLine(cli::OpsDebugMain, std::string(OPSCOPE_BINARY_DIR) + "/bin/ops-debug",
                                  "run --plugin " + kBuggy + " " + args + " --report " + report.string());
  if (std::filesystem::exists(report)) r.report = nlohmann::json::parse(Slurp(report));
  return r;
}

std::vector<std::string> FindingKinds(const ToolRun& r) {
  std::vector<std::string> kinds;
  for (const auto& f : r.report["compare"]["findings"]) kinds.push_back(f["kind"]);
  return kinds;
}

// The op with its bug fails with `finding`; with bug=0 it passes and claims nothing.
void ExpectCause(const std::string& args, const std::string& kind, const std::string& finding) {
  TempDir dir;
  ToolRun bad = OpsDebugRun(dir, args);
  ASSERT_EQ(bad.tool.exit_code, 1) << bad.tool.out << bad.tool.err;
  EXPECT_TRUE(Contains(bad.tool.out, "  finding  " + finding)) << bad.tool.out;
  ASSERT_TRUE(bad.report.is_object());
  const std::vector<std::string> kinds = FindingKinds(bad);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), kind), kinds.end()) << bad.report["compare"]["findings"].dump();
  EXPECT_FALSE(bad.report["compare"]["value_histograms"].empty());

  ToolRun good = OpsDebugRun(dir, args + " --attrs bug=0");
  ASSERT_EQ(good.tool.exit_code, 0) << good.tool.out << good.tool.err;
  EXPECT_FALSE(Contains(good.tool.out, "finding")) << good.tool.out;
  EXPECT_TRUE(FindingKinds(good).empty()) << good.report["compare"].dump();
}

TEST(OpsDebugCauses, AWrongNegativeSlopeIsErrorsWhereXIsNegative) {
  ExpectCause("--op bug_leaky_relu --input-shapes '[64, 64]'", "sign", "errors only where x < 0 (100% of mismatches, ");
}

TEST(OpsDebugCauses, DividingByNForNMinusOneIsAScale) {
  ExpectCause("--op bug_variance --input-shapes '[256,64]'", "scale",
              "actual = 0.9844 x expected everywhere (= 63/64, -1.6% on every element), r^2 = ");
}

TEST(OpsDebugCauses, ChannelsTheGridMissesAreNeverWritten) {
  ExpectCause("--op bug_skip_channels --input-shapes '[2,128,12]'", "never_written",
              "y[:, 96:100, :] never written by the kernel (96 elements)");
}

TEST(OpsDebugCauses, BlocksSkippedByAStrideAreAPeriodAndNeverWritten) {
  TempDir dir;
  ToolRun r = OpsDebugRun(dir, "--op bug_block_copy --input-shapes '[8192]'");
  ASSERT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
  EXPECT_EQ(r.report["compare"]["pattern"],
            "NaN only in every other block of 512 along dim 0 (blocks 1, 3, 5, ...) (100% of mismatches)");
  EXPECT_TRUE(Contains(r.tool.out, "finding  4,096 elements of y never written by the kernel, all within y[512:8192]"))
      << r.tool.out;
}

TEST(OpsDebugCauses, AWritePastTheEndFailsAPlainRun) {
  TempDir dir;
  ToolRun r = OpsDebugRun(dir, "--op bug_copy_overrun --input-shapes '[1000]'");
  ASSERT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
  EXPECT_TRUE(Contains(r.tool.out, "OUT OF BOUNDS  y: 1 element written past the end (y[1000], value 0.75)")) << r.tool.out;
  EXPECT_EQ(r.report["outputs"][0]["out_of_bounds"], "y: 1 element written past the end (y[1000], value 0.75)");
  EXPECT_EQ(r.report["compare"]["mismatched"], 0);  // every element inside is right
  EXPECT_EQ(r.report["status"], "failed");
  ToolRun good = OpsDebugRun(dir, "--op bug_copy_overrun --input-shapes '[1000]' --attrs bug=0");
  EXPECT_EQ(good.tool.exit_code, 0) << good.tool.out << good.tool.err;
  EXPECT_FALSE(good.report["outputs"][0].contains("out_of_bounds"));
}

// An output the schema says is written only when training=1: outside
// training it is neither compared nor "never written", and the run says why;
// in training, a kernel that forgets it is caught as before.
TEST(OpsDebugCauses, AnOutputWrittenOnlyInTrainingIsNotComparedOutsideIt) {
  TempDir dir;
  const std::string by_design = "not written in this call, by design: written only when training=1";
  for (const char* bug : {"0", "1"}) {
    ToolRun r = OpsDebugRun(dir, std::string("--op bug_relu_mask --input-shapes '[64,32]' --attrs training=0,bug=") + bug);
    ASSERT_EQ(r.tool.exit_code, 0) << r.tool.out << r.tool.err;
    EXPECT_TRUE(Contains(r.tool.out, "output mask  float32[64,32]  " + by_design)) << r.tool.out;
    EXPECT_FALSE(Contains(r.tool.out, "never written by the kernel")) << r.tool.out;
    ASSERT_EQ(r.report["outputs"].size(), 2u);
    EXPECT_EQ(r.report["outputs"][1]["not_written"], by_design);
    EXPECT_FALSE(r.report["outputs"][1].contains("compare"));
    EXPECT_EQ(r.report["outputs"][0]["name"], "y");
    EXPECT_EQ(r.report["outputs"][0]["compare"]["passed"], true);
  }
  ToolRun good = OpsDebugRun(dir, "--op bug_relu_mask --input-shapes '[64,32]' --attrs training=1,bug=0");
  ASSERT_EQ(good.tool.exit_code, 0) << good.tool.out << good.tool.err;
  EXPECT_FALSE(good.report["outputs"][1].contains("not_written"));
  EXPECT_EQ(good.report["outputs"][1]["compare"]["total"], 64 * 32);
  ToolRun bad = OpsDebugRun(dir, "--op bug_relu_mask --input-shapes '[64,32]' --attrs training=1,bug=1");
  ASSERT_EQ(bad.tool.exit_code, 1) << bad.tool.out << bad.tool.err;
  EXPECT_TRUE(Contains(bad.tool.out, "finding  mask[:, :] never written by the kernel (2,048 elements)")) << bad.tool.out;
  EXPECT_FALSE(Contains(bad.tool.out, by_design)) << bad.tool.out;
}

// --checked: the buffer ends at a guard page, which catches the same write;
// the run names it and writes report.json instead of dying of SIGSEGV.
TEST(OpsDebugCauses, UnderCheckedTheGuardPageCatchesItAndTheRunReportsIt) {
  TempDir dir;
  ToolRun r = OpsDebugRun(dir, "--op bug_copy_overrun --input-shapes '[1000]' --checked");
  ASSERT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
  EXPECT_EQ(r.report["outputs"][0]["out_of_bounds"],
            "y: 1 element written past the end (y[1000], value 0.75; caught by the guard page)");
  EXPECT_EQ(r.report["status"], "failed");
  ToolRun good = OpsDebugRun(dir, "--op bug_copy_overrun --input-shapes '[1000]' --checked --attrs bug=0");
  EXPECT_EQ(good.tool.exit_code, 0) << good.tool.out << good.tool.err;
}

TEST(OpsDebugCauses, RoundingTiesAwayFromZeroAreErrorsAtExactHalves) {
  TempDir dir;
  // x on a grid of scale/2: x/scale is an integer or an exact half.
  auto x = Tensor::Empty(DType::kF32, Shape({4096}));
  auto scale = Tensor::Empty(DType::kF32, Shape({1}));
  ASSERT_TRUE(x.ok() && scale.ok());
  for (int64_t i = 0; i < 4096; ++i) x->FlatSetFromDouble(i, static_cast<double>((i * 7919) % 801 - 400) * 0.125 / 2);
  scale->FlatSetFromDouble(0, 0.125);
  const auto xp = dir.path() / "x.npy", sp = dir.path() / "scale.npy";
  ASSERT_TRUE(WriteNpy(xp.string(), *x).ok());
  ASSERT_TRUE(WriteNpy(sp.string(), *scale).ok());
  ExpectCause("--op bug_quantize --inputs " + xp.string() + "," + sp.string(), "exact_half",
              "errors only where x/scale is an exact half (a rounding tie) (100% of mismatches, ");
}

// A kernel that never returns (mantissa spins on a negative input) is stopped
// at --timeout with the line that names it and the diagnose command. Spawned:
// the stop ends the process.
TEST(OpsDebugCauses, AKernelPastTheTimeoutIsStoppedWithItsName) {
  const std::string bin = std::string(OPSCOPE_BINARY_DIR) + "/bin/ops-debug";
  const std::string plugin = std::string(OPSCOPE_BINARY_DIR) + "/lib/libdiagnose_ops.so";
  ToolResult r = testing::Shell(bin + " run --plugin " + plugin + " --op mantissa --input-shapes '[4096]' --timeout 1s");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "ops-debug: kernel mantissa_cpu (op mantissa on cpu) did not finish within 1 s: stopped. "
                              "Why: ops-debug diagnose --plugin " + plugin + " --op mantissa"))
      << r.err;
}

TEST(OpsDebugCauses, ATimeoutThatIsNotADurationIsUsage) {
  ToolResult r = testing::InProcessLine(cli::OpsDebugMain, std::string(OPSCOPE_BINARY_DIR) + "/bin/ops-debug",
                                        "run --op Relu --input-shapes '[4]' --timeout soon");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "--timeout 'soon': expected a duration such as 10s, 500ms, 2m or 1.5")) << r.err;
}

}  // namespace
}  // namespace opscope
