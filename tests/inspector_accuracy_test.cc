// `inspector-cli accuracy`: the framework graph on the ops' double-precision
// references against the compiled graph as it runs, node by node. The
// example models are correct and get no finding; half_section.onnx puts
// examples/buggy_ops' half_rms (it squares in float16) in a float16 section,
// and half_rms alone is named, not the nodes after it that inherit its Inf;
// its replay runs through ops-debug and fails there too, under the same op
// instance key. In process, through the tools' entry points.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/apps.h"
#include "inspector_tool_test.h"
#include "opscope/npy.h"
#include "report/report_dir.h"
#include "tool_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Result = ::opscope::testing::ToolResult;
using namespace ::opscope::testing;  // tool_test_util.h
using StatusOrData = ::opscope::StatusOr<::opscope::ReportData>;

class InspectorAccuracy : public ::opscope::testing::InspectorToolTest {
 protected:
  static Result Inspector(const std::string& args) {
    return ::opscope::testing::InProcessLine(::opscope::cli::InspectorMain, "inspector-cli", args);
  }
  static std::string Plugin(const std::string& name) {
    return std::string(OPSCOPE_BINARY_DIR) + "/lib/lib" + name + ".so";
  }
};

TEST_F(InspectorAccuracy, CorrectModelsGetNoFinding) {
  for (const std::string model : {"two_branch", "resnet_small", "transformer_block", "const_if", "custom_op"}) {
    const fs::path out = dir_ / model;
    Result r = Inspector("accuracy " + Model(model + ".onnx") + " --plugin " + Plugin("my_ops") + " --output-dir " +
                         out.string());
    EXPECT_EQ(r.exit_code, 0) << model << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("verdict  no compiled node diverges"), std::string::npos) << r.out;
    const json j = json::parse(Slurp(out / "accuracy.json"));
    EXPECT_EQ(j["schema"], "opscope.accuracy/1");
    EXPECT_EQ(j["clean"], true) << model;
    EXPECT_TRUE(j["first_divergent"].is_null()) << model;
    // Every compiled node but the constants is judged against a golden.
    EXPECT_EQ(j["nodes"].size(), j["compiled_nodes"].get<size_t>()) << model << " " << j["notes"].dump();
    for (const json& n : j["nodes"]) EXPECT_EQ(n["local"]["compared"], true) << model << " " << n["name"];
    // Inside the fused kernels: each stage they expose is judged too, and
    // within tolerance (a stage cut at the wrong step would not be).
    std::map<std::string, std::vector<std::string>> stages;
    for (const json& n : j["nodes"]) {
      for (const json& st : n["stages"]) {
        EXPECT_EQ(st["local"]["compared"], true) << model << " " << n["name"];
        EXPECT_EQ(st["local"]["mismatched"], 0) << model << " " << n["name"] << " " << st.dump();
        EXPECT_EQ(st["diverges"], false);
        stages[n["name"]].push_back(st["framework_node"]);
      }
    }
    if (std::string(model) == "resnet_small") {
      // Five FusedConv: three Conv+BN+Relu (their stage before the Relu),
      // two Conv+BN+Add(residual)+Relu (theirs after the Add, before the Relu).
      EXPECT_EQ(stages.size(), 5u);
      EXPECT_EQ(stages["/stem/conv/Conv"], std::vector<std::string>{"/stem/bn/BatchNormalization"});
      EXPECT_EQ(stages["/layer1/block2/conv/Conv"], std::vector<std::string>{"/layer1/add/Add"});
    }
    if (std::string(model) == "two_branch") {
      EXPECT_EQ(stages["/branch_b/fc1/MatMul"], std::vector<std::string>{"/branch_b/fc1_bias/Add"});  // MatMul+Add, then Tanh
    }
    if (std::string(model) == "transformer_block") {
      EXPECT_EQ(stages["/ffn/up/matmul/MatMul"], std::vector<std::string>{"/ffn/up/bias/Add"});  // before its Gelu
    }
  }
}

// A model nobody here wrote the graph of: PyTorch's own export (conv stem,
// residual blocks, an attention head, LayerNorm), made at test time.
TEST_F(InspectorAccuracy, APyTorchExportGetsNoFinding) {
  const fs::path model = dir_ / "torch_net.onnx";
  Result made = ::opscope::testing::Shell("/usr/bin/python3 " + std::string(OPSCOPE_SOURCE_DIR) +
                                          "/tests/web/models/make_torch_model.py " + model.string());
  ASSERT_EQ(made.exit_code, 0) << "python3-torch installed? setup.sh installs it\n" << made.err;
  Result r = Inspector("accuracy " + model.string() + " --output-dir " + (dir_ / "acc").string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const json j = json::parse(Slurp(dir_ / "acc" / "accuracy.json"));
  EXPECT_EQ(j["clean"], true);
  EXPECT_GT(j["nodes"].size(), 30u);
  EXPECT_EQ(j["nodes"].size(), j["compiled_nodes"].get<size_t>()) << j["notes"].dump();
}

TEST_F(InspectorAccuracy, TheKernelThatOverflowsIsNamedAloneAndItsReplayFailsInOpsDebug) {
  const fs::path out = dir_ / "half";
  Result r = Inspector("accuracy " + Model("half_section.onnx") + " --plugin " + Plugin("buggy_ops") + " --output-dir " +
                       out.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict  1 compiled node(s) diverge; the first along the data flow is /rms/half_rms (half_rms)"),
            std::string::npos)
      << r.out;
  const json j = json::parse(Slurp(out / "accuracy.json"));
  EXPECT_EQ(j["clean"], false);
  EXPECT_EQ(j["first_divergent"], "/rms/half_rms");
  const json* rms = nullptr;
  for (const json& n : j["nodes"]) {
    if (n["name"] == "/rms/half_rms") rms = &n;
    // After it, the error is inherited, not the node's own.
    if (n["name"] == "/to_float/Cast" || n["name"] == "/act/Relu") {
      EXPECT_EQ(n["diverges"], false) << n.dump();
      EXPECT_GT(n["inherited"]["mismatched"].get<int>(), 0) << n.dump();
      EXPECT_EQ(n["local"]["mismatched"], 0) << n.dump();
    }
  }
  ASSERT_NE(rms, nullptr);
  EXPECT_EQ((*rms)["local"]["mismatched"], 4);
  EXPECT_EQ((*rms)["inherited"]["mismatched"], 0);  // its input is right: the kernel is wrong
  EXPECT_EQ((*rms)["local"]["compiled_dtype"], "float16");
  ASSERT_EQ((*rms)["replay_files"].size(), 1u);
  const std::string input = (*rms)["replay_files"][0];
  auto x = opscope::ReadNpy(input);
  ASSERT_TRUE(x.ok()) << x.status().message();
  EXPECT_EQ(x->Describe(), "float16[4,64]");

  // The replay line, run as printed, with a report to hold the instance key.
  const std::string replay = (*rms)["replay"];
  ASSERT_EQ(replay.rfind("ops-debug run ", 0), 0u) << replay;
  const fs::path report = dir_ / "replay.json";
  Result again = ::opscope::testing::InProcessLine(::opscope::cli::OpsDebugMain, "ops-debug",
                                                   replay.substr(10) + " --report " + report.string());
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
  EXPECT_NE(again.out.find("Inf in actual only: 4 element(s)"), std::string::npos) << again.out;
  EXPECT_EQ(json::parse(Slurp(report))["instance"]["key"], (*rms)["instance_key"]);
}

// A compiler decision behind the numbers: channel_mean declares it wants
// NHWC (OpDef::PrefersLayout), the layout pass wraps it in transdata nodes,
// and its NHWC kernel sums in float16. The node is named with the layout
// decision (its NHWC values judged against the framework's golden, permuted),
// the transdata nodes are not blamed, and without the pass the model is clean.
TEST_F(InspectorAccuracy, ALayoutDecisionIsNamedAndTheModelIsCleanWithoutThatPass) {
  const std::string run = "accuracy " + Model("nhwc_mean.onnx") + " --plugin " + Plugin("buggy_ops") + " --output-dir ";
  Result r = Inspector(run + (dir_ / "nhwc").string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const json j = json::parse(Slurp(dir_ / "nhwc" / "accuracy.json"));
  EXPECT_EQ(j["compiled_nodes"], 5);  // Mul, to_nhwc, channel_mean, to_nchw, Sigmoid
  EXPECT_EQ(j["first_divergent"], "/mean/channel_mean");
  int diverging = 0;
  for (const json& n : j["nodes"]) {
    diverging += n["diverges"].get<bool>();
    if (n["name"] != "/mean/channel_mean") continue;
    EXPECT_EQ(n["local"]["tensor"], "/mean/channel_mean_output_0_nhwc");
    EXPECT_GT(n["local"]["mismatched"].get<int>(), 0);
    EXPECT_EQ(n["inherited"]["mismatched"], 0);
    ASSERT_FALSE(n["decisions"].empty());
    EXPECT_NE(n["decisions"][0].get<std::string>().find("layout: runs on NHWC data, given it by the layout pass"),
              std::string::npos)
        << n["decisions"];
    EXPECT_NE(n["replay"].get<std::string>().find("--attrs layout=NHWC"), std::string::npos) << n["replay"];
    // Its worst element against float32's |a-e| <= 1e-5 + 1e-5*|e|, bounded
    // from the compare engine's own figures: at most the largest error over
    // the floor alone, at least each decade's worst error over the bound at
    // the top of that decade of |golden|.
    const double ratio = n["local"]["tolerance_ratio"];
    EXPECT_LE(ratio, n["local"]["max_abs_err"].get<double>() / 1e-5);
    for (const json& bin : n["local"]["histogram"]) {
      const std::string label = bin["abs_golden"];  // "[1e-2,1e-1)"
      const double top = std::stod(label.substr(label.find(',') + 1));
      EXPECT_GE(ratio, bin["max_abs_err"].get<double>() / (1e-5 + 1e-5 * top)) << label;
    }
    EXPECT_GT(ratio, 1);
  }
  EXPECT_EQ(diverging, 1);

  Result off = Inspector(run + (dir_ / "nchw").string() + " --disable-pass layout");
  EXPECT_EQ(off.exit_code, 0) << off.out << off.err;
  const json k = json::parse(Slurp(dir_ / "nchw" / "accuracy.json"));
  EXPECT_EQ(k["compiled_nodes"], 3);
  EXPECT_EQ(k["clean"], true);
  EXPECT_EQ(k["disabled_passes"], json::array({"layout"}));
}

// Written beside a run of the same model, accuracy.json carries that run's
// id, and `summary` lists its top nodes; after another run it says the file
// is stale; a file that is no accuracy.json is one line, the summary whole.
TEST_F(InspectorAccuracy, SummaryListsTheTopNodesOfAnAccuracyRunBesideIt) {
  const std::string dir = (dir_ / "run").string(), plugin = " --plugin " + Plugin("buggy_ops");
  const std::string model = Model("half_section.onnx");
  ASSERT_EQ(Inspector("run " + model + plugin + " --iterations 1 --peak-bw 10 --peak-flops 50 --output-dir " + dir).exit_code, 0);
  EXPECT_EQ(Inspector("accuracy " + model + plugin + " --output-dir " + dir).exit_code, 1);
  const json run = json::parse(Slurp(dir_ / "run" / "capture.json"))["run"];
  EXPECT_EQ(json::parse(Slurp(dir_ / "run" / "accuracy.json"))["run"]["id"], run["id"]);
  Result s = Inspector("summary " + dir);
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("accuracy  (accuracy.json, nodes by local error) the first diverging node along the data flow: "
                       "/rms/half_rms\n  DIVERGES /rms/half_rms (half_rms)  local 4 / 4 out of tolerance"),
            std::string::npos)
      << s.out;

  ASSERT_EQ(Inspector("run " + model + plugin + " --iterations 1 --peak-bw 10 --peak-flops 50 --output-dir " + dir).exit_code, 0);
  Result stale = Inspector("summary " + dir);
  EXPECT_EQ(stale.exit_code, 0) << stale.err;
  EXPECT_NE(stale.out.find("accuracy.json is of another run ("), std::string::npos) << stale.out;
  EXPECT_EQ(stale.out.find("DIVERGES"), std::string::npos) << stale.out;

  std::ofstream(dir_ / "run" / "accuracy.json") << "{\"schema\": 3";
  Result bad = Inspector("summary " + dir);
  EXPECT_EQ(bad.exit_code, 0) << bad.err;
  EXPECT_NE(bad.out.find("accuracy  " + dir + "/accuracy.json: not valid JSON"), std::string::npos) << bad.out;
}

// Each node's own error as a multiple of its tolerance colours the page:
// above 1 exactly for the nodes that diverge (an Inf on one side: null), and
// its histogram counts every element. Written into a run's folder that has a
// page, the page is made again with accuracy.json in it; once the folder
// holds another run, the page carries the refusal, not the stale numbers.
TEST_F(InspectorAccuracy, ThePageOfTheRunCarriesEachNodesOwnErrorAndRefusesAnotherRuns) {
  const std::string dir = (dir_ / "page").string(), plugin = " --plugin " + Plugin("buggy_ops");
  const std::string model = Model("half_section.onnx");
  const std::string run = "run " + model + plugin + " --iterations 1 --peak-bw 10 --peak-flops 50 --output-dir " + dir;
  ASSERT_EQ(Inspector(run).exit_code, 0);
  ASSERT_EQ(Inspector("export --input-dir " + dir + " --format html").exit_code, 0);
  const std::string before = Slurp(dir_ / "page" / "report.html");
  Result r = Inspector("accuracy " + model + plugin + " --output-dir " + dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("wrote    " + dir + "/report.html"), std::string::npos) << r.out;
  EXPECT_EQ(before.find("opscope-data-accuracy.json"), std::string::npos);
  EXPECT_NE(Slurp(dir_ / "page" / "report.html").find("opscope-data-accuracy.json"), std::string::npos);

  const json j = json::parse(Slurp(dir_ / "page" / "accuracy.json"));
  int judged = 0;
  for (const json& n : j["nodes"]) {
    const json& local = n["local"];
    if (!local["compared"].get<bool>()) continue;
    ++judged;
    ASSERT_TRUE(local.contains("tolerance_ratio")) << n.dump();  // the mixed rule has a scale
    const json& ratio = local["tolerance_ratio"];
    EXPECT_EQ(n["diverges"].get<bool>(), ratio.is_null() || ratio.get<double>() > 1) << n.dump();
    if (n["name"] == "/scale/Mul") {
      EXPECT_GT(ratio.get<double>(), 0) << n.dump();  // float32 rounding, well inside
    }
    int64_t elements = 0, out = 0;
    for (const json& bin : local["histogram"]) {
      elements += bin["count"].get<int64_t>();
      out += bin["mismatched"].get<int64_t>();
    }
    EXPECT_EQ(elements, local["total"].get<int64_t>()) << n.dump();
    EXPECT_EQ(out, local["mismatched"].get<int64_t>()) << n.dump();
  }
  EXPECT_EQ(judged, 5);

  StatusOrData data = ::opscope::ReadReportDir(dir);
  ASSERT_TRUE(data.ok()) << data.status().message();
  const json shown = json::parse(data->accuracy);
  EXPECT_EQ(shown["first_divergent"], "/rms/half_rms");
  EXPECT_FALSE(shown["nodes"][0].contains("replay_files"));  // the page has no use for them

  ASSERT_EQ(Inspector(run).exit_code, 0);
  StatusOrData stale = ::opscope::ReadReportDir(dir);
  ASSERT_TRUE(stale.ok()) << stale.status().message();
  const json refused = json::parse(stale->accuracy);
  EXPECT_FALSE(refused.contains("nodes"));
  EXPECT_NE(refused["error"].get<std::string>().find("accuracy.json: of another run ("), std::string::npos) << refused;
}

// --keep-bytes: past the budget both runs' intermediates go to files under
// the output folder and are mapped back; every number judged is the same as
// with all of them in memory, and the files are gone afterwards.
TEST_F(InspectorAccuracy, TensorsSpilledPastKeepBytesChangeNoNumber) {
  const std::string model = Model("resnet_small.onnx");
  ASSERT_EQ(Inspector("accuracy " + model + " --output-dir " + (dir_ / "memory").string()).exit_code, 0);
  Result r = Inspector("accuracy " + model + " --keep-bytes 16K --output-dir " + (dir_ / "spilled").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json in_memory = json::parse(Slurp(dir_ / "memory" / "accuracy.json"));
  json spilled = json::parse(Slurp(dir_ / "spilled" / "accuracy.json"));
  EXPECT_EQ(in_memory["memory"]["spilled_tensors"], 0);
  EXPECT_GT(spilled["memory"]["spilled_tensors"].get<int>(), 0);
  EXPECT_LE(spilled["memory"]["kept_bytes"].get<int64_t>(), 16 << 10);
  EXPECT_EQ(spilled["memory"]["kept_bytes"].get<int64_t>() + spilled["memory"]["spilled_bytes"].get<int64_t>(),
            in_memory["memory"]["kept_bytes"].get<int64_t>());  // the same tensors, held two ways
  EXPECT_NE(r.out.find(") spilled to files past --keep-bytes and mapped back"), std::string::npos) << r.out;
  for (json* j : {&in_memory, &spilled}) {
    for (const char* key : {"time_ms", "memory", "repro"}) j->erase(key);
  }
  EXPECT_EQ(in_memory, spilled);
  EXPECT_FALSE(fs::exists(dir_ / "spilled" / "spill"));
  for (const std::string bad : {"12X", "-5", "M"}) {
    Result b = Inspector("accuracy " + model + " --keep-bytes " + bad + " --output-dir " + (dir_ / "bad").string());
    EXPECT_EQ(b.exit_code, 2) << bad;
    EXPECT_NE(b.err.find("--keep-bytes '" + bad + "': expected a size in bytes"), std::string::npos) << b.err;
  }
}

TEST_F(InspectorAccuracy, DisabledPassesCompileWithoutThemAndBadInputIsOneLine) {
  const fs::path out = dir_ / "unfused";
  Result r = Inspector("accuracy " + Model("const_if.onnx") + " --disable-pass elementwise_chain_fusion --output-dir " +
                       out.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("passes disabled: elementwise_chain_fusion"), std::string::npos) << r.out;
  const json j = json::parse(Slurp(out / "accuracy.json"));
  EXPECT_GT(j["compiled_nodes"].get<int>(), 1);  // the chain stays four nodes
  for (const json& n : j["nodes"]) EXPECT_EQ(n["mapping"], "one-to-one") << n.dump();

  fs::create_directories(dir_ / "refused");
  const std::string file = (dir_ / "a_file").string();
  ASSERT_TRUE(opscope::WriteNpy(file, *opscope::Tensor::Zeros(opscope::DType::kF32, opscope::Shape({2})))
                  .ok());
  const std::pair<std::string, std::string> cases[] = {
      {"--disable-pass nope", "--disable-pass: unknown pass 'nope'; the passes are shape_inference"},
      {"--expected " + file + "," + file, "--expected: 2 file(s) for the model's 1 output(s)"},
      {"--expected " + file, "--expected " + file + ": holds float32[2] but output 'y' is float32[2,3]"},
      {"--mode foo", "--mode: unknown rule 'foo'"},
      {"--replay -1", "--replay -1: expected >= 0"},
  };
  for (const auto& [flags, message] : cases) {
    const fs::path dir = dir_ / "refused" / "out";
    Result bad = Inspector("accuracy " + Model("const_if.onnx") + " --output-dir " + dir.string() + " " + flags);
    EXPECT_EQ(bad.exit_code, 2) << flags << "\n" << bad.out;
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(dir / "accuracy.json")) << flags;
  }
  Result into_file = Inspector("accuracy " + Model("const_if.onnx") + " --output-dir " + file);
  EXPECT_EQ(into_file.exit_code, 2) << into_file.out;
  EXPECT_NE(into_file.err.find("--output-dir"), std::string::npos) << into_file.err;
}

}  // namespace
