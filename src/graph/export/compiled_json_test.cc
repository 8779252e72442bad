// The compiled graph capture.json keeps, read back: for every model of the
// ONNX backend suite's node tests (Debian's libonnx-testdata, written by
// nobody here) and the repo's examples, compiled, written, parsed and
// restored, every field of every compiled node and value, the memory plan
// and the framework nodes' annotations are what the compiler made.
#include "graph/export/compiled_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"

namespace opscope::graph {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool SameAttr(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a)) {
    const double y = std::get<double>(b);
    return std::memcmp(x, &y, sizeof y) == 0;  // NaN and -0.0 too
  }
  if (const auto* x = std::get_if<std::vector<double>>(&a)) {
    const auto& y = std::get<std::vector<double>>(b);
    return x->size() == y.size() && std::memcmp(x->data(), y.data(), x->size() * sizeof(double)) == 0;
  }
  if (const auto* x = std::get_if<Tensor>(&a)) {
    const Tensor& y = std::get<Tensor>(b);
    return x->dtype() == y.dtype() && x->shape() == y.shape() && x->nbytes() == y.nbytes() &&
           (x->nbytes() == 0 || std::memcmp(x->raw_data(), y.raw_data(), x->nbytes()) == 0);
  }
  return std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, Tensor>) {
          return false;  // compared above
        } else {
          return x == std::get<X>(b);
        }
      },
      a);
}

struct Coverage {
  int models = 0, tensor_attrs = 0, float_attrs = 0, symbolic_dims = 0, constants = 0, fused = 0;
  int transdata = 0, not_executable = 0, removed_framework = 0, planned = 0;
};

// Everything a reader of a run folder uses, compared field by field.
void ExpectSameCompiledGraph(const Model& want, const Model& got, const std::string& what, Coverage& seen) {
  const Graph &a = want.compiled, &b = got.compiled;
  ASSERT_EQ(a.nodes().size(), b.nodes().size()) << what;
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node &x = a.nodes()[i], &y = b.nodes()[i];
    const std::string at = what + " node " + x.name;
    EXPECT_EQ(x.id, y.id) << at;
    EXPECT_EQ(x.kind, y.kind) << at;
    EXPECT_EQ(x.op_type, y.op_type) << at;
    EXPECT_EQ(x.domain, y.domain) << at;
    EXPECT_EQ(x.name, y.name) << at;
    EXPECT_EQ(x.name_space, y.name_space) << at;
    EXPECT_EQ(x.inputs, y.inputs) << at;
    EXPECT_EQ(x.outputs, y.outputs) << at;
    EXPECT_EQ(x.fused_from, y.fused_from) << at;
    EXPECT_EQ(x.executable, y.executable) << at;
    EXPECT_EQ(x.not_executable_reason, y.not_executable_reason) << at;
    EXPECT_EQ(x.layout_from, y.layout_from) << at;
    EXPECT_EQ(x.layout_to, y.layout_to) << at;
    EXPECT_EQ(x.note, y.note) << at;
    EXPECT_EQ(x.subgraphs, y.subgraphs) << at;
    EXPECT_EQ(x.branch_of, y.branch_of) << at;
    EXPECT_EQ(x.branch, y.branch) << at;
    ASSERT_EQ(x.branches.size(), y.branches.size()) << at;
    for (size_t k = 0; k < x.branches.size(); ++k) {
      EXPECT_EQ(x.branches[k].name, y.branches[k].name) << at;
      EXPECT_EQ(x.branches[k].outputs, y.branches[k].outputs) << at;
    }
    ASSERT_EQ(x.attrs.all().size(), y.attrs.all().size()) << at;
    for (const auto& [name, v] : x.attrs.all()) {
      const AttrValue* w = y.attrs.Find(name);
      ASSERT_NE(w, nullptr) << at << " attr " << name;
      EXPECT_TRUE(SameAttr(v, *w)) << at << " attr " << name;
      seen.tensor_attrs += std::holds_alternative<Tensor>(v);
      seen.float_attrs += std::holds_alternative<double>(v);
    }
    seen.fused += x.kind == NodeKind::kFused;
    seen.transdata += x.kind == NodeKind::kTransdata;
    seen.not_executable += !x.executable;
  }
  ASSERT_EQ(a.values().size(), b.values().size()) << what;
  for (const auto& [name, v] : a.values()) {
    const Value* w = b.FindValue(name);
    ASSERT_NE(w, nullptr) << what << " value " << name;
    const std::string at = what + " value " + name;
    EXPECT_EQ(v.dtype_known, w->dtype_known) << at;
    if (v.dtype_known) {
      EXPECT_EQ(v.dtype, w->dtype) << at;
    }
    EXPECT_EQ(v.rank_known, w->rank_known) << at;
    EXPECT_EQ(v.dims, w->dims) << at;
    EXPECT_EQ(v.dim_params, w->dim_params) << at;
    EXPECT_EQ(v.constant.has_value(), w->constant.has_value()) << at;
    EXPECT_EQ(v.is_graph_input, w->is_graph_input) << at;
    EXPECT_EQ(v.is_graph_output, w->is_graph_output) << at;
    EXPECT_EQ(v.producer, w->producer) << at;
    EXPECT_EQ(v.consumers, w->consumers) << at;
    EXPECT_EQ(v.mem_offset, w->mem_offset) << at;
    for (const std::string& p : v.dim_params) seen.symbolic_dims += !p.empty();
    seen.constants += v.constant.has_value();
  }
  EXPECT_EQ(a.inputs(), b.inputs()) << what;
  EXPECT_EQ(a.outputs(), b.outputs()) << what;
  const MemoryPlan &ma = a.memory(), &mb = b.memory();
  EXPECT_EQ(ma.planned, mb.planned) << what;
  EXPECT_EQ(ma.arena_bytes, mb.arena_bytes) << what;
  EXPECT_EQ(ma.no_reuse_bytes, mb.no_reuse_bytes) << what;
  EXPECT_EQ(ma.max_live_bytes, mb.max_live_bytes) << what;
  EXPECT_EQ(ma.planned_values, mb.planned_values) << what;
  EXPECT_EQ(ma.unknown_size_values, mb.unknown_size_values) << what;
  seen.planned += ma.planned && ma.planned_values > 0;
  EXPECT_EQ(want.next_node_id, got.next_node_id) << what;
  for (size_t i = 0; i < want.framework.nodes().size(); ++i) {
    const Node &x = want.framework.nodes()[i], &y = got.framework.nodes()[i];
    EXPECT_EQ(x.absorbed_into, y.absorbed_into) << what << " framework node " << x.name;
    EXPECT_EQ(x.executed, y.executed) << what << " framework node " << x.name;
    EXPECT_EQ(x.not_executed_reason, y.not_executed_reason) << what << " framework node " << x.name;
    seen.removed_framework += x.absorbed_into < 0;
  }
}

// Compiles `path`, keeps its compiled graph as capture.json does (through
// text), and restores it into a fresh import of the same file. `layouts`: as
// a plugin's schema asks (nhwc_mean's channel_mean wants NHWC).
void RoundTrip(const std::string& path, Coverage& seen, const std::map<std::string, std::string>& layouts = {}) {
  StatusOr<Model> compiled = ImportOnnx(path);
  if (!compiled.ok()) return;
  compiled->layout_preferences = layouts;
  if (!Compile(*compiled).ok()) return;  // the import and compile tests cover those
  const json kept = json::parse(JsonText(CompiledGraphJson(*compiled)));
  StatusOr<Model> fresh = ImportOnnx(path);
  ASSERT_TRUE(fresh.ok()) << path;
  JsonFields fields(path);
  const json doc = {{"compiled_graph", kept}};
  const Status restored = RestoreCompiledGraph(fields.Root(doc)["compiled_graph"], *fresh, fields);
  ASSERT_TRUE(restored.ok()) << path << ": " << restored.ToString();
  ++seen.models;
  ExpectSameCompiledGraph(*compiled, *fresh, path, seen);
}

TEST(CompiledGraphJson, EveryBackendNodeModelAndExampleReadsBackAsCompiled) {
  Coverage seen;
  const fs::path suite = "/usr/share/libonnx-testdata/data/node";
  ASSERT_TRUE(fs::is_directory(suite)) << "setup.sh installs libonnx-testdata";
  for (const fs::directory_entry& e : fs::directory_iterator(suite)) {
    const fs::path model = e.path() / "model.onnx";
    if (fs::exists(model)) RoundTrip(model.string(), seen);
    if (HasFatalFailure()) return;
  }
  for (const fs::directory_entry& e : fs::directory_iterator(OPSCOPE_SOURCE_DIR + "/examples/models")) {
    if (e.path().extension() == ".onnx") RoundTrip(e.path().string(), seen, {{"channel_mean", "NHWC"}});
    if (HasFatalFailure()) return;
  }
  // Each kind of thing the file keeps was met, so none went untested.
  EXPECT_GT(seen.models, 900);
  EXPECT_GT(seen.tensor_attrs, 10);
  EXPECT_GT(seen.float_attrs, 50);
  EXPECT_GT(seen.symbolic_dims, 0);
  EXPECT_GT(seen.constants, 100);
  EXPECT_GT(seen.fused, 0);
  EXPECT_GT(seen.transdata, 0);
  EXPECT_GT(seen.not_executable, 0);
  EXPECT_GT(seen.removed_framework, 0);
  EXPECT_GT(seen.planned, 100);
}

// A file that is not what the writer made: one error naming the field.
TEST(CompiledGraphJson, AWrongFieldIsNamed) {
  const std::string path = OPSCOPE_SOURCE_DIR + "/examples/models/two_branch.onnx";
  StatusOr<Model> compiled = ImportOnnx(path);
  ASSERT_TRUE(compiled.ok());
  ASSERT_TRUE(Compile(*compiled).ok());
  const json kept = CompiledGraphJson(*compiled);
  ASSERT_GE(kept["nodes"].size(), 2u);
  auto restore = [&](const json& g) {
    StatusOr<Model> fresh = ImportOnnx(path);
    EXPECT_TRUE(fresh.ok());
    JsonFields fields("capture.json");
    const json doc = {{"compiled_graph", g}};
    return RestoreCompiledGraph(fields.Root(doc)["compiled_graph"], *fresh, fields).ToString();
  };
  json g = kept;
  g["nodes"][1]["id"] = g["nodes"][0]["id"];
  EXPECT_NE(restore(g).find("field compiled_graph.nodes[1].id: node id"), std::string::npos) << restore(g);
  g = kept;
  g["nodes"][0]["fused_from"] = {123456};
  EXPECT_NE(restore(g).find("field compiled_graph.nodes[0].fused_from[0]: names framework node 123456"),
            std::string::npos) << restore(g);
  g = kept;
  g["values"][0]["dims"] = {-5};
  EXPECT_NE(restore(g).find("field compiled_graph.values[0].dims[0]: expected a dim >= 0"), std::string::npos)
      << restore(g);
  g = kept;
  g["nodes"][0]["inputs"] = g["nodes"].back()["outputs"];  // the first node reads the last one's output
  EXPECT_NE(restore(g).find("cycle"), std::string::npos) << restore(g);
  g = kept;
  g["nodes"][0]["attrs"]["t"] = {{"tensor", {{"dtype", "float32"}, {"dims", {1000000, 1000000}}, {"data", "00"}}}};
  EXPECT_NE(restore(g).find("field compiled_graph.nodes[0].attrs.t.tensor.data: expected 8 hex digits per element"),
            std::string::npos) << restore(g);
  g = kept;
  g["nodes"][0]["attrs"]["t"] = {{"tensor", {{"dtype", "float32"}, {"dims", {4}}, {"data", nullptr}}}};
  EXPECT_NE(restore(g).find("no such tensor attribute 't'"), std::string::npos) << restore(g);
  g = kept;
  g["framework_removed"] = {{"99999", "gone"}};
  EXPECT_NE(restore(g).find("field compiled_graph.framework_removed.99999"), std::string::npos) << restore(g);
}

}  // namespace
}  // namespace opscope::graph
