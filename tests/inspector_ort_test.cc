// inspector-cli import-ort on real onnxruntime runs: the example models run
// under onnxruntime's CPU build (tools/ort/run_ort.js, onnxruntime-node as
// ./setup.sh installs it), their optimized models and profiles read back as
// run folders. What onnxruntime did is onnxruntime's, not ours: the
// expectations below are what its optimizer is known to do to these models
// (NCHWc convolutions with BatchNorm, the residual Add and Relu folded in,
// FusedGemm, LayerNormalization and Gelu fusion, Reshapes around a Gemm),
// and every time is checked against the profile's own events.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph_json_test_util.h"
#include "inspector_tool_test.h"
#include "onnx/onnx_pb.h"

namespace opscope::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// One onnxruntime run per model, made once and kept in the test cache
// ($XDG_CACHE_HOME/opscope-test-ort/<key>): ctest runs each case as its own
// process, and the onnxruntime runs and the torch export (about 8 s) are the
// same for all of them. The key is the FNV-1a of what makes the files: the
// runner, its lock file, the exporter and the example models. A folder is
// made under a temporary name and renamed into place whole, so that two
// processes making it at once both end up reading a complete one. The
// cases only read it (one that changes a file works on its own copy).
class ImportOrt : public InspectorToolTest {
 protected:
  static void SetUpTestSuite() {
    const std::string src = OPSCOPE_SOURCE_DIR;
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char* f : {"tools/ort/run_ort.js", "tools/ort/package-lock.json", "bench/make_torch_models.py",
                          "examples/models/resnet_small.onnx", "examples/models/two_branch.onnx",
                          "examples/models/transformer_block.onnx"}) {
      for (unsigned char c : Slurp(src + "/" + f)) h = (h ^ c) * 0x100000001b3ull;
    }
    const char* cache = std::getenv("XDG_CACHE_HOME");
    const fs::path root = fs::path(cache != nullptr && *cache ? cache : fs::temp_directory_path().c_str()) /
                          "opscope-test-ort";
    char key[17];
    std::snprintf(key, sizeof(key), "%016llx", static_cast<unsigned long long>(h));
    suite_dir_ = root / key;
    if (fs::exists(suite_dir_ / "complete")) return;
    const fs::path making = root / (std::string(key) + ".making-" + std::to_string(::getpid()));
    fs::remove_all(making);
    fs::create_directories(making);
    // A torchvision architecture nobody here wrote, exported by Debian's torch (96x96 keeps it quick).
    ToolResult exported = Shell("/usr/bin/python3 " + src + "/bench/make_torch_models.py " + making.string() +
                                " mobilenet_v2:96");
    if (exported.exit_code != 0) errors_ += "bench/make_torch_models.py: " + exported.err;
    for (const char* m : {"resnet_small", "two_branch", "transformer_block", "mobilenet_v2"}) {
      const std::string model = std::string(m) == "mobilenet_v2" ? (making / "mobilenet_v2.onnx").string()
                                                                  : src + "/examples/models/" + m + ".onnx";
      const std::string line = "node " + src + "/tools/ort/run_ort.js " + model + " " + (making / m).string() +
                               " --runs 4 --seed 1";
      ToolResult r = Shell(line);
      if (r.exit_code != 0) errors_ += line + " exited " + std::to_string(r.exit_code) + ": " + r.err;
    }
    if (!errors_.empty()) {
      fs::remove_all(making);
      return;
    }
    std::ofstream(making / "complete") << "made by tests/inspector_ort_test.cc\n";
    std::error_code ec;
    fs::rename(making, suite_dir_, ec);
    if (ec) fs::remove_all(making);  // another process put its own complete folder there first
  }

  // The folder run_ort.js wrote for `model` (optimized.onnx, profile.json); fails the test when it could not run.
  static fs::path Ort(const std::string& model) {
    EXPECT_EQ(errors_, "") << "onnxruntime-node and python3-torchvision are installed by ./setup.sh";
    return suite_dir_ / model;
  }

  // The example model, or the torchvision one the suite exported.
  static std::string ModelPath(const std::string& model) {
    if (model == "mobilenet_v2") return (suite_dir_ / "mobilenet_v2.onnx").string();
    return std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/" + model + ".onnx";
  }

  // import-ort of `model` into dir_/<out>; the result's folder.
  fs::path Import(const std::string& model, const std::string& out = "run") {
    const fs::path o = Ort(model);
    ToolResult r = Run("import-ort --model " + ModelPath(model) + " --optimized " + (o / "optimized.onnx").string() +
                       " --profile " + (o / "profile.json").string() + " --output-dir " + (dir_ / out).string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    last_out_ = r.out;
    return dir_ / out;
  }

  static json Read(const fs::path& p) { return json::parse(Slurp(p)); }

  // opscope's own run of `model` into `ours` (no warm-up, fixed roofs, plus
  // `flags`), then `diff ours ort --output dir_/diff.json`: the diff's result.
  ToolResult DiffOursAgainst(const fs::path& ort, const fs::path& ours, const std::string& model,
                             const std::string& flags) {
    ToolResult r = Run("run " + model + " --output-dir " + ours.string() + " --warmup 0 --peak-bw 10 --peak-flops 10 " +
                       flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Run("diff " + ours.string() + " " + ort.string() + " --output " + (dir_ / "diff.json").string());
  }

  // What onnxruntime's optimized model for `model` holds in NCHWc: its layout
  // conversions (ReorderInput/ReorderOutput) and the other nodes it runs
  // blocked. Both depend on the CPU: blocks of 8 floats with AVX2, of 16
  // with AVX-512, where resnet_small's 8-channel layers each convert back.
  struct Nchwc {
    size_t conversions = 0;
    int64_t other = 0;
  };
  static Nchwc NchwcOf(const std::string& model) {
    onnx::ModelProto proto;
    std::ifstream in(Ort(model) / "optimized.onnx", std::ios::binary);
    EXPECT_TRUE(proto.ParseFromIstream(&in));
    Nchwc n;
    for (const onnx::NodeProto& node : proto.graph().node()) {
      if (node.domain() != "com.microsoft.nchwc") continue;
      if (node.op_type().rfind("Reorder", 0) == 0) {
        ++n.conversions;
      } else {
        ++n.other;
      }
    }
    return n;
  }

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
  static inline std::string errors_;  // what failed while making the folder
  std::string last_out_;
};

using Names = std::vector<std::string>;

TEST_F(ImportOrt, ResnetNchwcConvsStandForTheirConvBatchNormAddAndRelu) {
  const fs::path run = Import("resnet_small");
  EXPECT_NE(last_out_.find("engine   onnxruntime (CPUExecutionProvider): 4 run(s) in the profile, 1 warm-up, 3 timed"),
            std::string::npos)
      << last_out_;
  const json g = ReadGraphJson(run / "graph.json");
  const auto from = FusedFrom(g);
  EXPECT_EQ(from.at("/stem/relu/Relu_output_0_nchwc"),
            (Names{"/stem/conv/Conv", "/stem/bn/BatchNormalization", "/stem/relu/Relu"}));
  // Named after the BatchNorm's output, it computes through the residual Add (its Sum input) and the Relu.
  EXPECT_EQ(from.at("/layer1/block2/bn/BatchNormalization_output_0_nchwc"),
            (Names{"/layer1/block2/conv/Conv", "/layer1/block2/bn/BatchNormalization", "/layer1/add/Add",
                   "/layer1/relu/Relu"}));
  const json& sum = Compiled(g, "/layer2/block2/bn/BatchNormalization_output_0_nchwc");
  EXPECT_EQ(sum["kind"], "fused");
  // Through its Sum input where the block stays in NCHWc (AVX2); where
  // onnxruntime converts each conv's output back (AVX-512's 16-float
  // blocks over 8 channels), by its output through that conversion.
  const std::string how = sum["mapped_by"];
  EXPECT_TRUE(how.find("of its Sum input, then its activation Relu '/layer2/relu/Relu'") != std::string::npos ||
              how.find("is the framework's '/layer2/relu/Relu_output_0' in another layout, through ReorderOutput") !=
                  std::string::npos)
      << how;
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
  // The blocked tensors onnxruntime wrote no shape for take the kernel's:
  // 8 channels in one block of 8 floats (AVX2) or of 16 (AVX-512).
  bool blocked = false;
  for (const json& v : g["compiled"]["values"]) {
    if (v["name"] == "reorder_token_4") {
      blocked = true;
      EXPECT_TRUE(v["shape"] == (json{1, 8, 16, 16}) || v["shape"] == (json{1, 16, 16, 16})) << v.dump();
    }
  }
  EXPECT_TRUE(blocked);
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
  const json g = ReadGraphJson(run / "graph.json");
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
  const json g = ReadGraphJson(Import("two_branch") / "graph.json");
  const auto from = FusedFrom(g);
  EXPECT_EQ(from.at("fused /branch_b/fc1/MatMul/MatMulAddFusion"),
            (Names{"/branch_b/fc1/MatMul", "/branch_b/fc1_bias/Add", "/branch_b/tanh/Tanh"}));
  EXPECT_EQ(from.at("/branch_a/relu1/Relu_output_0_nchwc"), (Names{"/branch_a/conv1/Conv", "/branch_a/relu1/Relu"}));
  int reorders = 0;
  for (const json& c : g["compiled"]["nodes"]) reorders += c["kind"] == "transdata";
  EXPECT_EQ(reorders, 2);
}

TEST_F(ImportOrt, TransformerFusionsAndTheReshapesInsertedAroundEachGemm) {
  const json g = ReadGraphJson(Import("transformer_block") / "graph.json");
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

// torchvision's mobilenet_v2: the framework graph is the model's own (its
// node count and outputs), every kernel event lands on a compiled node, and
// each Conv+Clip (ReLU6) onnxruntime fused maps to both framework nodes.
TEST_F(ImportOrt, TorchvisionMobilenetEveryKernelOnANodeAndEachConvWithItsClip) {
  const fs::path run = Import("mobilenet_v2");
  const json g = ReadGraphJson(run / "graph.json");
  onnx::ModelProto proto;
  std::ifstream in(ModelPath("mobilenet_v2"), std::ios::binary);
  ASSERT_TRUE(proto.ParseFromIstream(&in));
  EXPECT_EQ(g["framework"]["nodes"].size(), static_cast<size_t>(proto.graph().node_size()));
  ASSERT_EQ(g["framework"]["outputs"].size(), static_cast<size_t>(proto.graph().output_size()));
  for (int i = 0; i < proto.graph().output_size(); ++i) EXPECT_EQ(g["framework"]["outputs"][i], proto.graph().output(i).name());
  const json capture = Read(run / "capture.json");
  for (const json& t : capture["tasks"]) EXPECT_GE(t["node_id"].get<int64_t>(), 0) << t.dump();
  std::map<int64_t, json> framework, compiled;
  for (const json& f : g["framework"]["nodes"]) framework[f["node_id"]] = f;
  for (const json& c : g["compiled"]["nodes"]) compiled[c["node_id"]] = c;
  std::map<std::string, int64_t> producer;
  for (const auto& [id, f] : framework) {
    for (const json& o : f["outputs"]) producer[o["name"]] = id;
  }
  int clips = 0;
  for (const auto& [id, f] : framework) {
    EXPECT_TRUE(f["executed"].get<bool>()) << f["name"];
    if (f["op_type"] != "Clip") continue;
    ++clips;
    const json& c = compiled.at(f["compiled_node_id"].get<int64_t>());
    const int64_t conv = producer.at(f["inputs"][0]["name"]);
    EXPECT_EQ(framework.at(conv)["op_type"], "Conv");
    const auto& from = c["fused_from"];
    EXPECT_NE(std::find(from.begin(), from.end(), conv), from.end()) << c["name"] << " stands for " << f["name"]
                                                                      << " but not for its Conv";
  }
  EXPECT_EQ(clips, 35);  // every ReLU6 of the 17 inverted residual blocks and the stem and head
}

// summary, path, export and the page read the folder as one of `run`'s,
// rebuilding it from the three files capture.json names.
TEST_F(ImportOrt, TheRunFolderReadersWorkUnchanged) {
  // The onnxruntime files copied: this case changes the profile.
  const fs::path files = dir_ / "files";
  fs::create_directories(files);
  fs::copy_file(Ort("resnet_small") / "optimized.onnx", files / "optimized.onnx");
  fs::copy_file(Ort("resnet_small") / "profile.json", files / "profile.json");
  const fs::path run = dir_ / "run";
  ToolResult imported = Run("import-ort --model " + ModelPath("resnet_small") + " --optimized " +
                            (files / "optimized.onnx").string() + " --profile " + (files / "profile.json").string() +
                            " --output-dir " + run.string());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  ToolResult s = Run("summary " + run.string());
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("ort CPU"), std::string::npos) << s.out;
  // The model is a chain: every compiled node is on its critical path (9 with
  // AVX2's one conversion at the end, 13 where each conv converts back).
  const size_t chain = ReadGraphJson(run / "graph.json")["compiled"]["nodes"].size();
  EXPECT_NE(s.out.find("critical path  " + std::to_string(chain) + " tasks"), std::string::npos) << s.out;
  ToolResult p = Run("path " + run.string() + " --node /layer1/add/Add");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  // Mapped through its Sum input, or where each conv converts back (AVX-512),
  // by its output through the conversion (ResnetNchwcConvs... says why).
  const std::string compiled = "compiled: /layer1/block2/bn/BatchNormalization_output_0_nchwc (Conv)\n  mapped by ";
  EXPECT_TRUE(p.out.find(compiled + "its output: named after the framework's tensor "
                                    "'/layer1/block2/bn/BatchNormalization_output_0', then the Add '/layer1/add/Add' "
                                    "of its Sum input, then its activation Relu '/layer1/relu/Relu'\n") !=
                  std::string::npos ||
              p.out.find(compiled + "its output: 'reorder_token_7' is the framework's '/layer1/relu/Relu_output_0' in "
                                    "another layout, through ReorderOutput") != std::string::npos)
      << p.out;
  const std::string before = Slurp(run / "graph.json");
  ToolResult e = Run("export --input-dir " + run.string());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(Slurp(run / "graph.json"), before);  // rebuilt from the files, the same graph
  ToolResult html = Run("export --input-dir " + run.string() + " --format html");
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(Slurp(run / "report.html").find("inserted by onnxruntime: a layout conversion"), std::string::npos);

  // A profile changed since the import is refused, not read as the run's.
  std::ofstream(files / "profile.json", std::ios::app) << "\n";
  ToolResult stale = Run("summary " + run.string());
  EXPECT_EQ(stale.exit_code, 2);
  EXPECT_NE(stale.err.find("profile.json changed since the run was imported (import it again)"), std::string::npos)
      << stale.err;
}

// diff between opscope's run and onnxruntime's of the same model: what each
// fused, side by side through the framework graph, each one's layout
// changes, and time by framework op type.
TEST_F(ImportOrt, DiffShowsWhatEachEngineFusedSideBySide) {
  const fs::path ort = Import("resnet_small", "ort"), ours = dir_ / "ours";
  const ToolResult d = DiffOursAgainst(ort, ours, ModelPath("resnet_small"), "--iterations 2");
  // Two engines' times are compared, never a regression: whichever engine
  // was faster this time, in either order, the diff passes.
  ASSERT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_NE(d.out.find("engines  base opscope, new onnxruntime"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("their times compare the engines and are no regression"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("REGRESSION"), std::string::npos) << d.out;
  const ToolResult back =
      Run("diff " + ort.string() + " " + ours.string() + " --threshold-time 0% --output " + (dir_ / "back.json").string());
  ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_EQ(Read(dir_ / "back.json")["regressions"], json::array());
  EXPECT_EQ(d.out.find("fusion added"), std::string::npos) << d.out;
  const json j = Read(dir_ / "diff.json");
  const json& e = j["engines"];
  // The residual block's second conv: both engines took its BN, the Add and
  // the Relu into one kernel (onnxruntime's NCHWc Conv, opscope's FusedConv with Z).
  bool add_row = false;
  for (const json& row : e["fusions"]) {
    if (row["at"] != "/layer1/block2/conv/Conv") continue;
    add_row = true;
    EXPECT_EQ(row["new"]["op_type"], "Conv");
    EXPECT_EQ(row["base"]["op_type"], "FusedConv");
    EXPECT_EQ(row["new"]["framework"].size(), 4u);
    EXPECT_EQ(row["base"]["framework"], row["new"]["framework"]) << row.dump();
  }
  EXPECT_TRUE(add_row) << e["fusions"].dump();
  const Nchwc nchwc = NchwcOf("resnet_small");
  EXPECT_GE(nchwc.conversions, 1u);
  EXPECT_EQ(e["layouts"]["new"]["conversions"].size(), nchwc.conversions);
  EXPECT_EQ(e["layouts"]["new"]["other_layout"], "NCHWc");
  EXPECT_EQ(e["layouts"]["new"]["other_layout_nodes"], nchwc.other);
  std::set<std::string> types;
  for (const json& t : e["framework_op_types"]) types.insert(t["op_type"]);
  EXPECT_TRUE(types.count("Conv") && types.count("Gemm") && types.count("inserted ReorderOutput")) << e.dump();

  // The page opens the two as baseline and run.
  ToolResult page = Run("export --input-dir " + ort.string() + " --format html --baseline " + ours.string());
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(Slurp(ort / "report.html").find("\"framework_op_types\""), std::string::npos);
}

// Across engines the compiled nodes are named apart (onnxruntime's NCHWc
// Conv "..._output_0_nchwc", opscope's FusedConv after the Conv): diff
// pairs them by the framework node each is built around, so every node of
// torchvision's mobilenet_v2 has both times; and a fused group whose
// members one engine folded away (the Clip's Constant bounds, the
// Identity) shows once, not again beside a missing node.
TEST_F(ImportOrt, DiffAcrossEnginesPairsNodesByTheFrameworkNodeTheyAreBuiltAround) {
  const fs::path ort = Import("mobilenet_v2", "ort"), ours = dir_ / "ours";
  const ToolResult d = DiffOursAgainst(ort, ours, ModelPath("mobilenet_v2"), "--iterations 1 --streams 1");
  ASSERT_NE(d.exit_code, 2) << d.err;
  const json j = Read(dir_ / "diff.json");
  int64_t paired = 0, renamed = 0;
  for (const json& e : j["node_times"]) {
    const std::string key = e["framework"];
    if (key.starts_with("inserted ")) continue;  // onnxruntime's ReorderOutput: no framework node
    EXPECT_NE(e["verdict"], "new") << e.dump();
    EXPECT_NE(e["verdict"], "gone") << e.dump();
    ++paired;
    if (e.contains("base_node")) {
      ++renamed;
      EXPECT_TRUE(e["node"].get<std::string>().ends_with("_nchwc") || e["node"] == "/classifier/classifier.1/Gemm")
          << e.dump();
    }
  }
  EXPECT_GE(paired, 50);  // 52 convolutions, the pool, the flatten, the classifier
  EXPECT_GT(renamed, 40);
  // The new run's top tasks find their time in the base run the same way.
  for (const json& t : j["top_tasks"]) EXPECT_FALSE(t["base_us"].is_null()) << t.dump();
  // Fusions are compared through the framework graph (engines), not by name.
  for (const char* kind : {"added", "removed", "changed"}) EXPECT_TRUE(j["fusions"][kind].empty()) << j["fusions"].dump();
  std::set<std::string> paired_nodes;
  for (const json& row : j["engines"]["fusions"]) {
    if (!row["base"].is_null() && !row["new"].is_null()) {
      paired_nodes.insert("b:" + row["base"]["node"].get<std::string>());
      paired_nodes.insert("n:" + row["new"]["node"].get<std::string>());
    }
  }
  for (const json& row : j["engines"]["fusions"]) {
    EXPECT_FALSE(row["base"].is_null() && paired_nodes.count("n:" + row["new"]["node"].get<std::string>()))
        << row.dump();
    EXPECT_FALSE(row["new"].is_null() && paired_nodes.count("b:" + row["base"]["node"].get<std::string>()))
        << row.dump();
  }
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
