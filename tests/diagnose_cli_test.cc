// ops-debug diagnose end to end: the real binary supervising the real
// examples (examples/diagnose_ops: a kernel that writes past the end, one
// that spins, a norm without epsilon, two programs that race), the clean
// examples that must stay quiet, op-instance links, sync points on and off,
// and bad input. Each case reads the diagnosis.json the tool wrote.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "opscope/fill.h"
#include "opscope/npy.h"
#include "tool_test_util.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace ::opscope::testing;  // tool_test_util.h

const std::string kBin = std::string(OPSCOPE_BINARY_DIR) + "/bin/";
const std::string kOpsDebug = kBin + "ops-debug";
const std::string kPlugin = std::string(OPSCOPE_BINARY_DIR) + "/lib/libdiagnose_ops.so";
const std::string kExamples = std::string(OPSCOPE_SOURCE_DIR) + "/examples/diagnose_ops/";

// The line of `needle` in an example's source: what the stack must point at.
int LineOf(const std::string& file, const std::string& needle) {
  std::ifstream f(kExamples + file);
  std::string line;
  for (int n = 1; std::getline(f, line); ++n) {
    if (line.find(needle) != std::string::npos) return n;
  }
  return -1;
}

struct Diagnosed {
  ToolResult tool;
  json d;
};

Diagnosed Diagnose(const TempDir& dir, const std::string& args) {
  Diagnosed r;
  r.tool = Shell(kOpsDebug + " diagnose --quiet-program --output-dir " + dir.path().string() + " " + args);
  const fs::path file = dir.path() / "diagnosis.json";
  if (fs::exists(file)) r.d = json::parse(Slurp(file));
  return r;
}

bool AnyFrame(const json& frames, const std::string& function_part, const std::string& file_part, int line) {
  for (const json& f : frames) {
    if (Contains(f.value("function", ""), function_part) && Contains(f.value("file", ""), file_part) &&
        (line < 0 || f.value("line", 0) == line)) {
      return true;
    }
  }
  return false;
}

void ExpectClean(const Diagnosed& r) {
  EXPECT_EQ(r.tool.exit_code, 0) << r.tool.out << r.tool.err;
  ASSERT_TRUE(r.d.is_object()) << r.tool.out << r.tool.err;
  EXPECT_EQ(r.d["schema"], "opscope.diagnosis/1");
  EXPECT_EQ(r.d["status"], "clean");
  EXPECT_TRUE(r.d["causes"].empty()) << r.d["causes"].dump(2);
  EXPECT_TRUE(Contains(r.tool.out, "no cause: the run is clean")) << r.tool.out;
  EXPECT_GT(r.d["launches_recorded"].get<int>(), 0);  // it did record: quiet because right, not blind
}

TEST(DiagnoseCli, WriteOnePastTheEndIsNamedWithTheElementAndTheSourceLine) {
  TempDir dir;
  Diagnosed r = Diagnose(dir, "--plugin " + kPlugin + " --op ramp_tail --input-shapes '[1000]'");
  EXPECT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  EXPECT_EQ(r.d["status"], "crashed");
  EXPECT_EQ(r.d["signal"], "SIGSEGV");
  EXPECT_EQ(r.d["op"], "ramp_tail");
  ASSERT_FALSE(r.d["causes"].empty());
  const json& top = r.d["causes"][0];
  EXPECT_EQ(top["rule"], "out-of-bounds");
  EXPECT_EQ(top["confidence"], "high");
  EXPECT_TRUE(Contains(top["cause"], "writes y[1000]: 1 element past the end of y, float32[1000]")) << top.dump(2);
  // The fault line counts as the cause does: y[1000] starts at the first byte past the end.
  EXPECT_TRUE(Contains(r.tool.out, "fault  opscope: out-of-bounds access at 0x")) << r.tool.out;
  EXPECT_TRUE(Contains(r.tool.out, ": byte 1 past the end of a 4000-byte cpu allocation")) << r.tool.out;
  const int write_line = LineOf("ramp_tail.cc", "out[i] = start");
  ASSERT_GT(write_line, 0);
  EXPECT_TRUE(AnyFrame(r.d["snapshot"]["stack"], "RampCpu", "ramp_tail.cc", write_line)) << r.d["snapshot"]["stack"].dump(2);
  // The failing launch is marked in the trajectory, started and never finished.
  bool marked = false;
  for (const json& l : r.d["snapshot"]["trajectory"]) {
    if (l["failing"].get<bool>()) marked = l["op"] == "ramp_tail" && l["state"] == "started, never finished";
  }
  EXPECT_TRUE(marked) << r.d["snapshot"]["trajectory"].dump(2);
  EXPECT_TRUE(Contains(r.tool.out, "out-of-bounds write on y")) << r.tool.out;
}

// A run that fails without crashing: the run's own verdict is the top cause
// (issue 24), never "the program exited with code 1".
TEST(DiagnoseCli, AWrongResultIsExplainedByTheRunsVerdict) {
  TempDir dir;
  const std::string buggy = std::string(OPSCOPE_BINARY_DIR) + "/lib/libbuggy_ops.so";
  Diagnosed r = Diagnose(dir, "--plugin " + buggy + " --op bug_leaky_relu --input-shapes '[64,64]'");
  EXPECT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  ASSERT_FALSE(r.d["causes"].empty());
  const json& top = r.d["causes"][0];
  EXPECT_EQ(top["rule"], "wrong-result") << top.dump(2);
  EXPECT_TRUE(Contains(top["cause"], "output y float32[64,64] FAILED 2,026 / 4,096 mismatched")) << top.dump(2);
  EXPECT_TRUE(Contains(top["evidence"].dump(), "errors only where x < 0 (100% of mismatches")) << top.dump(2);
  for (const json& c : r.d["causes"]) EXPECT_NE(c["rule"], "exit") << c.dump(2);
  EXPECT_EQ(r.d["run_verdict"]["status"], "failed");
  // Three repeats ran, and agreed: a wrong result, not a nondeterministic one.
  EXPECT_TRUE(fs::exists(dir.path() / "run_report.json"));
  EXPECT_EQ(json::parse(Slurp(dir.path() / "run_report.json"))["determinism"]["runs"], 3);
}

// A custom op that launches on a stream of its own (issue 24): the side
// launch is recorded (Stream::Launch reports it), and with no event between
// it and the op's own kernel the race is named with both kernels and both
// streams; ordered by events, the same op is clean.
TEST(DiagnoseCli, ASideStreamLaunchInsideOneOpRacesWithItsOwnKernel) {
  TempDir dir;
  Diagnosed r = Diagnose(dir, "--plugin " + kPlugin + " --op side_stream_sum --input-shapes '[4096]'");
  EXPECT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  const json* race = nullptr;
  for (const json& c : r.d["causes"]) {
    if (c["rule"] == "race") race = &c;
  }
  ASSERT_NE(race, nullptr) << r.d["causes"].dump(2);
  const std::string cause = (*race)["cause"];
  EXPECT_TRUE(Contains(cause, "race on side_stream_sum's output y (float32[4096]")) << cause;
  EXPECT_TRUE(Contains(cause, "kernel side_stream_sum_cpu (op side_stream_sum")) << cause;
  EXPECT_TRUE(Contains(cause, "kernel side_stream_add (op side_stream_sum")) << cause;
  EXPECT_TRUE(Contains(cause, "on stream cpu/0")) << cause;
  EXPECT_TRUE(Contains((*race)["evidence"].dump(), "launched by the op on a stream of its own; its buffers taken as the op's tensors"))
      << (*race)["evidence"].dump(2);
  bool side_in_trajectory = false;
  for (const json& l : r.d["snapshot"]["trajectory"]) {
    // Sync records carry no kernel: read with value(), as a const json must be.
    side_in_trajectory |= l.value("kernel", "") == "side_stream_add" &&
                          l.value("state", "") == "side launch (buffers: the op's tensors and its allocations before it)";
  }
  EXPECT_TRUE(side_in_trajectory) << r.d["snapshot"]["trajectory"].dump(2);

  TempDir fixed_dir;
  ExpectClean(Diagnose(fixed_dir, "--plugin " + kPlugin + " --op side_stream_sum --input-shapes '[4096]' --attrs ordered=1"));
}

// The side kernel reads a scratch buffer the op allocated and filled by a
// copy on its own stream: the side launch's buffers are not known, but the
// op's allocations before it stand in, so the race on the scratch is named.
TEST(DiagnoseCli, ASideLaunchRacesOnScratchTheOpAllocatedBeforeIt) {
  TempDir dir;
  Diagnosed r = Diagnose(dir, "--plugin " + kPlugin + " --op side_stream_sum --input-shapes '[4096]' --attrs scratch=1");
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  const json* race = nullptr;
  for (const json& c : r.d["causes"]) {
    if (c["rule"] == "race" && Contains(c["cause"].get<std::string>(), "allocation of 16384 bytes")) race = &c;
  }
  ASSERT_NE(race, nullptr) << r.d["causes"].dump(2);
  const std::string cause = (*race)["cause"];
  EXPECT_TRUE(Contains(cause, "race on side_stream_sum's allocation of 16384 bytes (at ")) << cause;
  EXPECT_TRUE(Contains(cause, "a copy issued by side_stream_sum's kernel on stream cpu/0 writes it")) << cause;
  EXPECT_TRUE(Contains(cause, "kernel side_stream_from_scratch")) << cause;
  EXPECT_TRUE(Contains((*race)["evidence"].dump(), "its buffers taken as the op's tensors and the 1 allocation the op made before it"))
      << (*race)["evidence"].dump(2);

  TempDir fixed_dir;
  ExpectClean(Diagnose(fixed_dir, "--plugin " + kPlugin + " --op side_stream_sum --input-shapes '[4096]' --attrs scratch=1,ordered=1"));
}

TEST(DiagnoseCli, TheSameKernelOnAMultipleOfItsBlockIsClean) {
  TempDir dir;
  ExpectClean(Diagnose(dir, "--plugin " + kPlugin + " --op ramp_tail --input-shapes '[1024]'"));
}

TEST(DiagnoseCli, ASpinningKernelIsHungWithItsThreadInTheLoop) {
  TempDir dir;
  Diagnosed r = Diagnose(dir, "--plugin " + kPlugin + " --op mantissa --input-shapes '[4096]' --timeout 2s");
  EXPECT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  EXPECT_EQ(r.d["status"], "hung");
  ASSERT_FALSE(r.d["causes"].empty());
  const json& top = r.d["causes"][0];
  EXPECT_EQ(top["rule"], "hang");
  EXPECT_TRUE(Contains(top["cause"], "kernel mantissa_cpu (op mantissa) started and never finished")) << top.dump(2);
  EXPECT_TRUE(Contains(top["evidence"].dump(), "negative values present")) << top.dump(2);
  // Every thread's stack was taken; one of them is inside the loop that never exits.
  ASSERT_GE(r.d["snapshot"]["threads"].size(), 2u);
  const int loop_line = LineOf("mantissa.cc", "while (v < 1.0f)");
  bool in_loop = false;
  for (const json& t : r.d["snapshot"]["threads"]) in_loop |= AnyFrame(t["frames"], "Normalise", "mantissa.cc", loop_line);
  EXPECT_TRUE(in_loop) << r.d["snapshot"]["threads"].dump(2);
}

TEST(DiagnoseCli, NaNFromAZeroRowIsTracedToTheNormAndTheRow) {
  TempDir dir;
  Diagnosed r = Diagnose(dir, "--plugin " + kPlugin + " --op rms_norm_no_eps --inputs " + kExamples + "zero_row.npy");
  EXPECT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  ASSERT_FALSE(r.d["causes"].empty());
  const json& top = r.d["causes"][0];
  EXPECT_EQ(top["rule"], "nan-origin");
  EXPECT_TRUE(Contains(top["cause"], "NaN first appears in op rms_norm_no_eps")) << top.dump(2);
  const std::string evidence = top["evidence"].dump();
  EXPECT_TRUE(Contains(evidence, "row 3 of x is in [0, 0]: all zeros")) << evidence;
  EXPECT_TRUE(Contains(evidence, "first NaN at y[3,0]")) << evidence;
  EXPECT_TRUE(Contains(evidence, "input x float32[8,64] in [")) << evidence;
}

TEST(DiagnoseCli, TwoStreamsWithoutAnEventRaceAndTheFixIsClean) {
  TempDir dir;
  Diagnosed r = Diagnose(dir, "-- " + kBin + "race_demo");
  EXPECT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  EXPECT_EQ(r.d["exit_code"], 0);  // the program itself did not notice
  ASSERT_EQ(r.d["causes"].size(), 1u) << r.d["causes"].dump(2);
  const json& race = r.d["causes"][0];
  EXPECT_EQ(race["rule"], "race");
  EXPECT_TRUE(Contains(race["cause"], "race on Relu's output Y")) << race.dump(2);
  EXPECT_TRUE(Contains(race["cause"], "kernel relu_cpu")) << race.dump(2);
  EXPECT_TRUE(Contains(race["cause"], "kernel sigmoid_cpu")) << race.dump(2);
  EXPECT_TRUE(Contains(race["cause"], "on stream cpu/1 writes it")) << race.dump(2);
  EXPECT_TRUE(Contains(race["cause"], "on stream cpu/2 reads it")) << race.dump(2);

  TempDir fixed;
  ExpectClean(Diagnose(fixed, "-- " + kBin + "race_demo --fixed"));
}

// Without sync points the inputs are not summarised (they may still be in
// flight); an output is, only if its kernel happened to finish by then.
TEST(DiagnoseCli, SyncPointsOffStillFindsTheRaceButSummarisesNoInputs) {
  TempDir dir;
  Diagnosed r = Diagnose(dir, "--sync-points off -- " + kBin + "race_demo");
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  EXPECT_EQ(r.d["sync_points"], false);
  ASSERT_FALSE(r.d["causes"].empty());
  EXPECT_EQ(r.d["causes"][0]["rule"], "race");
  for (const json& l : r.d["snapshot"]["trajectory"]) {
    if (l["kind"] != "launch") continue;
    for (const json& t : l["tensors"]) {
      if (t["role"] == "input") EXPECT_TRUE(t["stats"].is_null()) << l.dump(2);
    }
  }
  // With sync points on, the same launches carry their inputs' summaries.
  TempDir on;
  Diagnosed s = Diagnose(on, "-- " + kBin + "race_demo");
  ASSERT_TRUE(s.d.is_object());
  EXPECT_EQ(s.d["sync_points"], true);
  bool summarised = false;
  for (const json& l : s.d["snapshot"]["trajectory"]) {
    if (l["kind"] != "launch") continue;
    for (const json& t : l["tensors"]) summarised |= t["role"] == "input" && !t["stats"].is_null();
  }
  EXPECT_TRUE(summarised);
  EXPECT_TRUE(Contains(s.tool.out, "timings under diagnose are slow by design")) << s.tool.out;
  EXPECT_GE(s.d["slowdown"]["factor"].get<double>(), 1.0);
}

TEST(DiagnoseCli, AModelWhoseCustomOpCrashesOnARacedInputBlamesTheRaceFirst) {
  TempDir dir, run;
  Diagnosed r = Diagnose(dir, "-- " + kBin + "inspector-cli run " + kExamples + "async_gather.onnx --plugin " + kPlugin +
                                  " --output-dir " + run.path().string());
  EXPECT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  EXPECT_EQ(r.d["status"], "crashed");
  EXPECT_EQ(r.d["op"], "gather_rows");  // the op that crashed last...
  ASSERT_GE(r.d["causes"].size(), 2u);
  const json& top = r.d["causes"][0];  // ...is not the top cause
  EXPECT_EQ(top["rule"], "race") << r.d["causes"].dump(2);
  EXPECT_TRUE(Contains(top["cause"], "async_indices's output idx")) << top.dump(2);
  EXPECT_TRUE(Contains(top["cause"], "issued by async_indices's kernel")) << top.dump(2);
  EXPECT_TRUE(Contains(top["cause"], "kernel gather_rows_cpu")) << top.dump(2);
  EXPECT_EQ(r.d["causes"][1]["rule"], "out-of-bounds");
  EXPECT_TRUE(Contains(r.d["causes"][1]["cause"], "reads table[-64]")) << r.d["causes"][1].dump(2);
}

TEST(DiagnoseCli, CorrectOpsAndModelsAreClean) {
  const std::string lib = std::string(OPSCOPE_BINARY_DIR) + "/lib/";
  const std::string models = std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/";
  for (const std::string& args :
       {"--plugin " + lib + "libmy_ops.so --op my_norm --input-shapes '[4,256,64]' --attrs eps=1e-6",
        std::string("--op Relu --input-shapes '[1000]'"),
        std::string("--op Softmax --input-shapes '[8,100]'"),
        std::string("--op MatMul --input-shapes '[33,17];[17,9]'"),
        "-- " + kBin + "inspector-cli run " + models + "two_branch.onnx --output-dir ",
        "-- " + kBin + "inspector-cli run " + models + "resnet_small.onnx --output-dir ",
        "-- " + kBin + "inspector-cli run " + models + "custom_op.onnx --plugin " + lib + "libmy_ops.so --output-dir ",
        "-- " + kBin + "session_demo " + models + "two_branch.onnx"}) {
    SCOPED_TRACE(args);
    TempDir dir, out;
    const bool needs_dir = args.size() > 13 && args.substr(args.size() - 13) == "--output-dir ";
    ExpectClean(Diagnose(dir, args + (needs_dir ? out.path().string() : "")));
  }
}

TEST(DiagnoseCli, ACrashIsLinkedToTheEarlierRunOfTheSameOpInstance) {
  TempDir dir;
  // Positive inputs (uniform in [0.5, 3)): mantissa is right. Then the same
  // op instance, on normal data with negatives among it, hangs.
  const std::string positive = (dir.path() / "positive.npy").string();
  {
    auto x = Tensor::Empty(DType::kF32, Shape({256}));
    ASSERT_TRUE(x.ok());
    ASSERT_TRUE(Fill(*x, {.kind = FillKind::kUniform, .seed = 5, .low = 0.5, .high = 3}).ok());
    ASSERT_TRUE(WriteNpy(positive, *x).ok());
  }
  ToolResult run = Shell(kOpsDebug + " run --plugin " + kPlugin + " --op mantissa --inputs " + positive +
                         " --report " + (dir.path() / "report.json").string());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  Diagnosed r = Diagnose(dir, "--plugin " + kPlugin + " --op mantissa --input-shapes '[256]' --timeout 2s");
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  EXPECT_EQ(r.d["status"], "hung");
  ASSERT_EQ(r.d["links"].size(), 1u) << r.d.dump(2);
  const json& link = r.d["links"][0];
  EXPECT_EQ(link["status"], "passed");
  EXPECT_EQ(link["same_data"], false);
  EXPECT_NE(link["input_fingerprint_then"], link["input_fingerprint_now"]);
  EXPECT_TRUE(Contains(link["text"], "passed ops-debug run")) << link.dump(2);
  EXPECT_TRUE(Contains(link["text"], "it hung with fingerprint")) << link.dump(2);
  // Another op instance (other shape), passed in --history, is not linked.
  TempDir other;
  const std::string small = (other.path() / "positive.npy").string();
  {
    auto x = Tensor::Empty(DType::kF32, Shape({128}));
    ASSERT_TRUE(x.ok());
    ASSERT_TRUE(Fill(*x, {.kind = FillKind::kUniform, .seed = 6, .low = 0.5, .high = 3}).ok());
    ASSERT_TRUE(WriteNpy(small, *x).ok());
  }
  ASSERT_EQ(Shell(kOpsDebug + " run --plugin " + kPlugin + " --op mantissa --inputs " + small + " --report " +
                  (other.path() / "report.json").string()).exit_code, 0);
  Diagnosed o = Diagnose(dir, "--history " + other.path().string() + " --plugin " + kPlugin +
                                  " --op mantissa --input-shapes '[256]' --timeout 2s");
  ASSERT_TRUE(o.d.is_object());
  EXPECT_EQ(o.d["links"].size(), 1u) << o.d["links"].dump(2);  // still only the [256] report
}

// Every way a kernel dies, one example kernel each (examples/diagnose_ops/crash_kind.cc).
TEST(DiagnoseCli, EachWayAKernelDiesIsNamedWithItsSignalAndCause) {
  struct Case {
    std::string kind, status, signal, rule, cause_part;
  };
  for (const Case& c : std::vector<Case>{
           {"null", "crashed", "SIGSEGV", "out-of-bounds", "a null pointer dereference at 0x0 in CrashCpu"},
           {"fpe", "crashed", "SIGFPE", "arithmetic", "integer division by zero in op crash_kind"},
           {"ill", "crashed", "SIGILL", "illegal-instruction", "illegal instruction in op crash_kind"},
           {"abort", "crashed", "SIGABRT", "abort", "check failed: n_rows > 0"},
           // ops-debug's own last-resort handler (issue 11) turns std::terminate into one line and exit 2.
           {"terminate", "error", "", "exit", "uncaught exception: crash_kind: the kernel threw"},
           {"bus", "crashed", "SIGBUS", "out-of-bounds", "past the end of its file"},
           {"kill", "crashed", "SIGKILL", "killed", "killed by SIGKILL in op crash_kind"},
           {"error", "error", "", "kernel-error", "uncorrectable ECC error"}}) {
    SCOPED_TRACE(c.kind);
    TempDir dir;
    Diagnosed r = Diagnose(dir, "--plugin " + kPlugin + " --op crash_kind --attrs kind=" + c.kind + " --input-shapes '[64]'");
    EXPECT_EQ(r.tool.exit_code, 1) << r.tool.out << r.tool.err;
    ASSERT_TRUE(r.d.is_object()) << r.tool.err;
    EXPECT_EQ(r.d["status"], c.status);
    if (!c.signal.empty()) EXPECT_EQ(r.d["signal"], c.signal);
    if (c.signal.empty()) EXPECT_EQ(r.d["exit_code"], c.kind == "terminate" ? 2 : 1);
    EXPECT_EQ(r.d["op"], "crash_kind");  // the launch in flight, even after SIGKILL
    ASSERT_FALSE(r.d["causes"].empty());
    EXPECT_EQ(r.d["causes"][0]["rule"], c.rule) << r.d["causes"].dump(2);
    EXPECT_TRUE(Contains(r.d["causes"][0]["cause"], c.cause_part)) << r.d["causes"][0].dump(2);
  }
  TempDir ok;
  ExpectClean(Diagnose(ok, "--plugin " + kPlugin + " --op crash_kind --attrs kind=none --input-shapes '[64]'"));
}

// A kernel test built with ASan + UBSan (examples/diagnose_ops/sanitizer_demo.cc):
// the sanitizer's own report, read from stderr, is the cause, to the line.
TEST(DiagnoseCli, ASanitizersReportIsTheCauseWithItsKindAndLine) {
  TempDir heap;
  Diagnosed h = Diagnose(heap, "-- " + kBin + "sanitizer_demo heap");
  ASSERT_TRUE(h.d.is_object()) << h.tool.err;
  EXPECT_EQ(h.tool.exit_code, 1);
  // ASan exits 1, or aborts where ASAN_OPTIONS has abort_on_error=1 (test.sh's).
  EXPECT_TRUE(h.d["status"] == "error" || (h.d["status"] == "crashed" && h.d["signal"] == "SIGABRT")) << h.d.dump(2);
  ASSERT_FALSE(h.d["causes"].empty()) << h.d.dump(2);
  const json& c = h.d["causes"][0];
  EXPECT_EQ(c["rule"], "sanitizer") << h.d["causes"].dump(2);
  EXPECT_TRUE(Contains(c["cause"], "AddressSanitizer: heap-buffer-overflow at ")) << c.dump(2);
  // g++'s runtime writes "sanitizer_demo.cc:20 in RowSum", clang's adds the column and the signature.
  EXPECT_TRUE(Contains(c["cause"], "sanitizer_demo.cc:20")) << c.dump(2);
  EXPECT_TRUE(Contains(c["cause"], "RowSum")) << c.dump(2);
  EXPECT_TRUE(Contains(c["fix"], "clamp the loop bound")) << c.dump(2);

  // UBSan reports and the program goes on (diagnose makes its reports
  // recoverable): it exits 0, yet the run is not clean.
  TempDir ub;
  Diagnosed u = Diagnose(ub, "-- " + kBin + "sanitizer_demo overflow");
  ASSERT_TRUE(u.d.is_object()) << u.tool.err;
  EXPECT_EQ(u.d["exit_code"], 0);
  EXPECT_EQ(u.d["status"], "error");
  ASSERT_FALSE(u.d["causes"].empty()) << u.d.dump(2);
  EXPECT_EQ(u.d["causes"][0]["rule"], "sanitizer");
  // The operands' order is the compiler's ("1073741824 * 2" from g++, "2 * 1073741824" from clang).
  EXPECT_TRUE(Contains(u.d["causes"][0]["cause"], "UndefinedBehaviorSanitizer: signed integer overflow: "))
      << u.d["causes"][0].dump(2);
  EXPECT_TRUE(Contains(u.d["causes"][0]["cause"], "1073741824")) << u.d["causes"][0].dump(2);
  EXPECT_TRUE(Contains(u.d["causes"][0]["cause"], "sanitizer_demo.cc:26:")) << u.d["causes"][0].dump(2);
  EXPECT_TRUE(Contains(u.d["causes"][0]["fix"], "int64_t")) << u.d["causes"][0].dump(2);

  // Without the bug: clean (a program not on libopscope records no launches).
  TempDir ok;
  Diagnosed k = Diagnose(ok, "-- " + kBin + "sanitizer_demo");
  EXPECT_EQ(k.tool.exit_code, 0) << k.tool.out << k.tool.err;
  ASSERT_TRUE(k.d.is_object()) << k.tool.err;
  EXPECT_EQ(k.d["status"], "clean");
  EXPECT_TRUE(k.d["causes"].empty()) << k.d["causes"].dump(2);
}

TEST(DiagnoseCli, BadValuesFromUpstreamAreTracedToTheOpThatMadeThem) {
  TempDir dir, run;
  Diagnosed r = Diagnose(dir, "-- " + kBin + "inspector-cli run " + kExamples + "exp_histogram.onnx --plugin " + kPlugin +
                                  " --output-dir " + run.path().string());
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  EXPECT_EQ(r.d["status"], "crashed");
  EXPECT_EQ(r.d["op"], "log2_histogram");
  ASSERT_GE(r.d["causes"].size(), 3u) << r.d["causes"].dump(2);
  // The origin first (the compiler fused Mul and Exp), then the hand-over, then the crash it caused.
  EXPECT_EQ(r.d["causes"][0]["rule"], "nan-origin");
  EXPECT_TRUE(Contains(r.d["causes"][0]["cause"], "Inf first appears in op FusedElementwise")) << r.d["causes"][0].dump(2);
  EXPECT_TRUE(Contains(r.d["causes"][0]["evidence"].dump(), "an overflow")) << r.d["causes"][0].dump(2);
  EXPECT_EQ(r.d["causes"][1]["rule"], "upstream-values");
  EXPECT_TRUE(Contains(r.d["causes"][1]["cause"], "input x of op log2_histogram")) << r.d["causes"][1].dump(2);
  EXPECT_TRUE(Contains(r.d["causes"][1]["cause"], "in op FusedElementwise")) << r.d["causes"][1].dump(2);
  EXPECT_EQ(r.d["causes"][2]["rule"], "out-of-bounds");
}

// A softmax without the max subtracted: exp overflows to Inf and Inf/Inf is
// NaN. The row holds 0 too, but it is an overflow, not a division by zero.
TEST(DiagnoseCli, AnExpOverflowIsNamedAsAnOverflow) {
  TempDir dir;
  Diagnosed r = Diagnose(dir, "--plugin " + kPlugin + " --op naive_softmax --input-shapes '[4,256]' --fill sequential");
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  ASSERT_FALSE(r.d["causes"].empty()) << r.tool.out;
  const json& c = r.d["causes"][0];
  EXPECT_EQ(c["rule"], "nan-origin") << c.dump(2);
  const std::string evidence = c["evidence"].dump();
  EXPECT_TRUE(Contains(evidence, "likely: an overflow: row 0 of x reaches 255, past 88.72 where exp overflows float32")) << evidence;
  EXPECT_FALSE(Contains(evidence, "division")) << evidence;
  EXPECT_TRUE(Contains(c["fix"], "subtract the row's max before exp")) << c.dump(2);
}

TEST(DiagnoseCli, AShapeTheOpRefusesIsAShapeCause) {
  TempDir dir;
  Diagnosed r = Diagnose(dir, "--op Add --input-shapes '[4,3];[5]'");
  ASSERT_TRUE(r.d.is_object()) << r.tool.out << r.tool.err;
  EXPECT_NE(r.d["status"], "clean");
  ASSERT_FALSE(r.d["causes"].empty()) << r.d.dump(2);
  EXPECT_EQ(r.d["causes"][0]["rule"], "shape");
  EXPECT_EQ(r.d["causes"][0]["confidence"], "high");
  EXPECT_TRUE(Contains(r.d["causes"][0]["cause"], "shape or broadcast mismatch: op Add")) << r.d["causes"][0].dump(2);
}

TEST(DiagnoseCli, AStaticFindingInTheFailingKernelAgreesWithTheDynamicEvidence) {
  TempDir dir;
  Diagnosed r = Diagnose(dir, "--source " + kExamples + "ramp_tail.cc --plugin " + kPlugin +
                                  " --op ramp_tail --input-shapes '[1000]'");
  ASSERT_TRUE(r.d.is_object()) << r.tool.err;
  ASSERT_EQ(r.d["static_findings"].size(), 1u) << r.d.dump(2);
  const json& f = r.d["static_findings"][0];
  EXPECT_EQ(f["check"], "missing-tail-guard");
  EXPECT_EQ(f["kernel"], "RampCpu");
  EXPECT_EQ(f["agrees_with_dynamic_evidence"], true);
  EXPECT_EQ(r.d["causes"][0]["rule"], "out-of-bounds");  // dynamic evidence first, backed by the static clue
  EXPECT_TRUE(Contains(r.d["causes"][0]["evidence"].dump(), "static check agrees")) << r.d["causes"][0].dump(2);
  // A source libclang cannot parse: said once, and the dynamic diagnosis goes on.
  TempDir bad;
  const fs::path junk = bad.path() / "junk.cc";
  std::ofstream(junk) << "this is not C++ at all {{{";
  Diagnosed b = Diagnose(bad, "--source " + junk.string() + " --plugin " + kPlugin + " --op ramp_tail --input-shapes '[1000]'");
  ASSERT_TRUE(b.d.is_object()) << b.tool.err;
  EXPECT_EQ(b.d["status"], "crashed");
  EXPECT_EQ(b.d["causes"][0]["rule"], "out-of-bounds");
  EXPECT_TRUE(Contains(b.d["static_notes"].dump(), "junk.cc")) << b.d["static_notes"].dump(2);
}

// verify: the roofs are given, so the profile gate's verdict does not depend
// on this machine's speed: a roof no machine reaches fails it, a tiny one passes.
json Verify(const TempDir& dir, const std::string& args, ToolResult* tool) {
  *tool = Shell(kOpsDebug + " verify --warmup 1 --iters 3 --output-dir " + dir.path().string() + " " + args);
  const fs::path file = dir.path() / "report.json";
  return fs::exists(file) ? json::parse(Slurp(file)) : json();
}

TEST(VerifyCli, ACorrectFastEnoughCleanOpPassesAllThreeGatesInOneReport) {
  TempDir dir;
  ToolResult t;
  json r = Verify(dir, "--op Relu --input-shapes '[4096]' --peak-bw 0.001 --peak-flops 0.001", &t);
  EXPECT_EQ(t.exit_code, 0) << t.out << t.err;
  ASSERT_TRUE(r.is_object()) << t.err;
  EXPECT_EQ(r["schema"], "opscope.report/1");
  EXPECT_EQ(r["verify"]["passed"], true);
  ASSERT_EQ(r["verify"]["gates"].size(), 3u);
  EXPECT_EQ(r["verify"]["gates"][0]["gate"], "run");
  EXPECT_EQ(r["verify"]["gates"][1]["gate"], "profile");
  EXPECT_EQ(r["verify"]["gates"][2]["gate"], "diagnose");
  // The three sections of one op instance: correctness, speed, diagnosis.
  EXPECT_TRUE(r["compare"].is_object());
  EXPECT_TRUE(r["profile"].is_object());
  EXPECT_EQ(r["diagnosis"]["status"], "clean");
  EXPECT_TRUE(fs::exists(dir.path() / "diagnosis.json"));
  EXPECT_TRUE(Contains(t.out, "verify PASSED")) << t.out;
}

TEST(VerifyCli, EachGateFailsAloneAndTheFirstFailedIsNamedWithItsCommand) {
  TempDir slow;
  ToolResult t;
  json r = Verify(slow, "--op Relu --input-shapes '[4096]' --peak-bw 1000000 --peak-flops 1000000", &t);
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
  ASSERT_TRUE(r.is_object()) << t.err;
  EXPECT_EQ(r["verify"]["first_failed"], "profile");
  EXPECT_EQ(r["verify"]["gates"][0]["status"], "passed");
  EXPECT_EQ(r["verify"]["gates"][2]["status"], "passed");
  EXPECT_TRUE(Contains(t.out, "verify FAILED at the profile gate")) << t.out;
  EXPECT_TRUE(Contains(t.out, "ops-debug profile --op Relu")) << t.out;

  TempDir crash;
  r = Verify(crash, "--plugin " + kPlugin + " --op ramp_tail --input-shapes '[1000]'", &t);
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
  ASSERT_TRUE(r.is_object()) << t.err;
  EXPECT_EQ(r["verify"]["first_failed"], "run");
  EXPECT_EQ(r["verify"]["gates"][2]["status"], "failed");
  EXPECT_EQ(r["diagnosis"]["status"], "crashed");
  EXPECT_TRUE(Contains(t.out, "ops-debug run --plugin")) << t.out;

  TempDir wrong;
  r = Verify(wrong, "--plugin " + kPlugin + " --op rms_norm_no_eps --inputs " + kExamples + "zero_row.npy --peak-bw 0.001 --peak-flops 0.001", &t);
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
  ASSERT_TRUE(r.is_object()) << t.err;
  EXPECT_EQ(r["verify"]["first_failed"], "run");
  EXPECT_EQ(r["verify"]["gates"][0]["status"], "failed");

  // Wrong numbers and nothing else: the diagnose gate says so, not "exited with code 1".
  TempDir numbers;
  r = Verify(numbers, "--plugin " + std::string(OPSCOPE_BINARY_DIR) + "/lib/libbuggy_ops.so --op bug_leaky_relu --input-shapes '[64,64]'", &t);
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
  ASSERT_TRUE(r.is_object()) << t.err;
  EXPECT_EQ(r["verify"]["first_failed"], "run");
  EXPECT_EQ(r["verify"]["gates"][2]["status"], "failed");
  EXPECT_EQ(r["verify"]["gates"][2]["detail"], "outputs wrong (see run)") << r["verify"].dump(2);
  EXPECT_FALSE(Contains(t.out, "exited with code")) << t.out;
}

TEST(DiagnoseCli, BadInputIsOneLineAndExitTwoWithNothingWritten) {
  TempDir dir;
  const std::string out = " --output-dir " + (dir.path() / "d").string();
  ExpectUsageError(Shell(kOpsDebug + " diagnose" + out + " -- /no/such/program"), "/no/such/program: no such program");
  ExpectUsageError(Shell(kOpsDebug + " diagnose" + out + " -- no-such-program-on-path"), "no such program on PATH");
  ExpectUsageError(Shell(kOpsDebug + " diagnose" + out + " -- " + std::string(OPSCOPE_SOURCE_DIR) + "/README.md"),
                   "not an executable file");
  ExpectUsageError(Shell(kOpsDebug + " diagnose --timeout soon" + out + " --op Relu --input-shapes '[4]'"),
                   "--timeout 'soon': expected a duration");
  ExpectUsageError(Shell(kOpsDebug + " diagnose" + out + " --sync-points maybe --op Relu"), "--sync-points");
  ExpectUsageError(Shell(kOpsDebug + " diagnose" + out), "give --op OP");
  EXPECT_FALSE(fs::exists(dir.path() / "d" / "diagnosis.json"));
  // A folder that cannot be made: under a regular file.
  ExpectUsageError(Shell(kOpsDebug + " diagnose --output-dir " + std::string(OPSCOPE_SOURCE_DIR) +
                         "/README.md/d --op Relu --input-shapes '[4]'"),
                   "--output-dir");
}

}  // namespace
}  // namespace opscope
