// inspector-cli end to end: the real binary on the example models, into
// fresh temporary folders; every file it writes is parsed back.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/apps.h"
#include "core/text_format.h"
#include "inspector_tool_test.h"
#include "onnx/onnx_pb.h"
#include "opscope/npy.h"
#include "opscope/tensor.h"
#include "graph_json_test_util.h"
#include "tool_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using Result = ::opscope::testing::ToolResult;
using namespace ::opscope::testing;  // tool_test_util.h

class InspectorCli : public ::opscope::testing::InspectorToolTest {
 protected:
  // Fixed roofs: no test waits for a calibration or depends on this machine's speed.
  static constexpr char kPeaks[] = "--peak-bw 10 --peak-flops 50";
  std::string RunModel(const std::string& model, const std::string& out_name, const std::string& extra = "") {
    const std::string out = (dir_ / out_name).string();
    Result r = Run("run " + Model(model) + " --output-dir " + out + " " + kPeaks + " " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out;
  }
};

// `run --expected`: each graph output against a file computed elsewhere, by
// the compare engine; a failed output is exit 1 with its pattern, the run's
// files still written (a verdict, not an error), and the verdict is kept in
// summary.json and capture.json (summary prints it again). Bad files are
// refused before the model runs. In-process: the runs are the model's.
TEST_F(InspectorCli, RunExpectedHoldsEachOutputAgainstItsFile) {
  const auto inspector = [](const std::string& args) {
    return ::opscope::testing::InProcessLine(::opscope::cli::InspectorMain, "inspector-cli", args);
  };
  const std::string run = "run " + Model("two_branch.onnx") + " " + kPeaks + " --iterations 1 --output-dir ";
  const fs::path saved = dir_ / "saved";
  Result first = inspector(run + (dir_ / "first").string() + " --save-outputs " + saved.string());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string scores = (saved / "scores.npy").string();
  ASSERT_TRUE(fs::exists(scores));

  Result same = inspector(run + (dir_ / "same").string() + " --expected " + scores);
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("output scores  float32[1,3]  PASSED  0 / 3 mismatched"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("--expected " + scores), std::string::npos) << "the repro line: " << same.out;

  // 1% off on every element: a scale, said as one.
  opscope::Tensor t = *opscope::ReadNpy(scores);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] *= 1.01f;
  const std::string off = (dir_ / "off.npy").string();
  ASSERT_TRUE(opscope::WriteNpy(off, t).ok());
  const fs::path failed = dir_ / "failed";
  Result bad = inspector(run + failed.string() + " --expected scores=" + off);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("output scores  float32[1,3]  FAILED  3 / 3 mismatched"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("0.9901 x expected everywhere"), std::string::npos) << bad.out;
  const json summary = json::parse(Slurp(failed / "summary.json"));
  ASSERT_EQ(summary["outputs_checked"].size(), 1u);
  EXPECT_EQ(summary["outputs_checked"][0]["name"], "scores");
  EXPECT_EQ(summary["outputs_checked"][0]["passed"], false);
  EXPECT_EQ(summary["outputs_checked"][0]["mismatched"], 3);
  EXPECT_EQ(summary["outputs_checked"][0]["pattern"], "errors everywhere (every element)");
  EXPECT_NEAR(summary["outputs_checked"][0]["max_rel_err"].get<double>(), 0.01 / 1.01, 1e-6);
  Result again = inspector("summary " + failed.string());
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("outputs against --expected\noutput scores  float32[1,3]  FAILED"), std::string::npos)
      << again.out;

  // The tolerance flags are compare's: 1% is within an absolute 0.1.
  Result loose = inspector(run + (dir_ / "loose").string() + " --expected " + off + " --mode abs --abserr 0.1");
  EXPECT_EQ(loose.exit_code, 0) << loose.out << loose.err;
  EXPECT_NE(loose.out.find("PASSED  0 / 3 mismatched (0.00%)  absolute"), std::string::npos) << loose.out;

  // Refused before the model runs: nothing written.
  opscope::Tensor flat = *opscope::ReadNpy(scores);
  const std::string f64 = (dir_ / "f64.npy").string(), wide = (dir_ / "wide.npy").string();
  ASSERT_TRUE(opscope::WriteNpy(f64, *flat.CastTo(opscope::DType::kF64)).ok());
  ASSERT_TRUE(opscope::WriteNpy(wide, *flat.Reshape(opscope::Shape({3}))).ok());
  const std::string refused = (dir_ / "refused").string();
  const std::pair<std::string, std::string> cases[] = {
      {scores + "," + scores, "--expected: 2 file(s) for the model's 1 output(s)"},
      {f64, "--expected " + f64 + ": holds float64[1,3] but output 'scores' is float32 (expected the same dtype)"},
      {wide, "--expected " + wide + ": holds float32[3] but output 'scores' is float32[1,3]"},
      {"logits=" + scores, "--expected logits=" + scores + ": the model has no output 'logits' (its outputs: scores)"},
      {(dir_ / "missing.npy").string(), "--expected: "},
  };
  for (const auto& [files, message] : cases) {
    Result r = inspector(run + refused + " --expected " + files);
    EXPECT_EQ(r.exit_code, 2) << files << "\n" << r.out;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(refused)) << files;
  }
}

// The symptom table: a layout pass that wraps a plugin's op in transdata
// nodes is "inserted tasks", fusions and a branch not taken are "not
// executed", each with its evidence, in summary.json and again from the
// folder by `summary`, which does not load the plugin (capture.json says
// which ops the layout pass gave NHWC, so the compiled graph comes out the
// same). A model whose every node runs as itself, with only its input and
// output copies, has no finding.
TEST_F(InspectorCli, SummaryFindsInsertedTasksAndNodesThatDidNotRun) {
  const std::string buggy = std::string(OPSCOPE_BINARY_DIR) + "/lib/libbuggy_ops.so";
  const fs::path nhwc = RunModel("nhwc_mean.onnx", "nhwc", "--iterations 1 --plugin " + buggy);
  const json s = json::parse(Slurp(nhwc / "summary.json"));
  ASSERT_EQ(s["findings"].size(), 1u) << s["findings"].dump();
  EXPECT_EQ(s["findings"][0]["kind"], "inserted_tasks");
  EXPECT_EQ(s["findings"][0]["text"],
            "7 tasks for 3 framework nodes: the compiler inserted 2 kernel task(s) no framework node asked for");
  EXPECT_EQ(s["findings"][0]["evidence"][0], "1 x Transpose (layout NCHW to NHWC): /mean/channel_mean/to_nhwc (Transpose)");
  Result again = Run("summary " + nhwc.string());
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("[inserted_tasks] 7 tasks for 3 framework nodes"), std::string::npos) << again.out;

  const json c = json::parse(Slurp(fs::path(RunModel("const_if.onnx", "if", "--iterations 1")) / "summary.json"));
  ASSERT_EQ(c["findings"].size(), 1u) << c["findings"].dump();
  EXPECT_EQ(c["findings"][0]["kind"], "not_executed");
  std::string evidence;
  for (const json& e : c["findings"][0]["evidence"]) evidence += e.get<std::string>() + "\n";
  EXPECT_NE(evidence.find("on a branch that did not run (If /branch/If took then_branch): /branch/If/else_branch/negate/Neg\n"),
            std::string::npos) << evidence;
  EXPECT_NE(evidence.find("fused into FusedElementwise '/pre/relu/Relu'"), std::string::npos) << evidence;

  const json h = json::parse(Slurp(fs::path(RunModel("half_section.onnx", "half", "--iterations 1 --plugin " + buggy)) /
                                   "summary.json"));
  EXPECT_TRUE(h["findings"].empty()) << h["findings"].dump();
}

// Copies that dominate: big_input copies 16 MiB in for a kernel that reads
// one row. The share the finding claims is recomputed here from capture.json's
// calibrated task times (the copy time no kernel overlaps, over the span).
// many_inputs' sixteen 256-byte copies each pay a copy's fixed cost (the
// bandwidth given, so the bound the finding quotes is known here); a model
// with one small input and output has neither. Five iterations: the summary
// and capture.json's tasks are the median one's, so a thread of the run
// descheduled for milliseconds in one iteration (ctest runs two tests at
// once) does not decide the share.
TEST_F(InspectorCli, SummaryFindsCopiesThatDominateOrAreSplitTooFine) {
  const fs::path big = RunModel("big_input.onnx", "big", "--iterations 5");
  const json s = json::parse(Slurp(big / "summary.json"));
  ASSERT_EQ(s["findings"].size(), 1u) << s["findings"].dump();
  const json& f = s["findings"][0];
  EXPECT_EQ(f["kind"], "data_movement");
  EXPECT_EQ(f["evidence"][0].get<std::string>().rfind("stream copy: 2 copies of 16.02 MiB in ", 0), 0u) << f.dump();
  std::vector<std::pair<int64_t, int64_t>> copies, kernels;
  const json capture = json::parse(Slurp(big / "capture.json"));
  for (const json& t : capture["tasks"]) {
    (t["node_id"].get<int64_t>() < 0 ? copies : kernels).push_back({t["cal_ns"][0], t["cal_ns"][1]});
  }
  ASSERT_EQ(copies.size(), 2u);
  ASSERT_EQ(kernels.size(), 2u);
  int64_t first = INT64_MAX, last = 0, exposed = 0;
  for (const auto& [a, b] : copies) {  // the copies run one after the other on the copy stream
    int64_t bare = b - a;
    for (const auto& [c, d] : kernels) bare -= std::max<int64_t>(0, std::min(b, d) - std::max(a, c));
    exposed += bare;
  }
  for (const auto& v : {copies, kernels}) {
    for (const auto& [a, b] : v) first = std::min(first, a), last = std::max(last, b);
  }
  const double share = 100.0 * static_cast<double>(exposed) / static_cast<double>(last - first);
  EXPECT_GE(share, 30);
  char claimed[64];
  std::snprintf(claimed, sizeof claimed, " span (%.0f%%) with no compute beside them", share);
  EXPECT_NE(f["text"].get<std::string>().find(claimed), std::string::npos) << f["text"] << " vs " << share;

  // At 100 GB/s the 4 KiB need 0.04 us: 4x that is well under any copy's fixed cost.
  const fs::path many = dir_ / "many";
  ASSERT_EQ(Run("run " + Model("many_inputs.onnx") + " --output-dir " + many.string() +
                " --iterations 1 --peak-bw 100 --peak-flops 50").exit_code, 0);
  const json m = json::parse(Slurp(many / "summary.json"));
  ASSERT_EQ(m["findings"].size(), 1u) << m["findings"].dump();
  EXPECT_EQ(m["findings"][0]["text"].get<std::string>().rfind(
                "copies split finer than their cost warrants: 16 host-to-device copies of 256 B (median) each pay a "
                "copy's fixed cost: ", 0), 0u) << m["findings"][0].dump();
  EXPECT_EQ(m["findings"][0]["evidence"][0].get<std::string>().rfind(
                "at the 100.0 GB/s memory bandwidth their bytes need 0.0 us: inserted: H2D copy of input 'x0', ", 0), 0u)
      << m["findings"][0].dump();
  Result text = Run("summary " + many.string());
  EXPECT_NE(text.out.find("[data_movement] copies split finer than their cost warrants"), std::string::npos) << text.out;

  // Two small inputs and one output, copied once each: nothing to say of them (its fusions are a finding of their own).
  const json clean = json::parse(Slurp(fs::path(RunModel("two_branch.onnx", "clean", "--iterations 1")) / "summary.json"));
  for (const json& other : clean["findings"]) EXPECT_EQ(other["kind"], "not_executed") << other.dump();
}

// The cpu device's streams share one clock, read inside the host's brackets,
// so the calibration keeps their times and a run's waits are in order. Moved
// the way an uncalibrated device clock would move them (compute 1's
// calibrated times early in capture.json, its first task 200 us before the
// input copies end), `summary` finds the task that starts before the copy
// it waits for has ended, and says the raw clocks were in order and what
// the calibration did to each stream.
TEST_F(InspectorCli, SummaryFindsStreamsWhoseTimeBasesDisagree) {
  const fs::path dir = RunModel("two_branch.onnx", "clocks", "--iterations 1 --streams 2");
  Result before = Run("summary " + dir.string());
  EXPECT_EQ(before.out.find("[time_bases]"), std::string::npos) << before.out;
  json c = json::parse(Slurp(dir / "capture.json"));
  int64_t first_on_1 = INT64_MAX, last_on_1 = 0, first_end_on_0 = INT64_MAX, inputs_copied = 0;
  for (const json& t : c["tasks"]) {
    if (t["stream_id"] == 1) first_on_1 = std::min(first_on_1, t["cal_ns"][0].get<int64_t>());
    if (t["stream_id"] == 1) last_on_1 = std::max(last_on_1, t["cal_ns"][0].get<int64_t>());
    if (t["stream_id"] == 0) first_end_on_0 = std::min(first_end_on_0, t["cal_ns"][1].get<int64_t>());
    if (t["kernel"] == "memcpy_h2d") inputs_copied = std::max(inputs_copied, t["cal_ns"][1].get<int64_t>());
  }
  ASSERT_GT(first_on_1, inputs_copied);
  // Far enough that every task of compute 1 starts before any of compute 0
  // ends, however the run's timing fell (a loaded machine can start the join
  // long after compute 0's branch ended): then both its waits read as broken.
  const int64_t shift = std::max(first_on_1 - inputs_copied, last_on_1 - first_end_on_0) + 200000;
  int moved = 0;
  for (json& t : c["tasks"]) {
    EXPECT_EQ(t["cal_ns"], t["raw_ns"]) << "the calibration moved a cpu stream's clock: " << t.dump();
    if (t["stream_id"] != 1) continue;
    ++moved;
    for (int i : {0, 1}) t["cal_ns"][i] = t["cal_ns"][i].get<int64_t>() - shift;
    for (json& it : t["iterations_ns"]) {
      for (int i : {2, 3}) it[i] = it[i].get<int64_t>() - shift;
    }
  }
  ASSERT_GT(moved, 0);
  std::ofstream(dir / "capture.json") << c.dump();
  Result after = Run("summary " + dir.string());
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.out.find("[time_bases] the streams' time bases disagree: "), std::string::npos) << after.out;
  EXPECT_NE(after.out.find(" on compute 1 starts "), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("compute 1 waiting on copy: 1 wait(s); calibrated, the waiting task starts up to "),
            std::string::npos) << after.out;
  // The join runs on compute 1 after its last branch and waits on compute 0's branch: moved early, it starts
  // too soon; the output's copy waits on compute 1: moved early, what waits on it is later than before.
  EXPECT_NE(after.out.find("compute 1 waiting on compute 0: 1 wait(s); calibrated, the waiting task starts up to "),
            std::string::npos) << after.out;
  EXPECT_NE(after.out.find("copy waiting on compute 1: 1 wait(s); calibrated, the waiting task in order ("),
            std::string::npos) << after.out;
  EXPECT_NE(after.out.find("; on the raw clocks, in order ("), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("stream compute 1: the calibration moved its clock by -"), std::string::npos) << after.out;
}

TEST_F(InspectorCli, RunWritesGraphTraceSummary) {
  const fs::path out = RunModel("two_branch.onnx", "run", "--streams 2 --dump-passes");
  json graph = ReadGraphJson(out / "graph.json");
  EXPECT_EQ(graph["schema"], "opscope.graph/3");
  EXPECT_FALSE(graph["framework"]["nodes"].empty());
  EXPECT_FALSE(graph["compiled"]["nodes"].empty());
  json trace = json::parse(Slurp(out / "trace.json"));
  EXPECT_EQ(trace["schema"], "opscope.trace/1");
  int x_events = 0, thread_names = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++x_events;
    if (e["ph"] == "M" && e["name"] == "thread_name") ++thread_names;
  }
  EXPECT_GT(x_events, 0);
  EXPECT_EQ(thread_names, 3);  // 2 compute streams + the copy stream
  json summary = json::parse(Slurp(out / "summary.json"));
  EXPECT_EQ(summary["schema"], "opscope.summary/1");
  int64_t count = 0;
  for (const auto& r : summary["op_types"]) count += r["count"].get<int64_t>();
  EXPECT_EQ(count, x_events);
  EXPECT_TRUE(fs::exists(out / "passes" / "01_shape_inference.json"));
}

TEST_F(InspectorCli, ExportRewritesTheSameGraphAndSummary) {
  const fs::path out = RunModel("resnet_small.onnx", "run");
  const std::string summary_before = Slurp(out / "summary.json");
  const json graph_before = ReadGraphJson(out / "graph.json");
  fs::remove(out / "graph.json");
  fs::remove(out / "trace.json");
  fs::remove(out / "summary.json");
  Result r = Run("export --input-dir " + out.string() + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Slurp(out / "summary.json"), summary_before);
  EXPECT_EQ(ReadGraphJson(out / "graph.json")["compiled"], graph_before["compiled"]);
  EXPECT_EQ(json::parse(Slurp(out / "trace.json"))["schema"], "opscope.trace/1");
}

TEST_F(InspectorCli, SummaryPrintsTheTable) {
  const fs::path out = RunModel("transformer_block.onnx", "run");
  Result r = Run("summary " + out.string() + " --top 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"op type", "count", "total us", "mean us", "share", "top 3 tasks", "compute 0", "copy",
                        "critical path"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << " in\n" << r.out;
  }
  // What the run held, as summary.json has it.
  const json held = json::parse(Slurp(out / "summary.json"))["tensor_memory"];
  ASSERT_TRUE(held.is_object()) << "summary.json has no tensor_memory";
  const std::string memory = "tensor memory: held at most " +
                             opscope::FormatBytes(held["peak_bytes"].get<double>()) + " at once, " +
                             opscope::FormatBytes(held["made_bytes"].get<double>()) + " made an iteration";
  EXPECT_NE(r.out.find(memory), std::string::npos) << memory << " in\n" << r.out;
  // --top bounds the op type table too; the data movement row is one of them.
  Result all = Run("summary " + out.string() + " --top 100");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("\ndata movement "), std::string::npos) << all.out;
}

// Every task with a cost model carries the same bound in summary.json and
// trace.json, its efficiency is its lower bound over its time, and the op
// types are ranked by the time they lose against their bounds.
TEST_F(InspectorCli, RunHoldsEachTaskAgainstTheRoofline) {
  const fs::path out = RunModel("two_branch.onnx", "run");
  const json summary = json::parse(Slurp(out / "summary.json"));
  EXPECT_EQ(summary["schema"], "opscope.summary/1");
  const json& roof = summary["roofline"];
  EXPECT_EQ(roof["peaks"]["bandwidth_gbs"], 10.0);
  EXPECT_EQ(roof["peaks"]["gflops_f32"], 50.0);
  EXPECT_EQ(roof["peaks"]["gflops_f64"], 50.0);
  EXPECT_EQ(roof["peaks"]["source"], "--peak-bw/--peak-flops");
  ASSERT_FALSE(roof["tasks"].empty());
  std::map<int64_t, json> by_task;
  std::map<std::string, double> lost_by_type;
  for (const json& t : roof["tasks"]) {
    const std::string bound = t["bound"];
    ASSERT_TRUE(bound == "memory" || bound == "compute") << t.dump();
    const double lower = t["lower_bound_us"], duration = t["duration_us"], efficiency = t["efficiency"];
    EXPECT_GT(lower, 0) << t.dump();
    EXPECT_NEAR(efficiency, lower / duration, 1e-12 * std::max(1.0, efficiency)) << t.dump();
    lost_by_type[t["op_type"]] += duration - lower;
    by_task[t["task_id"]] = t;
  }
  EXPECT_EQ(roof["tasks_with_bound"], roof["tasks"].size());
  EXPECT_EQ(roof["tasks_without_bound"], 3);  // two H2D copies and one D2H: no cost model
  double previous = INFINITY;
  for (const json& l : roof["lost_by_op_type"]) {
    EXPECT_NEAR(l["lost_us"].get<double>(), lost_by_type[l["op_type"]], 1e-6) << l.dump();
    EXPECT_NEAR(l["lost_us"].get<double>(), l["measured_us"].get<double>() - l["lower_bound_us"].get<double>(), 1e-6);
    EXPECT_LE(l["lost_us"].get<double>(), previous);
    previous = l["lost_us"];
  }
  EXPECT_EQ(roof["lost_by_op_type"].size(), lost_by_type.size());
  for (const json& t : summary["top_tasks"]) EXPECT_TRUE(t.contains("bound")) << t.dump();

  const json trace = json::parse(Slurp(out / "trace.json"));
  size_t with_bound = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const json& args = e["args"];
    if (args["op_type"] == "memcpy") {
      EXPECT_FALSE(args.contains("bound")) << args.dump();
      continue;
    }
    ASSERT_TRUE(args.contains("bound")) << args.dump();
    const json& t = by_task.at(args["task_id"]);
    EXPECT_EQ(args["bound"], t["bound"]);
    EXPECT_NEAR(args["lower_bound_us"].get<double>(), t["lower_bound_us"].get<double>(), 1e-12);
    EXPECT_NEAR(args["efficiency"].get<double>(), t["efficiency"].get<double>(), 1e-12);
    // Which roof a task beat is said exactly when it beat one, in both files.
    EXPECT_EQ(args.contains("above_roof"), args["efficiency"].get<double>() > 1) << args.dump();
    EXPECT_EQ(t.contains("above_roof"), args.contains("above_roof")) << t.dump();
    // The efficiency is of the task's median over the iterations (summary.json's
    // "figures"), which the event carries beside the median iteration's dur.
    EXPECT_NEAR(args["efficiency"].get<double>() * args["median_us"].get<double>(), args["lower_bound_us"].get<double>(),
                1e-9 + 1e-9 * args["lower_bound_us"].get<double>());
    ++with_bound;
  }
  EXPECT_EQ(with_bound, by_task.size());

  // One chart, a point per task that has FLOPs (few tasks: not grouped).
  const std::string svg = Slurp(out / "roofline.svg");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << svg.substr(0, 200);
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) ++circles;
  EXPECT_GT(circles, 0u);
  EXPECT_LE(circles, by_task.size());
  EXPECT_NE(svg.find("/join/head/Gemm (Gemm)"), std::string::npos);

  // The text summary reads the roofs back from the run folder.
  Result r = Run("summary " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"roofline  10 GB/s, 50 GFLOP/s float32", "--peak-bw/--peak-flops", "time lost by op type",
                        roof["lost_by_op_type"][0]["op_type"].get_ref<const std::string&>().c_str()}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << " in\n" << r.out;
  }
}

TEST_F(InspectorCli, BadRoofsAreOneLineAndWriteNothing) {
  const fs::path out = dir_ / "never";
  const std::string run = "run " + Model("two_branch.onnx") + " --output-dir " + out.string();
  ExpectUsageError(Run(run + " --peak-bw 0 --peak-flops 50"), "--peak-bw '0': expected GB/s, a number > 0", {.tool = "inspector-cli"});
  ExpectUsageError(Run(run + " --peak-bw -3 --peak-flops 50"), "--peak-bw '-3'", {.tool = "inspector-cli"});
  ExpectUsageError(Run(run + " --peak-bw fast --peak-flops 50"), "--peak-bw 'fast'", {.tool = "inspector-cli"});
  ExpectUsageError(Run(run + " --peak-bw 10 --peak-flops nan"), "--peak-flops 'nan': expected GFLOP/s", {.tool = "inspector-cli"});
  ExpectUsageError(Run(run + " --peak-bw 10 --peak-flops 1e999"), "--peak-flops '1e999'", {.tool = "inspector-cli"});
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(InspectorCli, PathFindsBothBranchesUpstreamOfTheJoin) {
  const fs::path out = RunModel("two_branch.onnx", "run");
  Result r = Run("path " + out.string() + " --node /join/concat/Concat --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "opscope.path/1");
  const auto& up = j["framework"]["ancestors"];
  auto has = [&](const std::string& n) { return std::find(up.begin(), up.end(), n) != up.end(); };
  EXPECT_TRUE(has("/branch_a/conv1/Conv") && has("/branch_b/tanh/Tanh")) << up.dump();
  EXPECT_EQ(j["framework"]["descendants"], json::array({"/join/head/Gemm"}));
  EXPECT_FALSE(j["critical_path"]["tasks"].empty());
  Result text = Run("path " + out.string() + " --node /join/concat/Concat");
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("ancestors"), std::string::npos);
  ExpectUsageError(Run("path " + out.string() + " --node /join/concat/Conca"), "closest: /join/concat/Concat", {.tool = "inspector-cli"});
  // The op type (or the last part of the exported name) finds the node.
  ExpectUsageError(Run("path " + out.string() + " --node Concat"), "; did you mean /join/concat/Concat?", {.tool = "inspector-cli"});
}

TEST_F(InspectorCli, DiffAgainstItselfPassesAndAgainstAnotherModelFails) {
  const fs::path a = RunModel("two_branch.onnx", "a");
  const fs::path b = RunModel("resnet_small.onnx", "b");
  Result same = Run("diff " + a.string() + " " + a.string());
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  // Two models are compared only when asked to; diff.json goes where --output says.
  ExpectUsageError(Run("diff " + a.string() + " " + b.string()), "different models", {.tool = "inspector-cli"});
  const fs::path file = dir_ / "diff.json";
  Result other = Run("diff " + a.string() + " " + b.string() + " --threshold-nodes 0 --allow-different-models --output " +
                     file.string());
  EXPECT_EQ(other.exit_code, 1) << other.out << other.err;
  EXPECT_FALSE(fs::exists(b / "diff.json"));
  json d = json::parse(Slurp(file));
  EXPECT_EQ(d["schema"], "opscope.diff/1");
  EXPECT_FALSE(d["passed"].get<bool>());
  EXPECT_NE(d["nodes"]["framework"]["base"], d["nodes"]["framework"]["new"]);
  // Which two runs it compared: a later run into either folder makes it stale.
  EXPECT_EQ(d["runs"]["base"], ReadGraphJson(a / "graph.json")["run"]);
  EXPECT_EQ(d["runs"]["new"], ReadGraphJson(b / "graph.json")["run"]);
  // The tensor memory each run held, from its capture.json.
  const json held_a = json::parse(Slurp(a / "capture.json"))["tensor_memory"];
  const json held_b = json::parse(Slurp(b / "capture.json"))["tensor_memory"];
  ASSERT_TRUE(held_a.is_object() && held_b.is_object());
  EXPECT_GT(held_a["peak_bytes"].get<int64_t>(), 0);
  EXPECT_LE(held_b["peak_bytes"].get<int64_t>(), held_b["made_bytes"].get<int64_t>());
  EXPECT_EQ(d["tensor_memory"]["base"], held_a["peak_bytes"]);
  EXPECT_EQ(d["tensor_memory"]["new"], held_b["peak_bytes"]);
  EXPECT_NE(other.out.find("memory   tensors held at most " +
                           opscope::FormatBytes(held_a["peak_bytes"].get<double>()) + " -> " +
                           opscope::FormatBytes(held_b["peak_bytes"].get<double>())),
            std::string::npos)
      << other.out;
}

// Every file of a run names the run (graph/run/run_identity.h); every
// reader refuses a folder whose files name two runs, in one line naming both
// files, and a capture.json that is not valid JSON or has a wrong field, in
// one line naming the file and the field.
TEST_F(InspectorCli, EveryReaderRefusesAFolderOfTwoRuns) {
  const fs::path a = RunModel("two_branch.onnx", "a");
  const fs::path b = RunModel("const_if.onnx", "b");
  const json run_a = ReadGraphJson(a / "graph.json")["run"], run_b = ReadGraphJson(b / "graph.json")["run"];
  ASSERT_TRUE(run_a["id"].is_string() && run_b["id"].is_string());
  EXPECT_NE(run_a["id"], run_b["id"]);
  EXPECT_NE(run_a["model_fingerprint"], run_b["model_fingerprint"]);
  EXPECT_EQ(json::parse(Slurp(a / "summary.json"))["run"], run_a);
  EXPECT_EQ(json::parse(Slurp(a / "trace.json"))["otherData"]["run"], run_a);
  EXPECT_EQ(json::parse(Slurp(a / "capture.json"))["run"], run_a);
  EXPECT_NE(Slurp(a / "roofline.svg").find("data-run-id=\"" + run_a["id"].get<std::string>() + "\""), std::string::npos);

  // What a rerun killed after its graph.json, trace.json and summary.json
  // would leave if it did not remove the old capture.json first. Each reader
  // gets a fresh copy: one that wrongly accepted it could rewrite it.
  const fs::path mixed = dir_ / "mixed";
  const auto make_mixed = [&] {
    fs::remove_all(mixed);
    fs::copy(b, mixed);
    for (const char* f : {"graph.json", "trace.json", "summary.json", "roofline.svg"}) {
      fs::copy_file(a / f, mixed / f, fs::copy_options::overwrite_existing);
    }
  };
  const std::string two_runs = "files of two runs: graph.json is of run " + run_a["id"].get<std::string>() +
                               ", capture.json of run " + run_b["id"].get<std::string>();
  for (const std::string& reader :
       {"summary " + mixed.string(), "path " + mixed.string() + " --node /join/concat/Concat",
        "export --input-dir " + mixed.string(), "export --input-dir " + mixed.string() + " --format html",
        "diff " + a.string() + " " + mixed.string(), "diff " + mixed.string() + " " + a.string()}) {
    SCOPED_TRACE(reader);
    make_mixed();
    ExpectUsageError(Run(reader), two_runs, {.tool = "inspector-cli"});
    EXPECT_FALSE(fs::exists(mixed / "report.html"));
    EXPECT_FALSE(fs::exists(mixed / "diff.json"));
  }
  EXPECT_FALSE(fs::exists(a / "diff.json"));
  // serve checks before it listens; a timeout keeps a wrong acceptance from hanging the test.
  make_mixed();
  ExpectUsageError(::opscope::testing::Shell("timeout 20 " + std::string(OPSCOPE_BINARY_DIR) +
                                               "/bin/inspector-cli serve " + mixed.string() + " --port 0"),
                     two_runs, {.tool = "inspector-cli"});

  // A rerun replaces the whole folder: the other model's files, its pass dumps too.
  const fs::path again = RunModel("two_branch.onnx", "again", "--dump-passes");
  ASSERT_FALSE(fs::is_empty(again / "passes"));
  RunModel("const_if.onnx", "again");
  EXPECT_FALSE(fs::exists(again / "passes"));
  const Result summary = Run("summary " + again.string());
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_EQ(summary.out.rfind("model " + Model("const_if.onnx") + " ", 0), 0u) << summary.out;

  // capture.json malformed, or with a field missing or of the wrong kind.
  const std::string capture = Slurp(b / "capture.json");
  const auto with_capture = [&](const std::string& text) {
    std::ofstream(b / "capture.json", std::ios::trunc) << text;
    return Run("summary " + b.string());
  };
  json wrong = json::parse(capture);
  wrong["tasks"][1]["kernel"] = 7;
  ExpectUsageError(with_capture(wrong.dump()), "capture.json: field tasks[1].kernel: expected a string, found an integer", {.tool = "inspector-cli"});
  wrong = json::parse(capture);
  wrong.erase("streams");
  ExpectUsageError(with_capture(wrong.dump()), "capture.json: field streams: missing (expected an integer)", {.tool = "inspector-cli"});
  const Result truncated = with_capture(capture.substr(0, capture.size() / 2));
  ExpectUsageError(truncated, "capture.json: not valid JSON (line 1, column ", {.tool = "inspector-cli"});
  EXPECT_EQ(truncated.err.find("json.exception"), std::string::npos) << truncated.err;
  // Written before runs had an identity: refused, with what to do.
  wrong = json::parse(capture);
  wrong.erase("run");
  ExpectUsageError(with_capture(wrong.dump()), "capture.json: no run identity (field run)", {.tool = "inspector-cli"});
}

TEST_F(InspectorCli, BadInputIsOneLineAndWritesNothing) {
  const fs::path out = dir_ / "fresh";
  const fs::path truncated = dir_ / "truncated.onnx";
  {
    std::string bytes = Slurp(Model("two_branch.onnx"));
    std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 3);
  }
  ExpectUsageError(Run("run " + (dir_ / "missing.onnx").string() + " --output-dir " + out.string()), "missing.onnx", {.tool = "inspector-cli"});
  ExpectUsageError(Run("run " + truncated.string() + " --output-dir " + out.string()), "truncated.onnx", {.tool = "inspector-cli"});
  ExpectUsageError(Run("run " + Model("two_branch.onnx") + " --output-dir " + out.string() + " --streams 0"),
                     "--streams", {.tool = "inspector-cli"});
  EXPECT_FALSE(fs::exists(out));
  ExpectUsageError(Run("summary " + out.string()), out.string(), {.tool = "inspector-cli"});
  ExpectUsageError(Run("export --input-dir " + dir_.string()), "capture.json", {.tool = "inspector-cli"});
  ExpectUsageError(Run("frobnicate"), "unknown command", {.tool = "inspector-cli"});
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(InspectorCli, UnsupportedOpIsRefusedNamingTheNode) {
  const fs::path out = dir_ / "unsupported";
  Result r = Run("run " + Model("unsupported_op.onnx") + " --output-dir " + out.string());
  ExpectUsageError(r, "node '/det/Det' (Det) is not executable", {.tool = "inspector-cli"});
  EXPECT_NE(r.err.find("unsupported_op.onnx"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// The float32 initializers of a model, by name, read with ONNX's own protobuf.
std::map<std::string, std::vector<float>> Initializers(const std::string& model_path, onnx::ModelProto& proto) {
  std::ifstream f(model_path, std::ios::binary);
  EXPECT_TRUE(proto.ParseFromIstream(&f)) << model_path;
  std::map<std::string, std::vector<float>> out;
  for (const onnx::TensorProto& t : proto.graph().initializer()) {
    std::vector<float>& v = out[t.name()];
    if (t.has_raw_data()) {
      v.resize(t.raw_data().size() / sizeof(float));
      std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
    } else {
      v.assign(t.float_data().begin(), t.float_data().end());
    }
  }
  return out;
}

// The model's math (MatMul, Add, my_norm over the last axis, Relu) in doubles,
// from the weights in the file, for one row-major [rows, k] input.
std::vector<double> CustomOpModelInDoubles(const std::string& model_path, const std::vector<float>& x, int64_t rows) {
  onnx::ModelProto proto;
  const std::map<std::string, std::vector<float>> init = Initializers(model_path, proto);
  std::vector<float> w, b;
  double eps = -1;
  for (const onnx::NodeProto& n : proto.graph().node()) {
    if (n.op_type() == "MatMul") w = init.at(n.input(1));
    if (n.op_type() == "Add") b = init.at(n.input(1));
    if (n.op_type() == "my_norm") {
      for (const onnx::AttributeProto& a : n.attribute()) {
        if (a.name() == "eps") eps = a.f();
      }
    }
  }
  const int64_t k = static_cast<int64_t>(x.size()) / rows, n = static_cast<int64_t>(b.size());
  EXPECT_EQ(static_cast<int64_t>(w.size()), k * n);
  EXPECT_GT(eps, 0);
  std::vector<double> y(rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    double sum_sq = 0;
    for (int64_t j = 0; j < n; ++j) {
      double acc = b[j];
      for (int64_t i = 0; i < k; ++i) acc += static_cast<double>(x[r * k + i]) * w[i * n + j];
      y[r * n + j] = acc;
      sum_sq += acc * acc;
    }
    const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps);
    for (int64_t j = 0; j < n; ++j) y[r * n + j] = std::max(0.0, y[r * n + j] * inv);
  }
  return y;
}

TEST_F(InspectorCli, CustomDomainNodeRunsWithThePluginThatProvidesIt) {
  const std::string plugin = std::string(OPSCOPE_BINARY_DIR) + "/lib/libmy_ops.so";
  ASSERT_TRUE(fs::exists(plugin)) << plugin << ": build the my_ops target";
  constexpr int64_t kRows = 4, kCols = 16;  // the model's input x
  auto x = opscope::Tensor::Empty(opscope::DType::kF32, opscope::Shape({kRows, kCols}));
  ASSERT_TRUE(x.ok());
  std::vector<float> xs(kRows * kCols);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(2.0 * std::sin(0.37 * static_cast<double>(i) + 1));
  std::memcpy(x->data<float>(), xs.data(), xs.size() * sizeof(float));
  const fs::path x_file = dir_ / "x.npy", saved = dir_ / "outputs";
  ASSERT_TRUE(opscope::WriteNpy(x_file.string(), *x).ok());

  const fs::path out = RunModel("custom_op.onnx", "run",
                                "--plugin " + plugin + " --save-outputs " + saved.string() + " --inputs " +
                                    x_file.string());
  const json graph = ReadGraphJson(out / "graph.json");
  bool framework_executed = false;
  for (const json& n : graph["framework"]["nodes"]) {
    if (n["op_type"] == "my_norm") {
      EXPECT_EQ(n["domain"], "com.opscope.examples");
      framework_executed = n["executed"].get<bool>();
    }
  }
  EXPECT_TRUE(framework_executed) << graph["framework"].dump();
  int my_norm_tasks = 0;
  const json trace = json::parse(Slurp(out / "trace.json"));
  for (const json& e : trace["traceEvents"]) {
    my_norm_tasks += e["ph"] == "X" && e["args"].value("op_type", "") == "my_norm";
  }
  EXPECT_EQ(my_norm_tasks, 1);

  auto y = opscope::ReadNpy((saved / "y.npy").string());
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->numel(), kRows * kCols);
  const std::vector<double> want = CustomOpModelInDoubles(Model("custom_op.onnx"), xs, kRows);
  int positive = 0;
  for (int64_t i = 0; i < y->numel(); ++i) {
    EXPECT_NEAR(y->FlatGetAsDouble(i), want[i], 1e-5) << "y[" << i << "]";
    positive += want[i] > 0;
  }
  EXPECT_GT(positive, 0);  // Relu left something through: the comparison is not all zeros

  // A process of its own: this one has loaded the plugin, and a loaded op stays registered.
  const fs::path refused = dir_ / "no_plugin";
  ExpectUsageError(Spawn("run " + Model("custom_op.onnx") + " --output-dir " + refused.string()),
                     "node '/norm/my_norm' (my_norm) is not executable", {.tool = "inspector-cli"});
  EXPECT_FALSE(fs::exists(refused));
}

}  // namespace
