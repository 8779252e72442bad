// The five bugs of examples/buggy_ops (and a correct op of examples/my_ops),
// each found end to end by the real ops-debug, as docs/ops-debug.md shows them.
#include <gtest/gtest.h>

#include <sstream>

#include <cmath>

#include <nlohmann/json.hpp>

#include "opscope/npy.h"
#include "opscope/tensor.h"
#include "tool_test_util.h"

namespace opscope {
namespace {

using testing::Contains;
using testing::Slurp;
using testing::TempDir;
using testing::ToolResult;

const std::string kOpsDebug = std::string(OPSCOPE_BINARY_DIR) + "/bin/ops-debug";
const std::string kBuggy = std::string(OPSCOPE_BINARY_DIR) + "/lib/libbuggy_ops.so";
const std::string kMyOps = std::string(OPSCOPE_BINARY_DIR) + "/lib/libmy_ops.so";

ToolResult OpsDebug(const std::string& args) { return testing::Shell(kOpsDebug + " " + args); }

nlohmann::json ReadJson(const std::filesystem::path& p) {
  return nlohmann::json::parse(Slurp(p), nullptr, /*allow_exceptions=*/false);
}

// 1. Padding that reads the edge value: errors on the border only, and a
//    reproducer far smaller than the input that still fails.
TEST(OpsDebugExamples, PoolPaddingBugIsOnTheBorderAndCropsSmall) {
  TempDir dir;
  const auto repro = dir.path() / "repro", report = dir.path() / "report.json";
  ToolResult r = OpsDebug("run --plugin " + kBuggy + " --op bug_avgpool2d --input-shapes '[2,16,80,80]' --seed 3"
                          " --repro-dir " + repro.string() + " --report " + report.string());
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "errors only in a 1-element border on all four sides of dims 2 and 3")) << r.out;
  nlohmann::json j = ReadJson(report);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schema"], "opscope.report/1");
  EXPECT_EQ(j["status"], "failed");
  // Every mismatch sits in row/column 0 or 79 of the 80x80 output.
  const int64_t mismatched = j["compare"]["mismatched"];
  EXPECT_EQ(mismatched, 2 * 16 * (4 * 80 - 4));
  for (const auto& w : j["compare"]["worst"]) {
    const int64_t h = w["index"][2], x = w["index"][3];
    EXPECT_TRUE(h == 0 || h == 79 || x == 0 || x == 79) << w.dump();
  }
  EXPECT_EQ(j["repro"]["region_method"], "index map");
  ASSERT_EQ(j["repro"]["found"], true) << j["repro"].dump();
  EXPECT_GE(j["repro"]["ratio"].get<double>(), 10.0);
  auto x = ReadNpy((repro / "x.npy").string());
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_LE(x->dim(2), 64);
  EXPECT_LE(x->dim(3), 64);
  // The written command runs the cropped inputs and still fails.
  ToolResult rerun = testing::Shell(kOpsDebug + std::string(j["repro"]["cropped_command"]).substr(9));
  EXPECT_EQ(rerun.exit_code, 1) << rerun.out << rerun.err;
  EXPECT_TRUE(Contains(rerun.out, "FAILED")) << rerun.out;
}

// The reproducer's repro.sh runs from any folder: the plugin and the cropped
// inputs by absolute path, the tool by its own (the run here used relative ones).
TEST(OpsDebugExamples, TheReproducerScriptRunsFromAnyFolder) {
  TempDir dir;
  const auto repro = dir.path() / "repro";
  const std::string build = std::filesystem::canonical(OPSCOPE_BINARY_DIR).string();
  ToolResult r = testing::Shell("sh -c 'cd " + build + " && bin/ops-debug run --plugin lib/libbuggy_ops.so --op bug_avgpool2d"
                                " --input-shapes \"[1,2,6,6]\" --seed 3 --repro-dir " + repro.string() + "'");
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string script = Slurp(repro / "repro.sh");
  EXPECT_TRUE(Contains(script, build + "/bin/ops-debug run --plugin " + build + "/lib/libbuggy_ops.so")) << script;
  EXPECT_TRUE(Contains(script, "--inputs " + std::filesystem::canonical(repro).string() + "/x.npy")) << script;
  ToolResult again = testing::Shell("sh -c 'cd / && sh " + (repro / "repro.sh").string() + "'");
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  EXPECT_TRUE(Contains(again.out, "FAILED")) << again.out;
}

// 2. Energy summed across channels past the first tile: errors in the high
//    channels, growing with the channel index; the traced energy differs.
TEST(OpsDebugExamples, WindowL2BugIsInTheHighChannelsAndGrows) {
  TempDir dir;
  const auto report = dir.path() / "report.json";
  ToolResult r = OpsDebug("run --plugin " + kBuggy + " --op bug_window_l2 --input-shapes '[2,256,24]' --trace"
                          " --report " + report.string());
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  nlohmann::json j = ReadJson(report);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["outputs"].size(), 2u);
  EXPECT_EQ(j["outputs"][0]["name"], "y");
  const std::string y_pattern = j["outputs"][0]["compare"]["pattern"];
  EXPECT_TRUE(Contains(y_pattern, "errors only in dim 1 indices 129-255")) << y_pattern;
  for (const auto& w : j["outputs"][0]["compare"]["worst"]) EXPECT_GE(w["index"][1].get<int64_t>(), 129) << w.dump();
  // The energy the op hands back: wrong from channel 129 on, more so with every channel.
  EXPECT_EQ(j["outputs"][1]["name"], "energy");
  const std::string e_pattern = j["outputs"][1]["compare"]["pattern"];
  EXPECT_TRUE(Contains(e_pattern, "errors only in dim 1 indices 129-255, growing with the index")) << e_pattern;
  // Both sides traced "scale"; they part there.
  bool scale_differs = false;
  for (const auto& c : j["tracepoint_comparisons"]) scale_differs |= c["name"] == "scale" && c["matches"] == false;
  EXPECT_TRUE(scale_differs) << j["tracepoint_comparisons"].dump();
  EXPECT_EQ(j["tracepoints"].size(), 2u);
  EXPECT_TRUE(Contains(r.out, "tracepoint scale#0  DIFFERS")) << r.out;
}

// 3. Partial sums added in finishing order: --repeat 20 says nondeterministic, first.
TEST(OpsDebugExamples, RacySumIsNondeterministic) {
  TempDir dir;
  const auto report = dir.path() / "report.json";
  ToolResult r = OpsDebug("run --plugin " + kBuggy + " --op racy_sum --input-shapes '[128,131072]' --repeat 20"
                          " --report " + report.string());
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const size_t nondet = r.out.find("NONDETERMINISTIC  output y");
  ASSERT_NE(nondet, std::string::npos) << r.out;
  EXPECT_LT(nondet, r.out.find("output y  float32[128]")) << "nondeterminism must be reported first:\n" << r.out;
  // The two values printed differ as printed (enough digits to show it).
  const size_t at = r.out.find(": run 1 ", nondet);
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream first_line(r.out.substr(at + 8, r.out.find('\n', at) - at - 8));
  std::string first, run_word, run_number, other;
  first_line >> first >> run_word >> run_number >> other;
  first.pop_back();  // the comma after it
  EXPECT_EQ(run_word, "run");
  EXPECT_NE(first, other) << r.out;
  nlohmann::json j = ReadJson(report);
  EXPECT_EQ(j["status"], "nondeterministic");
  EXPECT_EQ(j["determinism"]["runs"], 20);
  ASSERT_EQ(j["determinism"]["differences"].size(), 1u);
  EXPECT_GE(j["determinism"]["differences"][0]["elements_differing"].get<int64_t>(), 1);
  // A deterministic op repeated stays "passed".
  ToolResult ok = OpsDebug("run --plugin " + kMyOps + " --op my_norm --input-shapes '[64,256]' --repeat 5");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_TRUE(Contains(ok.out, "deterministic  5 runs, identical bits")) << ok.out;
}

// 4. A correct fused op against a chain of built-in ops: passes at the default
//    tolerance; against the wrong chain (erf GELU) it fails.
TEST(OpsDebugExamples, CorrectFusedOpMatchesABuiltInChain) {
  TempDir dir;
  const auto report = dir.path() / "report.json";
  ToolResult r = OpsDebug("run --plugin " + kMyOps + " --op my_bias_gelu --input-shapes '[4,256,64];[64]'"
                          " --baseline 'Add>Gelu{approximate=tanh}' --report " + report.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "golden baseline Add>Gelu{approximate=tanh}")) << r.out;
  nlohmann::json j = ReadJson(report);
  EXPECT_EQ(j["status"], "passed");
  EXPECT_EQ(j["compare"]["abserr"], 1e-5);
  ToolResult wrong = OpsDebug("run --plugin " + kMyOps + " --op my_bias_gelu --input-shapes '[4,256,64];[64]'"
                              " --baseline 'Add>Gelu'");
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out << wrong.err;
  ToolResult bad = OpsDebug("run --plugin " + kMyOps + " --op my_bias_gelu --input-shapes '[4,256,64];[64]'"
                            " --baseline 'Add>Gelu{approximate=cubic}'");
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_TRUE(Contains(bad.err, "--baseline")) << bad.err;
  // A chain whose output disagrees with the op's: both shapes said, before anything runs.
  ToolResult shapes = OpsDebug("run --plugin " + kMyOps + " --op my_bias_gelu --input-shapes '[4,8];[8]' --baseline MatMul");
  EXPECT_EQ(shapes.exit_code, 2) << shapes.out << shapes.err;
  EXPECT_TRUE(Contains(shapes.err, "float32[4] but my_bias_gelu's output y is float32[4,8]")) << shapes.err;
  EXPECT_EQ(shapes.out, "");
}

// 5. float16 squares overflow: Inf on the actual side only, in the rows that hold
//    a value above 255.9; the float32 kernel on the same values is fine.
TEST(OpsDebugExamples, HalfOverflowIsInfOnlyOnTheActualSide) {
  TempDir dir;
  auto x = Tensor::Empty(DType::kF16, Shape({32, 128}));
  auto x32 = Tensor::Empty(DType::kF32, Shape({32, 128}));
  ASSERT_TRUE(x.ok() && x32.ok());
  for (int64_t i = 0; i < x->numel(); ++i) {
    double v = std::sin(0.37 * static_cast<double>(i)) * 2.0;
    if (i == 3 * 128 + 17 || i == 20 * 128 + 90) v = 300.0;
    x->FlatSetFromDouble(i, v);
    x32->FlatSetFromDouble(i, v);
  }
  const std::string path = (dir.path() / "x16.npy").string(), path32 = (dir.path() / "x32.npy").string();
  ASSERT_TRUE(WriteNpy(path, *x).ok());
  ASSERT_TRUE(WriteNpy(path32, *x32).ok());
  const auto report = dir.path() / "report.json";
  ToolResult r = OpsDebug("run --plugin " + kBuggy + " --op half_rms --inputs " + path + " --report " + report.string());
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "Inf in actual only: 2 element(s) at [3] [20]")) << r.out;
  nlohmann::json j = ReadJson(report);
  EXPECT_EQ(j["compare"]["inf"]["only_actual"], 2);
  EXPECT_EQ(j["compare"]["inf"]["expected"], 0);
  EXPECT_EQ(j["compare"]["mismatched"], 2);
  ToolResult ok = OpsDebug("run --plugin " + kBuggy + " --op half_rms --inputs " + path32);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

// The commands users already type, as they type them (issue 24): a shape
// list with spaces and no quotes, profile's --mode as the scope profilers
// mean by it, my_norm with eps and axis. The plugin comes from
// OPSCOPE_PLUGINS, as the commands name no --plugin; --device cuda:0 where a
// GPU answers, cpu elsewhere.
TEST(OpsDebugExamples, CommandsAsUsersTypeThem) {
  TempDir dir;
  const std::string env = "OPSCOPE_PLUGINS=" + kMyOps + " ";
  const bool gpu = OpsDebug("calibrate --device cuda:0").exit_code == 0;
  const std::string device = gpu ? "cuda:0" : "cpu";
  const std::string timeline = (dir.path() / "timeline.json").string();
  ToolResult profile = testing::Shell(env + kOpsDebug + " profile --op my_norm --input-shapes [4, 256, 64] --dtype float32 "
                                      "--device " + device + " --mode full --output " + timeline);
  EXPECT_EQ(profile.exit_code, 0) << profile.out << profile.err;
  EXPECT_TRUE(Contains(profile.out, "scope full")) << profile.out;
  EXPECT_TRUE(Contains(profile.out, "--input-shapes '[4,256,64]'")) << "one shape list, as typed: " << profile.out;
  EXPECT_TRUE(std::filesystem::exists(timeline));
  ToolResult run = testing::Shell(env + kOpsDebug + " run --op my_norm --input-shapes \"[4, 256, 64]\" --dtype float32 "
                                  "--attrs eps=1e-6,axis=-1");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "status passed")) << run.out;
  // Each scope, and the compare rule under its profile name.
  ToolResult kernel = testing::Shell(env + kOpsDebug + " profile --op my_norm --input-shapes [64, 32] --iters 2 --warmup 0 "
                                     "--peak-bw 10 --peak-flops 10 --mode kernel --rule abs --abserr 1e-4");
  EXPECT_EQ(kernel.exit_code, 0) << kernel.out << kernel.err;
  EXPECT_TRUE(Contains(kernel.out, "phases not timed")) << kernel.out;
  ToolResult api = testing::Shell(env + kOpsDebug + " profile --op my_norm --input-shapes [64, 32] --iters 2 --warmup 0 "
                                  "--peak-bw 10 --peak-flops 10 --mode api");
  EXPECT_EQ(api.exit_code, 0) << api.out << api.err;
  EXPECT_TRUE(Contains(api.out, "device time not measured")) << api.out;
  testing::ExpectUsageError(OpsDebug("profile --op Relu --input-shapes [8] --mode ulp:1"),
                            "--mode 'ulp:1': expected full (API phases and device time), kernel", {"ops-debug"});
  testing::ExpectUsageError(OpsDebug("profile --op Relu --input-shapes [8] --rule bogus"), "--rule", {"ops-debug"});
  testing::ExpectUsageError(OpsDebug("run --op Relu --input-shapes [8] --mode bogus"), "--mode", {"ops-debug"});
}

// my_norm over any axis: against its reference, and the reference against
// numbers worked by hand (x = [[1, 2], [3, 4]], eps 0: over axis 0 the
// columns' rms are sqrt(5) and sqrt(10); over axis 1 the rows', sqrt(2.5)
// and sqrt(12.5)).
TEST(OpsDebugExamples, MyNormNormalisesOverTheAxisItIsGiven) {
  for (const char* axis : {"0", "1", "2", "-1", "-3"}) {
    ToolResult r = OpsDebug("run --plugin " + kMyOps + " --op my_norm --input-shapes '[3,5,7]' --attrs axis=" + axis);
    EXPECT_EQ(r.exit_code, 0) << axis << ": " << r.out << r.err;
  }
  testing::ExpectUsageError(OpsDebug("run --plugin " + kMyOps + " --op my_norm --input-shapes '[3,5]' --attrs axis=2"),
                            "axis", {"ops-debug"});
  TempDir dir;
  const std::filesystem::path x = dir.path() / "x.npy";
  Tensor t = Tensor::Empty(DType::kF64, Shape({2, 2})).value();
  for (int i = 0; i < 4; ++i) t.FlatSetFromDouble(i, i + 1);
  ASSERT_TRUE(WriteNpy(x.string(), t).ok());
  for (const auto& [axis, expected] : std::vector<std::pair<std::string, std::vector<double>>>{
           {"0", {1 / std::sqrt(5.0), 2 / std::sqrt(10.0), 3 / std::sqrt(5.0), 4 / std::sqrt(10.0)}},
           {"1", {1 / std::sqrt(2.5), 2 / std::sqrt(2.5), 3 / std::sqrt(12.5), 4 / std::sqrt(12.5)}}}) {
    const std::filesystem::path out = dir.path() / ("axis" + axis);
    ToolResult r = OpsDebug("run --plugin " + kMyOps + " --op my_norm --inputs " + x.string() + " --attrs eps=0,axis=" +
                            axis + " --save-outputs " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    auto golden = ReadNpy((out / "y.expected.npy").string());
    ASSERT_TRUE(golden.ok()) << golden.status().ToString();
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(golden->FlatGetAsDouble(i), expected[i], 1e-15) << "axis " << axis << " element " << i;
  }
}

}  // namespace
}  // namespace opscope
