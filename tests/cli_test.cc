// ops-debug and inspector-cli end to end (the real binaries, spawned), and
// their subcommands as library calls.
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "opscope/compare.h"
#include "cli/app_driver.h"
#include "cli/apps.h"
#include "cli/command_table.h"
#include "cli/describe_command.h"
#include "cli/diagnose_command.h"
#include "cli/verify_command.h"
#include "cli/flag_parsing.h"
#include "cli/list_command.h"
#include "cli/run_command.h"
#include "cli/sweep_command.h"
#include "opscope/fill.h"
#include "opscope/npy.h"
#include "opscope/op.h"
#include "tool_test_util.h"

namespace opscope::cli {
namespace {

namespace fs = std::filesystem;
using namespace ::opscope::testing;  // tool_test_util.h

const std::string kBin = std::string(OPSCOPE_BINARY_DIR) + "/bin/";
const std::string kMyOps = std::string(OPSCOPE_BINARY_DIR) + "/lib/libmy_ops.so";
const std::string kDupPlugin = std::string(OPSCOPE_BINARY_DIR) + "/lib/libdup_plugin.so";

// Most cases call ops-debug through its entry point in this process; those
// named ...Process spawn the binary, so its start-up and exit stay covered.
ToolResult OpsDebug(const std::string& args) {
  return ::opscope::testing::InProcessLine(OpsDebugMain, kBin + "ops-debug", args);
}
ToolResult OpsDebugProcess(const std::string& args) { return Shell(kBin + "ops-debug " + args); }

// The one shape every bad-input failure of ops-debug takes (ExpectUsageError).
const ::opscope::testing::UsageError kOpsDebugUsage{.tool = "ops-debug", .no_report = true};

std::string ReproOf(const std::string& out) {
  size_t at = out.find("repro: ");
  if (at == std::string::npos) return "";
  size_t end = out.find('\n', at);
  return out.substr(at + 7, end - at - 7);
}

// ---- end to end ---------------------------------------------------------------

TEST(OpsDebugCli, PassingRunPrintsTheVerdictAndARepeatableRepro) {
  ToolResult r = OpsDebugProcess("run --op Relu --input-shapes '[4,8]' --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("Relu  cpu  kernel relu_cpu  grid=", 0), 0u) << r.out;
  EXPECT_TRUE(Contains(r.out, "op_id ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "  input X  float32[4,8]  normal seed 3  @0x")) << r.out;
  EXPECT_TRUE(Contains(r.out, "output Y  float32[4,8]  PASSED  0 / 32 mismatched (0.00%)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "  max abs err ")) << r.out;
  const std::string repro = ReproOf(r.out);
  ASSERT_EQ(repro.rfind("ops-debug run --op Relu --input-shapes '[4,8]' --dtype float32 --fill normal --seed 3", 0), 0u)
      << repro;

  // Pasted back, the repro runs the same check and reproduces itself.
  ToolResult again = Shell(kBin + repro);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(ReproOf(again.out), repro);
}

// An empty shape between two leaves an optional input out, as --inputs' empty
// entry does: FusedConv with its residual Z but no bias B. The repro line
// says it the same way and runs pasted back; a required input, or an empty
// first or last entry, is still refused.
TEST(OpsDebugCli, AnEmptyShapeLeavesAnOptionalInputOutAndTheReproSaysSo) {
  const std::string shapes = "'[1,3,6,8];[4,3,3,3];;[1,4,6,8]'";
  ToolResult r = OpsDebug("run --op FusedConv --input-shapes " + shapes + " --attrs 'pads=[1,1,1,1],activation=Relu'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "output Y  float32[1,4,6,8]  PASSED")) << r.out;
  const std::string repro = ReproOf(r.out);
  EXPECT_TRUE(Contains(repro, "--input-shapes " + shapes + " --dtype float32,float32,float32,float32")) << repro;
  ToolResult again = Shell(kBin + repro);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(ReproOf(again.out), repro);

  ExpectUsageError(OpsDebug("run --op Conv --input-shapes '[1,3,6,8];;[4]'"),
                   "--input-shapes: entry 2 is empty, but input W of op Conv is required", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --op Conv --input-shapes '[1,3,6,8];[4,3,3,3];'"),
                   "--input-shapes: shape 3 '': empty", kOpsDebugUsage);
}

// --plugin is repeatable: both libraries load, and the repro line names both
// (CLI11 refused the second one until SweepCommandLine's round trip found it).
TEST(OpsDebugCli, TwoPluginsBothLoad) {
  const std::string perf = std::string(OPSCOPE_BINARY_DIR) + "/lib/libperf_ops.so";
  ToolResult r = OpsDebug("run --plugin " + kMyOps + " --plugin " + perf + " --op my_norm --input-shapes '[4,64]'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(ReproOf(r.out), "--plugin " + kMyOps + " --plugin " + perf + " --op my_norm")) << r.out;
  ToolResult listed = OpsDebug("list --plugin " + kMyOps + " --plugin " + perf);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_TRUE(Contains(listed.out, "my_norm")) << listed.out;
  EXPECT_TRUE(Contains(listed.out, "window_l2norm_v1")) << listed.out;
}

TEST(OpsDebugCli, RunsAPluginOpWithTunablesAndSavesItsOutputs) {
  TempDir dir;
  const fs::path save = dir.path() / "outs";
  ToolResult r = OpsDebug("run --plugin " + kMyOps +
                          " --op my_bias_gelu --input-shapes '[4,256,64];[64]' --tunables block=4096 --save-outputs " +
                          save.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("my_bias_gelu  cpu  kernel my_bias_gelu_cpu  grid=[16,1,1] block=[4096,1,1]", 0), 0u) << r.out;
  EXPECT_TRUE(Contains(r.out, "  input bias  float32[64]  normal seed 1")) << r.out;
  EXPECT_TRUE(Contains(r.out, "output y  float32[4,256,64]  PASSED  0 / 65,536 mismatched")) << r.out;
  EXPECT_TRUE(Contains(ReproOf(r.out), "--plugin " + kMyOps + " --op my_bias_gelu")) << r.out;
  EXPECT_TRUE(Contains(ReproOf(r.out), "--tunables block=4096")) << r.out;

  auto y = ReadNpy((save / "y.npy").string());
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), Shape({4, 256, 64}));
  EXPECT_EQ(y->dtype(), DType::kF32);
  auto e = ReadNpy((save / "y.expected.npy").string());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->dtype(), DType::kF64);
}

TEST(OpsDebugCli, AMismatchExitsOne) {
  // float16 cannot hold the float64 reference exactly: with no tolerance it fails.
  ToolResult r = OpsDebug("run --plugin " + kMyOps + " --op my_norm --input-shapes '[8,32]' --dtype float16 "
                          "--tunables vec=4 --atol 0 --rtol 0");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "output y  float16[8,32]  FAILED  ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "|a-e| <= 0 + 0*|e|")) << r.out;
  EXPECT_TRUE(Contains(ReproOf(r.out), "--abserr 0 --relerr 0")) << r.out;
  // The same run with the float16 defaults passes.
  ToolResult ok = OpsDebug("run --plugin " + kMyOps + " --op my_norm --input-shapes '[8,32]' --dtype float16 --tunables vec=4");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

TEST(OpsDebugCli, RunsFromNpyInputs) {
  TempDir dir;
  auto x = Tensor::Empty(DType::kF64, Shape({3, 2}));
  ASSERT_TRUE(x.ok());
  for (int i = 0; i < 6; ++i) x->FlatSetFromDouble(i, i - 2.5);
  const std::string path = (dir.path() / "x.npy").string();
  ASSERT_TRUE(WriteNpy(path, *x).ok());
  ToolResult r = OpsDebug("run --op Relu --inputs " + path);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "  input X  float64[3,2]  " + path)) << r.out;
  EXPECT_TRUE(Contains(ReproOf(r.out), "--inputs " + path)) << r.out;
}

TEST(OpsDebugCli, EachBadInputIsOneLineAndExitTwo) {
  ToolResult unknown = OpsDebug("run --op Rleu --input-shapes '[2]'");
  ExpectUsageError(unknown, "--op: unknown op 'Rleu'; did you mean ", kOpsDebugUsage);
  EXPECT_TRUE(Contains(unknown.err, "Relu")) << unknown.err;
  EXPECT_FALSE(Contains(unknown.err, "plugin")) << "a typo of a built-in op is no plugin's: " << unknown.err;
  // A plugin's op without --plugin (in a process of its own: this one may
  // have loaded it already): the library beside the tool that holds the name.
  ToolResult plugin_op = OpsDebugProcess("run --op my_norm --input-shapes '[4,64]'");
  ExpectUsageError(plugin_op, "--op: unknown op 'my_norm'; a plugin may define it: --plugin ", kOpsDebugUsage);
  // (The ASan tree also holds a g++-built copy, libmy_ops_gxx.so: both are named.)
  EXPECT_TRUE(Contains(plugin_op.err, "lib/libmy_ops.so")) << plugin_op.err;
  EXPECT_TRUE(Contains(plugin_op.err, " (its library holds the name 'my_norm')")) << plugin_op.err;
  ToolResult nobody = OpsDebugProcess("run --op zz_nobody_defines_this --input-shapes '[4]'");
  ExpectUsageError(nobody, "none of the plugins found holds the name: ", kOpsDebugUsage);
  // Two inputs' shapes joined by a comma: the separator is named.
  ExpectUsageError(OpsDebug("run --op Add --input-shapes '[4,256,64],[64]'"),
                   "shapes of several inputs are separated by ';': \"[4,256,64];[64]\"", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --plugin " + kMyOps + " --op my_norm --input-shapes '[2,3]' --attrs epz=1"),
                   "--attrs", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --plugin " + kMyOps + " --op my_norm --input-shapes '[2,3]' --attrs eps=abc"),
                   "expected a number", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --plugin " + kMyOps + " --op my_bias_gelu --input-shapes '[4,8];[5]'"),
                   "bias must have shape [8]", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --op Relu --input-shapes '[2]' --dtype bool"), "dtype bool", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --plugin " + kMyOps + " --op my_bias_gelu --input-shapes '[4,8]'"),
                   "--input-shapes: op my_bias_gelu takes 2 input(s) (x, bias), got 1 shape", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --plugin /nonexistent/libnope.so --op Relu --input-shapes '[2]'"),
                   "--plugin: plugin libnope.so: cannot load: ", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --plugin " + kDupPlugin + " --op Relu --input-shapes '[2]'"),
                   "--plugin: plugin libdup_plugin.so: op Relu is registered twice (first by builtin", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --plugin " + std::string(OPSCOPE_BINARY_DIR) +
                            "/lib/libsometimes_plugin.so --op sometimes_copy --input-shapes '[2]'"),
                   "--plugin: plugin libsometimes_plugin.so: op sometimes_copy output mask is declared written only "
                   "sometimes without saying when", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --plugin " + std::string(OPSCOPE_BINARY_DIR) +
                            "/lib/libabi_plugin.so --op abi_plugin_copy --input-shapes '[2]'"),
                   "--plugin: plugin libabi_plugin.so: built against opscope plugin ABI version " +
                       std::to_string(kPluginAbiVersion + 1) + ", but this libopscope has " +
                       std::to_string(kPluginAbiVersion), kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --op Relu --input-shapes '[2;'"), "--input-shapes: shape 1", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --op Relu --input-shapes '[2]' --tunables blok=5"),
                   "--tunables: op Relu has no tunable 'blok'", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --op Relu --input-shapes '[2]' --fill gaussian"), "--fill", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --input-shapes '[2]'"), "--op", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --op Relu --input-shapes '[2]' --frobnicate"), "--frobnicate", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("frobnicate"), "unknown command 'frobnicate'", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("describe NoSuchOp"), "unknown op 'NoSuchOp'", kOpsDebugUsage);
}

TEST(OpsDebugCli, BadNpyFilesAreNamedAndWriteNothing) {
  TempDir dir;
  auto x = Tensor::Empty(DType::kF32, Shape({4, 4}));
  ASSERT_TRUE(x.ok());
  const fs::path good = dir.path() / "good.npy";
  ASSERT_TRUE(WriteNpy(good.string(), *x).ok());
  std::string bytes = Slurp(good);
  const fs::path truncated = dir.path() / "truncated.npy";
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() - 12);
  const fs::path junk = dir.path() / "junk.npy";
  std::ofstream(junk, std::ios::binary) << "this is not an npy file";

  const fs::path save = dir.path() / "outs";
  ExpectUsageError(OpsDebug("run --op Relu --inputs " + truncated.string() + " --save-outputs " + save.string()),
                   "truncated.npy", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --op Relu --inputs " + junk.string() + " --save-outputs " + save.string()),
                   "junk.npy", kOpsDebugUsage);
  EXPECT_FALSE(fs::exists(save)) << "bad input must leave no output behind";
}

// compare: an output that is the exact negation of tiny expected values
// passes the mixed rule's floor, but never silently (issue 25): the verdict
// says so, report.json holds the warnings, and --strict fails it.
TEST(OpsDebugCli, APassThatHidesWrongValuesWarnsAndFailsUnderStrict) {
  TempDir dir;
  auto e = Tensor::Empty(DType::kF32, Shape({1000}));
  auto a = Tensor::Empty(DType::kF32, Shape({1000}));
  ASSERT_TRUE(e.ok() && a.ok());
  for (int64_t i = 0; i < 1000; ++i) {
    e->FlatSetFromDouble(i, 3.4e-9 * (0.05 + 0.9 * std::fmod(0.6180339887 * static_cast<double>(i + 1), 1.0)));
    a->FlatSetFromDouble(i, -e->FlatGetAsDouble(i));
  }
  const std::string ep = (dir.path() / "expected.npy").string(), ap = (dir.path() / "actual.npy").string();
  ASSERT_TRUE(WriteNpy(ep, *e).ok() && WriteNpy(ap, *a).ok());
  const std::string report = (dir.path() / "r.json").string();
  ToolResult lax = OpsDebug("compare " + ep + " " + ap + " --report " + report);
  EXPECT_EQ(lax.exit_code, 0) << lax.out << lax.err;
  EXPECT_TRUE(Contains(lax.out, "PASSED with 3 warnings  0 / 1,000 mismatched")) << lax.out;
  EXPECT_TRUE(Contains(lax.out, "  warning  the absolute floor 1e-05 decides for 100% of elements")) << lax.out;
  EXPECT_TRUE(Contains(lax.out, "  warning  cosine similarity -1 is below 0.99")) << lax.out;
  EXPECT_TRUE(Contains(lax.out, "  warning  the sign is flipped on 100% of the 1,000 elements")) << lax.out;
  auto j = nlohmann::json::parse(Slurp(report), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["status"], "passed");
  ASSERT_EQ(j["compare"]["warnings"].size(), 3u) << j["compare"].dump(2);
  EXPECT_EQ(j["compare"]["warnings"][0]["kind"], "floor_decides");
  EXPECT_EQ(j["compare"]["floor_decides"]["elements"], 1000);
  EXPECT_EQ(j["compare"]["sign_flips"]["elements"], 1000);

  ToolResult strict = OpsDebug("compare " + ep + " " + ap + " --strict --report " + report);
  EXPECT_EQ(strict.exit_code, 1) << strict.out << strict.err;
  EXPECT_TRUE(Contains(strict.out, "FAILED under --strict: 3 warnings  0 / 1,000 mismatched")) << strict.out;
  EXPECT_TRUE(Contains(strict.out, "repro: ops-debug compare")) << strict.out;
  EXPECT_TRUE(Contains(strict.out, " --strict")) << strict.out;
  EXPECT_EQ(nlohmann::json::parse(Slurp(report))["status"], "failed");
}

// compare: two files from anywhere, judged and localised; report.json written.
TEST(OpsDebugCli, CompareJudgesTwoFilesAndWritesAReport) {
  TempDir dir;
  auto e = Tensor::Empty(DType::kF32, Shape({16, 16}));
  auto a = Tensor::Empty(DType::kF32, Shape({16, 16}));
  ASSERT_TRUE(e.ok() && a.ok());
  for (int64_t i = 0; i < 256; ++i) e->FlatSetFromDouble(i, std::cos(0.1 * static_cast<double>(i)));
  for (int64_t i = 0; i < 256; ++i) a->FlatSetFromDouble(i, e->FlatGetAsDouble(i));
  const std::string ep = (dir.path() / "expected.npy").string(), ap = (dir.path() / "actual.npy").string();
  ASSERT_TRUE(WriteNpy(ep, *e).ok() && WriteNpy(ap, *a).ok());
  ToolResult same = OpsDebug("compare " + ep + " " + ap);
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_TRUE(Contains(same.out, "PASSED  0 / 256 mismatched")) << same.out;

  a->FlatSetFromDouble(5 * 16 + 7, 3.0);  // one element far off
  ASSERT_TRUE(WriteNpy(ap, *a).ok());
  const std::string report = (dir.path() / "r.json").string();
  ToolResult one = OpsDebug("compare " + ep + " " + ap + " --report " + report);
  EXPECT_EQ(one.exit_code, 1) << one.out << one.err;
  EXPECT_TRUE(Contains(one.out, "FAILED  1 / 256 mismatched")) << one.out;
  EXPECT_TRUE(Contains(one.out, "max abs err")) << one.out;
  EXPECT_TRUE(Contains(one.out, "at [5,7]")) << one.out;
  auto j = nlohmann::json::parse(Slurp(report), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schema"], "opscope.report/1");
  EXPECT_EQ(j["status"], "failed");
  EXPECT_EQ(j["compare"]["mismatched"], 1);
  EXPECT_EQ(j["compare"]["max_abs_at"]["index"], nlohmann::json({5, 7}));

  // A loose enough absolute rule passes it; ulp:N parses; a bad mode is named.
  EXPECT_EQ(OpsDebug("compare " + ep + " " + ap + " --mode abs --abserr 10").exit_code, 0);
  ToolResult ulp = OpsDebug("compare " + ep + " " + ap + " --mode ulp:2");
  EXPECT_EQ(ulp.exit_code, 1) << ulp.out << ulp.err;
  EXPECT_TRUE(Contains(ulp.out, "ulp")) << ulp.out;
  ExpectUsageError(OpsDebug("compare " + ep + " " + ap + " --mode ulp:x"), "--mode 'ulp:x'", kOpsDebugUsage);

  // Different shapes: both are named, nothing is written.
  auto small = Tensor::Empty(DType::kF32, Shape({4, 4}));
  ASSERT_TRUE(small.ok());
  const std::string sp = (dir.path() / "small.npy").string();
  ASSERT_TRUE(WriteNpy(sp, *small).ok());
  const std::string report2 = (dir.path() / "r2.json").string();
  ToolResult shapes = OpsDebug("compare " + ep + " " + sp + " --report " + report2);
  ExpectUsageError(shapes, "float32[16,16]", kOpsDebugUsage);
  EXPECT_TRUE(Contains(shapes.err, "float32[4,4]")) << shapes.err;
  EXPECT_FALSE(fs::exists(report2));
}

// run --expected: the golden from files, checked against the op's outputs first.
TEST(OpsDebugCli, RunAgainstExpectedFiles) {
  TempDir dir;
  auto x = Tensor::Empty(DType::kF32, Shape({3, 2}));
  ASSERT_TRUE(x.ok());
  for (int i = 0; i < 6; ++i) x->FlatSetFromDouble(i, i - 2.5);
  auto y = Tensor::Empty(DType::kF32, Shape({3, 2}));
  ASSERT_TRUE(y.ok());
  for (int i = 0; i < 6; ++i) y->FlatSetFromDouble(i, std::max(0.0, i - 2.5));
  const std::string xp = (dir.path() / "x.npy").string(), yp = (dir.path() / "y.npy").string();
  ASSERT_TRUE(WriteNpy(xp, *x).ok() && WriteNpy(yp, *y).ok());
  ToolResult ok = OpsDebug("run --op Relu --inputs " + xp + " --expected " + yp);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_TRUE(Contains(ok.out, "golden expected files")) << ok.out;
  y->FlatSetFromDouble(0, 1.0);
  ASSERT_TRUE(WriteNpy(yp, *y).ok());
  EXPECT_EQ(OpsDebug("run --op Relu --inputs " + xp + " --expected " + yp).exit_code, 1);
  auto wrong = Tensor::Empty(DType::kF32, Shape({2, 3}));
  ASSERT_TRUE(wrong.ok());
  ASSERT_TRUE(WriteNpy(yp, *wrong).ok());
  ToolResult bad = OpsDebug("run --op Relu --inputs " + xp + " --expected " + yp);
  ExpectUsageError(bad, "--expected " + yp + ": holds float32[2,3] but output Y is float32[3,2]", kOpsDebugUsage);
}


// The number of --expected files sets how many outputs the op is asked for
// (optional ones included); --outputs says it without files.
TEST(OpsDebugCli, ExpectedFilesSetTheOutputCount) {
  TempDir dir;
  const std::string x = (dir.path() / "x.npy").string(), s = (dir.path() / "s.npy").string();
  ToolResult saved = OpsDebug("run --op LayerNormalization --input-shapes '[3,8];[8]' --seed 5 --outputs 3 --save-outputs " +
                              dir.path().string());
  ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err;
  for (const char* out : {"Y", "Mean", "InvStdDev"}) {
    EXPECT_TRUE(Contains(saved.out, std::string("output ") + out + "  float32")) << saved.out;
  }
  // The same inputs as files (input i is filled with seed + i), and the reference's three outputs as the golden.
  for (int i = 0; i < 2; ++i) {
    auto t = Tensor::Empty(DType::kF32, Shape(i == 0 ? std::vector<int64_t>{3, 8} : std::vector<int64_t>{8}));
    ASSERT_TRUE(t.ok());
    ASSERT_TRUE(Fill(*t, {.kind = FillKind::kNormal, .seed = static_cast<uint64_t>(5 + i)}).ok());
    ASSERT_TRUE(WriteNpy(i == 0 ? x : s, *t).ok());
  }
  const std::string e = (dir.path() / "Y.expected.npy").string() + "," + (dir.path() / "Mean.expected.npy").string() +
                        "," + (dir.path() / "InvStdDev.expected.npy").string();
  ToolResult three = OpsDebug("run --op LayerNormalization --inputs " + x + "," + s + " --expected " + e);
  EXPECT_EQ(three.exit_code, 0) << three.out << three.err;
  EXPECT_TRUE(Contains(three.out, "output InvStdDev  float32[3,1]  PASSED")) << three.out;
  ExpectUsageError(OpsDebug("run --op LayerNormalization --inputs " + x + "," + s + " --expected " + e + " --outputs 2"),
                   "--outputs 2: but 3 expected tensor(s) were given", kOpsDebugUsage);
  ExpectUsageError(OpsDebug("run --op LayerNormalization --input-shapes '[3,8];[8]' --outputs 4"),
                   "--outputs: op LayerNormalization has 1 to 3 output(s), 4 asked for", kOpsDebugUsage);
}
// --readback stats|sample: the verdict from what the device summarised.
TEST(OpsDebugCli, ReadbackStatsAndSample) {
  for (const char* mode : {"stats", "sample"}) {
    ToolResult ok = OpsDebug("run --plugin " + kMyOps + " --op my_norm --input-shapes '[64,512]' --readback " + mode);
    EXPECT_EQ(ok.exit_code, 0) << mode << ok.out << ok.err;
    EXPECT_TRUE(Contains(ok.out, std::string("readback ") + mode)) << ok.out;
    ToolResult bad = OpsDebug("run --plugin " + kMyOps + " --op my_norm --input-shapes '[64,512]' --dtype float16"
                              " --abserr 0 --relerr 0 --readback " + mode);
    EXPECT_EQ(bad.exit_code, 1) << mode << bad.out << bad.err;
  }
  ExpectUsageError(OpsDebug("run --op Relu --input-shapes '[4]' --readback some"), "--readback 'some'", kOpsDebugUsage);
}

TEST(OpsDebugCli, ListAndDescribeShowPluginOps) {
  ToolResult list = OpsDebug("list --plugin " + kMyOps);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_TRUE(Contains(list.out, "Relu")) << list.out;
  EXPECT_TRUE(Contains(list.out, "builtin")) << list.out;
  EXPECT_TRUE(Contains(list.out, kMyOps)) << list.out;

  ToolResult d = OpsDebug("describe my_norm --plugin " + kMyOps);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_TRUE(Contains(d.out, "my_norm  domain com.opscope.examples  source " + kMyOps)) << d.out;
  EXPECT_TRUE(Contains(d.out, "inputs\n  x: T\n")) << d.out;
  EXPECT_TRUE(Contains(d.out, "  T: float64, float32, float16, bfloat16\n")) << d.out;
  EXPECT_TRUE(Contains(d.out, "  eps: float = ")) << d.out;
  EXPECT_TRUE(Contains(d.out, "  block: 64 (default), 128, 256, 512\n")) << d.out;
  EXPECT_TRUE(Contains(d.out, "  cpu: my_norm_cpu\n")) << d.out;

  // Plugins from the environment are loaded too.
  ToolResult env = Shell("env OPSCOPE_PLUGINS=" + kMyOps + " " + kBin + "ops-debug describe my_bias_gelu");
  EXPECT_EQ(env.exit_code, 0) << env.err;
  ToolResult bad_env = Shell("env OPSCOPE_PLUGINS=" + kDupPlugin + " " + kBin + "ops-debug list");
  EXPECT_EQ(bad_env.exit_code, 2);
  EXPECT_EQ(bad_env.err_lines(), 1) << bad_env.err;
  EXPECT_TRUE(Contains(bad_env.err, "OPSCOPE_PLUGINS: plugin libdup_plugin.so")) << bad_env.err;
}

// A kernel that reads an attribute its op does not declare is a failed check
// (exit 1) that names the op and both names, not a run with epz = 0.
TEST(OpsDebugCli, AKernelReadingAnUndeclaredAttributeFailsNamingIt) {
  ToolResult r = OpsDebug("run --plugin " + std::string(OPSCOPE_BINARY_DIR) +
                          "/lib/libtypo_plugin.so --op typo_norm --input-shapes '[2,3]'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "kernel FAILED  op typo_norm read attribute 'epz', which it does not declare "
                              "(it declares: eps)"))
      << r.out;
}

TEST(OpsDebugCli, HelpAndVersionExitZero) {
  ToolResult help = OpsDebugProcess("run --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.out, "--input-shapes")) << help.out;
  ToolResult version = OpsDebugProcess("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(Contains(version.out, "ops-debug ")) << version.out;
}

TEST(InspectorCli, AnswersHelpVersionAndNamesUnknownCommands) {
  ToolResult help = Shell(kBin + "inspector-cli --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.out, "inspector-cli")) << help.out;
  ToolResult version = Shell(kBin + "inspector-cli --version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(Contains(version.out, "inspector-cli 0.")) << version.out;
  ToolResult unknown = Shell(kBin + "inspector-cli graph model.onnx");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err_lines(), 1) << unknown.err;
  EXPECT_TRUE(Contains(unknown.err, "inspector-cli: error: unknown command 'graph'")) << unknown.err;
  ToolResult bad_flag = Shell(kBin + "inspector-cli --frob");
  EXPECT_EQ(bad_flag.exit_code, 2);
  EXPECT_EQ(bad_flag.err_lines(), 1) << bad_flag.err;
}

// ---- the subcommands as library calls -------------------------------------------

TEST(RunCommand, ReportsEveryOutputAndItsComparison) {
  RunFlags flags{.op = "my_norm", .input_shapes = "[3,16]", .seed = 11, .plugins = {kMyOps},
                 .tunables = "vec=2,block=128"};
  auto report = RunOp(flags);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->passed());
  EXPECT_EQ(report->ExitCode(), 0);
  ASSERT_EQ(report->inputs.size(), 1u);
  EXPECT_EQ(report->inputs[0].origin, "normal seed 11");
  ASSERT_EQ(report->outputs.size(), 1u);
  const OpRunOutput& y = report->outputs[0];
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.compare.total, 48);
  EXPECT_EQ(y.compare.tolerance.atol, 1e-5);
  EXPECT_GT(y.compare.max_abs_index, -1);
  ASSERT_FALSE(report->launches.empty());
  EXPECT_EQ(report->launches[0].config.block.x, 128);
  EXPECT_EQ(report->launches[0].config.vector_width, 2);
  EXPECT_NE(report->op_id, 0u);

  std::ostringstream out;
  PrintOpReport(*report, out);
  EXPECT_TRUE(Contains(out.str(), "repro: " + report->repro)) << out.str();
}

// The library names the request's fields; ops-debug says their flags (NameFlags).
TEST(RunCommand, ChecksBeforeRunning) {
  auto dtype = RunOp(RunFlags{.op = "Relu", .input_shapes = "[2];[2]"});
  ASSERT_FALSE(dtype.ok());
  EXPECT_TRUE(Contains(dtype.status().ToString(), "input_shapes: op Relu takes 1 input(s) (X), got 2 shapes"))
      << dtype.status().ToString();
  auto both = RunOp(RunFlags{.op = "Relu", .input_shapes = "[2]", .inputs = {"x.npy"}});
  ASSERT_FALSE(both.ok());
  EXPECT_TRUE(Contains(both.status().ToString(), "not used with `input_files`")) << both.status().ToString();
  EXPECT_EQ(NameFlags(both.status().ToString(), kOpsDebugFieldFlags).rfind("--input-shapes: not used with --inputs (", 0), 0u);
  auto dtypes = RunOp(RunFlags{.op = "my_bias_gelu", .input_shapes = "[2,3];[3]", .dtypes = "float32,float16,float64",
                               .plugins = {kMyOps}});
  ASSERT_FALSE(dtypes.ok());
  EXPECT_TRUE(Contains(dtypes.status().ToString(), "dtypes: 3 dtypes for 2 inputs")) << dtypes.status().ToString();
}

TEST(AppsAsLibraryCalls, OneLineErrorsAndExitCodes) {
  const char* argv[] = {"ops-debug", "run", "--op", "Relu", "--input-shapes", "[2,2]", "--dtype", "float64"};
  std::ostringstream out, err;
  EXPECT_EQ(OpsDebugMain(8, argv, out, err), 0) << err.str();
  EXPECT_TRUE(Contains(out.str(), "output Y  float64[2,2]  PASSED")) << out.str();

  const char* bad[] = {"ops-debug", "run", "--op", "Relu", "--seed", "abc"};
  std::ostringstream out2, err2;
  EXPECT_EQ(OpsDebugMain(6, bad, out2, err2), 2);
  const std::string err_text = err2.str();
  EXPECT_EQ(std::count(err_text.begin(), err_text.end(), '\n'), 1) << err_text;
  EXPECT_TRUE(Contains(err2.str(), "--seed")) << err2.str();

  const char* none[] = {"inspector-cli"};
  std::ostringstream out3, err3;
  EXPECT_EQ(InspectorMain(1, none, out3, err3), 2);
  EXPECT_TRUE(Contains(err3.str(), "no command given")) << err3.str();
}

TEST(ListAndDescribe, NameSourceAndSchema) {
  std::ostringstream list;
  ASSERT_TRUE(ListOps(ListFlags{}, list).ok());
  EXPECT_TRUE(Contains(list.str(), "Relu")) << list.str();
  std::ostringstream d;
  ASSERT_TRUE(DescribeOp(DescribeFlags{.op = "Relu"}, d).ok());
  EXPECT_TRUE(Contains(d.str(), "Relu  source builtin\n")) << d.str();
  const TunableDef* block = OpRegistry::Global().Find("Relu")->FindTunable("block");
  ASSERT_NE(block, nullptr);
  ASSERT_GE(block->values.size(), 2u);
  EXPECT_TRUE(Contains(d.str(), "  block: " + std::to_string(block->values[0]) + " (default), " +
                                    std::to_string(block->values[1])))
      << d.str();
  std::ostringstream none;
  Status st = DescribeOp(DescribeFlags{.op = "Reluu"}, none);
  EXPECT_TRUE(Contains(st.ToString(), "describe: unknown op 'Reluu'; did you mean ")) << st.ToString();
  EXPECT_TRUE(Contains(st.ToString(), "Relu")) << st.ToString();
}

TEST(FlagParsing, ShapesDtypesAssignmentsAndQuoting) {
  auto shapes = ParseShapeList("--input-shapes", "[4,256,64]; [64] ;[]");
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  ASSERT_EQ(shapes->size(), 3u);
  EXPECT_EQ((*shapes)[0], Shape({4, 256, 64}));
  EXPECT_EQ((*shapes)[1], Shape({64}));
  EXPECT_EQ((*shapes)[2].rank(), 0);
  EXPECT_FALSE(ParseShapeList("--input-shapes", "[4];;[2]").ok());
  auto dt = ParseDTypeList("--dtype", "float32, f16");
  ASSERT_TRUE(dt.ok());
  EXPECT_EQ(*dt, (std::vector<DType>{DType::kF32, DType::kF16}));
  EXPECT_TRUE(Contains(ParseDTypeList("--dtype", "float33").status().ToString(), "--dtype"));
  auto t = ParseIntAssignments("--tunables", "block=256, vec=4");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->at("block"), 256);
  EXPECT_EQ(t->at("vec"), 4);
  EXPECT_TRUE(Contains(ParseIntAssignments("--tunables", "block=2x").status().ToString(), "expected an integer"));
  EXPECT_EQ(ShellQuote("block=256,vec=4"), "block=256,vec=4");
  EXPECT_EQ(ShellQuote("[4,8];[8]"), "'[4,8];[8]'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(WithThousands(6422528), "6,422,528");
  EXPECT_EQ(MaskAddress(reinterpret_cast<void*>(0x7f3a12345678)), "0x7f3a\u20265678");
}

// diagnose and verify run `ops-debug run` in a child with the flags meant
// for it: their own options, read from what CLI11 declares, never go along.
TEST(ArgsForRun, DiagnoseKeepsRunFlagsAndDropsItsOwnWithTheirValues) {
  CLI::App app;
  DiagnoseFlags f;
  CLI::App* diagnose = AddDiagnoseCommand(app, f);
  // A flag right before a run flag: the flag takes no value, so --op stays.
  const char* argv[] = {"ops-debug", "diagnose", "--quiet-program", "--op", "Relu", "--timeout", "2s",
                        "--slots=8", "--input-shapes", "[4]", "--history", "h", "--seed=3", "--", "prog", "--op"};
  EXPECT_EQ(ArgsForRun(*diagnose, std::size(argv), argv),
            (std::vector<std::string>{"--op", "Relu", "--input-shapes", "[4]", "--seed=3"}));
}

TEST(ArgsForRun, VerifyDropsEveryOptionItAddsToRuns) {
  CLI::App app;
  VerifyFlags f;
  CLI::App* verify = AddVerifyCommand(app, f);
  const char* argv[] = {"ops-debug", "verify", "--iters", "5",    "--op", "X", "--max-bound-ratio=3",
                        "--peak-bw", "10",     "--seed",  "1",    "--output-dir", "v"};
  EXPECT_EQ(ArgsForRun(*verify, std::size(argv), argv), (std::vector<std::string>{"--op", "X", "--seed", "1"}));
  // Every option verify declares beyond run's is dropped: none left to forget.
  CLI::App run_app;
  RunFlags run_flags;
  AddRunFlags(run_app, run_flags);
  for (const CLI::Option* o : verify->get_options()) {
    if (o->get_lnames().empty() || run_app.get_option_no_throw("--" + o->get_lnames()[0]) != nullptr) continue;
    const std::string name = "--" + o->get_lnames()[0];
    const char* one[] = {"ops-debug", "verify", name.c_str(), "1", "--op", "Y"};
    const std::vector<std::string> kept = ArgsForRun(*verify, std::size(one), one);
    EXPECT_EQ(kept, (std::vector<std::string>{"--op", "Y"})) << name << " was forwarded to run";
  }
}

// A sweep's repro line, split as sh splits it (wordexp, no command
// substitution) and parsed by the sweep command's own flags, gives back the
// request it was made from, however hostile the names in it.
TEST(SweepCommandLine, ThePrintedCommandParsesBackToTheSameRequest) {
  TempDir tmp;
  const std::string out_dir = (tmp.path() / "it's a dir $(touch pwned)").string();
  SweepFlags f;
  f.run.op = "Relu";
  f.run.plugins = {"lib one.so", "two;rm -rf x.so"};
  f.run.input_shapes = "[2,3];[3]";
  f.run.dtypes = "float32";
  f.run.attrs = "alpha=0.5";
  f.run.seed = 7;
  f.run.fill = "uniform";
  f.run.tunables = "block=64";
  f.block = "64,128";
  f.tunable = {"tile=2,4"};
  f.warmup = 1;
  f.iters = 3;
  f.output_dir = out_dir;
  f.no_cache = true;
  StatusOr<SweepRequest> request = SweepRequestFromFlags(f);
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  const std::string line = SweepCommand(*request);
  EXPECT_EQ(line.rfind("ops-debug sweep --plugin 'lib one.so' --plugin 'two;rm -rf x.so' --op Relu", 0), 0) << line;

  wordexp_t words;
  ASSERT_EQ(wordexp(line.c_str(), &words, WRDE_NOCMD | WRDE_UNDEF), 0) << line;
  std::vector<const char*> argv(words.we_wordv, words.we_wordv + words.we_wordc);
  ASSERT_GE(argv.size(), 2u);
  CLI::App app;
  SweepFlags parsed;
  AddSweepCommand(app, parsed);
  // argv[0] is "ops-debug": CLI11 skips it; "sweep" selects the subcommand.
  ASSERT_NO_THROW(app.parse(static_cast<int>(argv.size()), argv.data())) << line;
  wordfree(&words);
  StatusOr<SweepRequest> again = SweepRequestFromFlags(parsed);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->base.run.plugins, request->base.run.plugins);
  EXPECT_EQ(again->base.run.op, "Relu");
  EXPECT_EQ(again->base.run.input_shapes, request->base.run.input_shapes);
  EXPECT_EQ(again->base.run.dtypes, request->base.run.dtypes);
  EXPECT_EQ(again->base.run.attrs, "alpha=0.5");
  EXPECT_EQ(again->base.run.seed, 7u);
  EXPECT_EQ(again->base.run.fill, FillKind::kUniform);
  EXPECT_EQ(again->base.run.tunables, request->base.run.tunables);
  EXPECT_EQ(again->values, request->values);
  EXPECT_EQ(again->base.warmup, 1);
  EXPECT_EQ(again->base.iterations, 3);
  EXPECT_EQ(again->cache_file, request->cache_file);
  EXPECT_FALSE(again->use_cache);
  EXPECT_FALSE(fs::exists(tmp.path() / "pwned"));
}

// The table runs the one row that parsed; OPSCOPE_PLUGINS is loaded only for
// the rows that take it, so a bad entry there refuses those and no other.
TEST(CommandTable, RunsTheParsedRowAndLoadsEnvPluginsOnlyWhereAsked) {
  const auto run = [](const std::vector<std::string>& args) {
    CLI::App app("t", "t");
    app.require_subcommand(1);
    int ran = 0;
    const std::vector<Command> table = {
        {app.add_subcommand("plain", "p"), [&]() -> StatusOr<int> { ran = 1; return 0; }, false},
        {app.add_subcommand("ops", "o"), [&]() -> StatusOr<int> { ran = 2; return 1; }, true},
        {app.add_subcommand("bad", "b"), [&]() -> StatusOr<int> { return InvalidArgumentError("x_field: no"); }, false},
    };
    std::vector<const char*> argv{"t"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    std::ostringstream out, err;
    static constexpr FieldFlag kFields[] = {{"x_field", "--x"}};
    const int code = RunCommandTable(app, table, kFields, "t", static_cast<int>(argv.size()), argv.data(), out, err);
    return std::tuple{code, ran, err.str()};
  };
  ASSERT_EQ(::setenv("OPSCOPE_PLUGINS", "/nonexistent/libnope.so", 1), 0);
  EXPECT_EQ(run({"plain"}), std::tuple(0, 1, std::string()));
  const auto [code, ran, err] = run({"ops"});
  EXPECT_EQ(code, 2);
  EXPECT_EQ(ran, 0) << "the row ran although its plugins did not load";
  EXPECT_TRUE(Contains(err, "libnope.so")) << err;
  ::unsetenv("OPSCOPE_PLUGINS");
  EXPECT_EQ(run({"ops"}), std::tuple(1, 2, std::string()));
  EXPECT_EQ(run({"bad"}), std::tuple(2, 0, std::string("t: error: --x: no\n"))) << "the field named as its flag";
}

// "--input-shapes [4, 256, 64]" typed without quotes reaches argv as three
// words; ops-debug takes them as the one list the user meant.
TEST(JoinBracketWords, AnUnclosedListTakesTheWordsThatCloseIt) {
  const auto joined = [](std::vector<const char*> argv) {
    return JoinBracketWords(static_cast<int>(argv.size()), argv.data());
  };
  using Words = std::vector<std::string>;
  EXPECT_EQ(joined({"ops-debug", "run", "--input-shapes", "[4,", "256,", "64]", "--dtype", "float32"}),
            (Words{"ops-debug", "run", "--input-shapes", "[4, 256, 64]", "--dtype", "float32"}));
  EXPECT_EQ(joined({"t", "--input-shapes=[4,", "8]"}), (Words{"t", "--input-shapes=[4, 8]"}));
  EXPECT_EQ(joined({"t", "--input-shapes", "[4,", "[8]"}), (Words{"t", "--input-shapes", "[4,", "[8]"}))
      << "still unbalanced: the words as they came";
  EXPECT_EQ(joined({"t", "--x", "[4,", "8"}), (Words{"t", "--x", "[4,", "8"})) << "never closed: left alone";
  EXPECT_EQ(joined({"t", "a[1", "b]"}), (Words{"t", "a[1", "b]"})) << "not a list: a word that does not open one";
  EXPECT_EQ(joined({"[x"}), (Words{"[x"})) << "argv[0] is the program";
}

// The library names fields; the tools say the flags that set them.
TEST(NameFlags, TheLeadingFieldAndBackquotedOnesBecomeFlags) {
  static constexpr FieldFlag kTable[] = {{"input_files", "--inputs"}, {"input_shapes", "--input-shapes"},
                                         {"op", "--op"}, {"baseline", "--baseline"}};
  const auto named = [](std::string_view m) { return NameFlags(m, kTable); };
  EXPECT_EQ(named("input_shapes: required unless `input_files` is given"),
            "--input-shapes: required unless --inputs is given");
  EXPECT_EQ(named("baseline 'Add>Nope': stage 'Nope': unknown op"), "--baseline 'Add>Nope': stage 'Nope': unknown op");
  EXPECT_EQ(named("`op`, `baseline` and `other`: pick one"), "--op, --baseline and other: pick one");
  // A field word that does not lead a "field:" or "field VALUE:" is prose.
  EXPECT_EQ(named("op Relu has no kernel for device cuda (it has: cpu)"), "op Relu has no kernel for device cuda (it has: cpu)");
  EXPECT_EQ(named("input_files, then more: x"), "input_files, then more: x");
  EXPECT_EQ(named("unknown: `x y` and `` and `a"), "unknown: `x y` and `` and `a");
  EXPECT_EQ(named(""), "");
}

}  // namespace
}  // namespace opscope::cli
