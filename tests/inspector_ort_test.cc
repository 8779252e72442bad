// inspector-cli import-ort on real onnxruntime runs: the example models run
// under onnxruntime's CPU build (tools/ort/run_ort.js, onnxruntime-node as
// ./setup.sh installs it), their optimized models and profiles read back as
// run folders. What onnxruntime did is onnxruntime's, not ours: the
// expectations below are what its optimizer is known to do to these models
// (NCHWc convolutions with BatchNorm, the residual Add and Relu folded in,
// FusedGemm, LayerNormalization and Gelu fusion, Reshapes around a Gemm),
// and every time is checked against the profile's own events.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "inspector_tool_test.h"

namespace opscope::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// One onnxruntime run per example model for the whole suite: 4 runs each
// (the first left as warm-up by import-ort).
class ImportOrt : public InspectorToolTest {
 protected:
  static void SetUpTestSuite() {
    suite_dir_ = fs::temp_directory_path() / ("ImportOrt_" + std::to_string(::getpid()));
    fs::remove_all(suite_dir_);
    for (const char* m : {"resnet_small", "two_branch", "transformer_block"}) {
      const std::string line = "node " + std::string(OPSCOPE_SOURCE_DIR) + "/tools/ort/run_ort.js " +
                               std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/" + m + ".onnx " +
                               (suite_dir_ / m).string() + " --runs 4 --seed 1";
      ToolResult r = Shell(line);
      ort_errors_[m] = r.exit_code == 0 ? "" : line + " exited " + std::to_string(r.exit_code) + ": " + r.err;
    }
  }
  static void TearDownTestSuite() { fs::remove_all(suite_dir_); }

  // The folder run_ort.js wrote for `model` (optimized.onnx, profile.json); fails the test when it could not run.
  static fs::path Ort(const std::string& model) {
    EXPECT_EQ(ort_errors_[model], "") << "onnxruntime-node is installed by ./setup.sh into tools/ort/node_modules";
    return suite_dir_ / model;
  }

  // import-ort of `model` into dir_/<out>; the result's folder.
  fs::path Import(const std::string& model, const std::string& out = "run") {
    const fs::path o = Ort(model);
    ToolResult r = Run("import-ort --model " + Model(model + ".onnx") + " --optimized " + (o / "optimized.onnx").string() +
                       " --profile " + (o / "profile.json").string() + " --output-dir " + (dir_ / out).string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    last_out_ = r.out;
    return dir_ / out;
  }

  static json Read(const fs::path& p) { return json::parse(Slurp(p)); }

  // Compiled node name -> the names of the framework nodes it stands for.
  static std::map<std::string, std::vector<std::string>> FusedFrom(const json& graph) {
    std::map<int64_t, std::string> names;
    for (const json& f : graph["framework"]["nodes"]) names[f["node_id"]] = f["name"];
    std::map<std::string, std::vector<std::string>> out;
    for (const json& c : graph["compiled"]["nodes"]) {
      std::vector<std::string>& v = out[c["name"]];
      for (const json& id : c["fused_from"]) v.push_back(names.at(id.get<int64_t>()));
    }
    return out;
  }
  static const json& Compiled(const json& graph, const std::string& name) {
    for (const json& c : graph["compiled"]["nodes"]) {
      if (c["name"] == name) return c;
    }
    ADD_FAILURE() << "no compiled node " << name;
    static const json none;
    return none;
  }

  static inline fs::path suite_dir_;
  static inline std::map<std::string, std::string> ort_errors_;
  std::string last_out_;
};

using Names = std::vector<std::string>;

TEST_F(ImportOrt, ResnetNchwcConvsStandForTheirConvBatchNormAddAndRelu) {
  const fs::path run = Import("resnet_small");
  EXPECT_NE(last_out_.find("engine   onnxruntime (CPUExecutionProvider): 4 run(s) in the profile, 1 warm-up, 3 timed"),
            std::string::npos)
      << last_out_;
  const json g = Read(run / "graph.json");
  const auto from = FusedFrom(g);
  EXPECT_EQ(from.at("/stem/relu/Relu_output_0_nchwc"),
            (Names{"/stem/conv/Conv", "/stem/bn/BatchNormalization", "/stem/relu/Relu"}));
  // Named after the BatchNorm's output, it computes through the residual Add (its Sum input) and the Relu.
  EXPECT_EQ(from.at("/layer1/block2/bn/BatchNormalization_output_0_nchwc"),
            (Names{"/layer1/block2/conv/Conv", "/layer1/block2/bn/BatchNormalization", "/layer1/add/Add",
                   "/layer1/relu/Relu"}));
  const json& sum = Compiled(g, "/layer2/block2/bn/BatchNormalization_output_0_nchwc");
  EXPECT_EQ(sum["kind"], "fused");
  EXPECT_NE(sum["mapped_by"].get<std::string>().find("of its Sum input, then its activation Relu '/layer2/relu/Relu'"),
            std::string::npos)
      << sum["mapped_by"];
  EXPECT_EQ(from.at("/fc/Gemm"), (Names{"/fc/Gemm"}));
  for (const json& c : g["compiled"]["nodes"]) {
    if (c["op_type"] != "ReorderOutput") continue;
    EXPECT_EQ(c["kind"], "transdata");
    EXPECT_EQ(c["layout"], (json{{"from", "NCHWc"}, {"to", "NCHW"}}));
    EXPECT_TRUE(c["fused_from"].empty());
    EXPECT_EQ(c["mapped_by"], "inserted by onnxruntime: a layout conversion");
  }
  for (const json& f : g["framework"]["nodes"]) {
    EXPECT_TRUE(f["executed"].get<bool>()) << f["name"];
    EXPECT_TRUE(f.contains("compiled_node_id")) << f["name"];
  }
  // The blocked tensors onnxruntime wrote no shape for take the kernel's.
  for (const json& v : g["compiled"]["values"]) {
    if (v["name"] == "reorder_token_4") EXPECT_EQ(v["shape"], (json{1, 8, 16, 16}));
  }
}

// Every compiled node's time is the median over the timed runs of its
// kernel event's duration, as the profile holds it.
TEST_F(ImportOrt, TimesAreTheProfilesKernelEvents) {
  const fs::path run = Import("resnet_small");
  const json profile = Read(Ort("resnet_small") / "profile.json");
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (const json& e : profile) {
    if (e["cat"] == "Session" && e["name"] == "model_run") runs.push_back({e["ts"], e["ts"].get<int64_t>() + e["dur"].get<int64_t>()});
  }
  std::sort(runs.begin(), runs.end());
  ASSERT_EQ(runs.size(), 4u);
  std::map<std::string, std::vector<double>> durs;  // node -> duration per timed run
  size_t kernels_per_run = 0;
  for (const json& e : profile) {
    const std::string name = e["name"];
    const std::string suffix = "_kernel_time";
    if (e["cat"] != "Node" || name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) continue;
    const int64_t ts = e["ts"];
    if (ts < runs[1].first) continue;  // the warm-up run
    if (ts <= runs[1].second) ++kernels_per_run;
    durs[name.substr(0, name.size() - suffix.size())].push_back(e["dur"].get<double>());
  }
  const json g = Read(run / "graph.json");
  const json capture = Read(run / "capture.json");
  EXPECT_EQ(capture["tasks"].size(), kernels_per_run);
  EXPECT_EQ(capture["iterations"], 3);
  EXPECT_EQ(capture["engine"]["name"], "onnxruntime");
  for (auto& [node, d] : durs) {
    ASSERT_EQ(d.size(), 3u) << node;
    std::sort(d.begin(), d.end());
    const json& c = Compiled(g, node);
    EXPECT_DOUBLE_EQ(c["time_us"]["median_us"].get<double>(), d[1]) << node;
  }
}

TEST_F(ImportOrt, TwoBranchFusedGemmAndNchwcConvWithItsRelu) {
  const json g = Read(Import("two_branch") / "graph.json");
  const auto from = FusedFrom(g);
  EXPECT_EQ(from.at("fused /branch_b/fc1/MatMul/MatMulAddFusion"),
            (Names{"/branch_b/fc1/MatMul", "/branch_b/fc1_bias/Add", "/branch_b/tanh/Tanh"}));
  EXPECT_EQ(from.at("/branch_a/relu1/Relu_output_0_nchwc"), (Names{"/branch_a/conv1/Conv", "/branch_a/relu1/Relu"}));
  int reorders = 0;
  for (const json& c : g["compiled"]["nodes"]) reorders += c["kind"] == "transdata";
  EXPECT_EQ(reorders, 2);
}

TEST_F(ImportOrt, TransformerFusionsAndTheReshapesInsertedAroundEachGemm) {
  const json g = Read(Import("transformer_block") / "graph.json");
  const auto from = FusedFrom(g);
  int layernorms = 0, inserted_reshapes = 0;
  for (const json& c : g["compiled"]["nodes"]) {
    const Names& f = from.at(c["name"]);
    if (c["op_type"] == "LayerNormalization") {
      ++layernorms;
      ASSERT_EQ(f.size(), 9u) << c["name"];  // ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add
      const std::string scope = f[0].substr(0, f[0].find("/ln/") + 4);
      for (const std::string& n : f) EXPECT_EQ(n.rfind(scope, 0), 0u) << n;
    }
    if (c["op_type"] == "Gelu") {
      EXPECT_EQ(f, (Names{"/ffn/gelu/div/Div", "/ffn/gelu/erf/Erf", "/ffn/gelu/add/Add", "/ffn/gelu/mul/Mul",
                          "/ffn/gelu/mul_half/Mul"}));
    }
    if (c["op_type"] == "Reshape" && f.empty()) {
      ++inserted_reshapes;
      EXPECT_EQ(c["mapped_by"].get<std::string>().rfind("inserted by onnxruntime beside Gemm '", 0), 0u) << c["mapped_by"];
    }
  }
  EXPECT_EQ(layernorms, 2);
  EXPECT_EQ(inserted_reshapes, 8);  // one before and one after each of 6 Gemms, but the two that reuse a framework Reshape
  EXPECT_EQ(from.at("/attn/k/matmul/MatMul/MatMulAddFusion"), (Names{"/attn/k/matmul/MatMul", "/attn/k/bias/Add"}));
  // Two transposes in a row became one.
  EXPECT_EQ(from.at("/attn/k_t/Transpose"), (Names{"/attn/k/transpose/Transpose", "/attn/k_t/Transpose"}));
  EXPECT_EQ(from.at("/attn/scores/MatMul/MatMulScaleFusion/"), (Names{"/attn/scores/MatMul", "/attn/scale/Mul"}));
  for (const json& f : g["framework"]["nodes"]) EXPECT_TRUE(f["executed"].get<bool>()) << f["name"];
}

// summary, path, export and the page read the folder as one of `run`'s,
// rebuilding it from the three files capture.json names.
TEST_F(ImportOrt, TheRunFolderReadersWorkUnchanged) {
  const fs::path run = Import("resnet_small");
  ToolResult s = Run("summary " + run.string());
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("ort CPU"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("critical path  9 tasks"), std::string::npos) << s.out;
  ToolResult p = Run("path " + run.string() + " --node /layer1/add/Add");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("compiled: /layer1/block2/bn/BatchNormalization_output_0_nchwc (Conv)"), std::string::npos)
      << p.out;
  const std::string before = Slurp(run / "graph.json");
  ToolResult e = Run("export --input-dir " + run.string());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(Slurp(run / "graph.json"), before);  // rebuilt from the files, the same graph
  ToolResult html = Run("export --input-dir " + run.string() + " --format html");
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(Slurp(run / "report.html").find("inserted by onnxruntime: a layout conversion"), std::string::npos);

  // A profile changed since the import is refused, not read as the run's.
  std::ofstream(Ort("resnet_small") / "profile.json", std::ios::app) << "\n";
  ToolResult stale = Run("summary " + run.string());
  EXPECT_EQ(stale.exit_code, 2);
  EXPECT_NE(stale.err.find("profile.json changed since the run was imported (import it again)"), std::string::npos)
      << stale.err;
  // Put back for the other cases: the newline is JSON whitespace, the fingerprint was all that moved.
  const std::string text = Slurp(Ort("resnet_small") / "profile.json");
  std::ofstream(Ort("resnet_small") / "profile.json", std::ios::trunc) << text.substr(0, text.size() - 1);
}

// diff between opscope's run and onnxruntime's of the same model: what each
// fused, side by side through the framework graph, each one's layout
// changes, and time by framework op type.
TEST_F(ImportOrt, DiffShowsWhatEachEngineFusedSideBySide) {
  const fs::path ort = Import("resnet_small", "ort");
  const fs::path ours = dir_ / "ours";
  ToolResult r = Run("run " + Model("resnet_small.onnx") + " --output-dir " + ours.string() +
                     " --warmup 0 --iterations 2 --peak-bw 10 --peak-flops 10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ToolResult d = Run("diff " + ours.string() + " " + ort.string() + " --output " + (dir_ / "diff.json").string());
  ASSERT_NE(d.exit_code, 2) << d.err;
  EXPECT_NE(d.out.find("engines  base opscope, new onnxruntime"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("REGRESSION compiled nodes"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("fusion added"), std::string::npos) << d.out;
  const json j = Read(dir_ / "diff.json");
  const json& e = j["engines"];
  bool add_row = false;
  for (const json& row : e["fusions"]) {
    if (row["at"] != "/layer1/add/Add") continue;
    add_row = true;
    EXPECT_EQ(row["new"]["op_type"], "Conv");  // onnxruntime folded the Add and Relu into the conv
    EXPECT_EQ(row["new"]["framework"].size(), 4u);
    EXPECT_NE(row["base"]["op_type"], "Conv");
  }
  EXPECT_TRUE(add_row) << e["fusions"].dump();
  EXPECT_EQ(e["layouts"]["new"]["conversions"].size(), 1u);
  EXPECT_EQ(e["layouts"]["new"]["other_layout"], "NCHWc");
  EXPECT_EQ(e["layouts"]["new"]["other_layout_nodes"], 6);
  std::set<std::string> types;
  for (const json& t : e["framework_op_types"]) types.insert(t["op_type"]);
  EXPECT_TRUE(types.count("Conv") && types.count("Gemm") && types.count("inserted ReorderOutput")) << e.dump();

  // The page opens the two as baseline and run.
  ToolResult page = Run("export --input-dir " + ort.string() + " --format html --baseline " + ours.string());
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(Slurp(ort / "report.html").find("\"framework_op_types\""), std::string::npos);
}

// Bad input: one line naming the file or flag, exit 2, nothing written.
TEST_F(ImportOrt, BadFilesAreOneLineAndWriteNothing) {
  const fs::path rs = Ort("resnet_small"), tb = Ort("two_branch");
  const std::string model = Model("resnet_small.onnx");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  };
  const std::string out = (dir_ / "out").string();
  auto import = [&](const std::string& m, const fs::path& optimized, const std::string& profile, const std::string& more = "") {
    return Run("import-ort --model " + m + " --optimized " + optimized.string() + " --profile " + profile +
               " --output-dir " + out + more);
  };
  struct Case {
    ToolResult r;
    std::string expect;
  };
  const std::string good = (rs / "profile.json").string();
  std::vector<Case> cases = {
      {import(model, rs / "optimized.onnx", write("p1.json", "[{\"cat\": ")), "p1.json: not valid JSON"},
      {import(model, rs / "optimized.onnx", write("p2.json", "{\"a\": 1}")), "p2.json: expected a JSON array, found an object"},
      {import(model, rs / "optimized.onnx", write("p3.json", "[]")), "p3.json: no kernel event"},
      {import(model, rs / "optimized.onnx",
              write("p4.json", "[{\"cat\": \"Node\", \"name\": \"x_kernel_time\", \"ts\": \"1\", \"dur\": 2, \"args\": {\"op_name\": \"Relu\"}}]")),
       "p4.json: field [0].ts: expected a number"},
      {import(model, rs / "optimized.onnx",
              write("p5.json", "[{\"cat\": \"Node\", \"name\": \"x_kernel_time\", \"ts\": 1, \"dur\": -2, \"args\": {\"op_name\": \"Relu\"}}]")),
       "p5.json: field [0].dur: expected a time in microseconds >= 0"},
      {import(model, rs / "optimized.onnx", (tb / "profile.json").string()),
       "of its 11 kernel events name no node of"},
      {import(model, tb / "optimized.onnx", good), "graph input 'image' is not an input of"},
      {import(model, rs / "optimized.onnx", good, " --warmup 4"), "--warmup 4: "},
      {import(model, dir_ / "missing.onnx", good), "missing.onnx"},
      {import(model, rs / "profile.json", good), "profile.json"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.r.exit_code, 2) << c.expect << "\n" << c.r.err;
    EXPECT_EQ(c.r.err_lines(), 1) << c.r.err;
    EXPECT_NE(c.r.err.find(c.expect), std::string::npos) << c.r.err;
    EXPECT_FALSE(fs::exists(out)) << c.expect;
  }
  // The program itself: the exit code a shell sees.
  ToolResult spawned = Spawn("import-ort --model " + model + " --optimized " + (rs / "optimized.onnx").string() +
                             " --profile " + (dir_ / "p3.json").string() + " --output-dir " + out);
  EXPECT_EQ(spawned.exit_code, 2) << spawned.err;
}

}  // namespace
}  // namespace opscope::testing
