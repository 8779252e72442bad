// Each compiler pass on a small hand-made graph: what it rewrites, what it
// records (fused_from, executed/reason), and that the compiled graph still
// computes what the framework graph does.
#include <gtest/gtest.h>

#include <random>

#include "graph/onnx/onnx_convert.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/layout.h"
#include "graph/passes/passes.h"
#include "graph/runtime/inorder_eval.h"

namespace opscope::graph {
namespace {

// A tiny ONNX graph builder for the tests.
class ModelBuilder {
 public:
  ModelBuilder() {
    m_.set_ir_version(8);
    m_.add_opset_import()->set_version(17);
    m_.mutable_graph()->set_name("test");
  }
  ModelBuilder& Input(const std::string& name, std::vector<int64_t> dims) {
    Info(m_.mutable_graph()->add_input(), name, dims);
    return *this;
  }
  // Makes dim `d` of input `name` symbolic (dim_param), its size unknown.
  ModelBuilder& Symbolic(const std::string& name, int d, const std::string& param) {
    for (auto& in : *m_.mutable_graph()->mutable_input()) {
      if (in.name() == name) in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(d)->set_dim_param(param);
    }
    return *this;
  }
  ModelBuilder& Output(const std::string& name) {
    auto* v = m_.mutable_graph()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    return *this;
  }
  ModelBuilder& Const(const std::string& name, std::vector<int64_t> dims, std::vector<float> v = {}) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    std::normal_distribution<float> dist(0.0f, 0.5f);
    for (int64_t i = 0; i < n; ++i) t->add_float_data(v.empty() ? dist(rng_) : v[i % v.size()]);
    return *this;
  }
  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> in, const std::string& out) {
    auto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name("/" + out + "/" + op);
    for (auto& s : in) n->add_input(s);
    n->add_output(out);
    return n;
  }
  static void IntsAttr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  Model Import() {
    auto r = ImportOnnxModel(m_, "test.onnx");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : Model{};
  }

 private:
  static void Info(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  onnx::ModelProto m_;
  std::mt19937 rng_{3};
};

StatusOr<std::vector<PassResult>> RunPasses(Model& m, std::vector<std::string> names) {
  PassManager pm = PassManager::Default();
  OPSCOPE_RETURN_IF_ERROR(pm.KeepOnly(names));
  return pm.Run(m);
}

int CountOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op_type == op ? 1 : 0;
  return n;
}

std::map<std::string, Tensor> RandomInputs(const Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  std::map<std::string, Tensor> in;
  for (const std::string& name : g.inputs()) {
    const Value* v = g.FindValue(name);
    Tensor t = Tensor::Empty(v->dtype, v->shape()).value();
    for (int64_t i = 0; i < t.numel(); ++i) t.FlatSetFromDouble(i, dist(rng));
    in[name] = t;
  }
  return in;
}

// Runs both layers on the same inputs; every output agrees to float tolerance.
void ExpectSameResults(const Model& m) {
  auto cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok());
  auto inputs = RandomInputs(m.framework, 11);
  auto want = EvaluateInOrder(m.framework, inputs, *cpu);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  auto got = EvaluateInOrder(m.compiled, inputs, *cpu);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  for (const auto& [name, w] : *want) {
    const Tensor& g = got->at(name);
    ASSERT_EQ(g.shape(), w.shape()) << name;
    for (int64_t i = 0; i < w.numel(); ++i) {
      const double e = w.FlatGetAsDouble(i), a = g.FlatGetAsDouble(i);
      ASSERT_NEAR(a, e, 1e-4 + 1e-4 * std::fabs(e)) << name << "[" << i << "]";
    }
  }
}

TEST(GraphPasses, ConstantFoldingRunsAllConstantNodes) {
  ModelBuilder b;
  b.Input("x", {2, 4}).Const("c1", {4}).Const("c2", {4}).Output("y");
  b.Node("Mul", {"c1", "c2"}, "prod");
  b.Node("Exp", {"prod"}, "scale");
  b.Node("Mul", {"x", "scale"}, "y");
  Model m = b.Import();
  auto r = RunPasses(m, {"constant_folding"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].rewrites, 2);
  ASSERT_EQ(m.compiled.nodes().size(), 1u);
  EXPECT_TRUE(m.compiled.IsConstant("scale"));
  int folded = 0;
  for (const Node& f : m.framework.nodes()) {
    if (!f.executed) {
      ++folded;
      EXPECT_EQ(f.not_executed_reason, "folded into a constant at compile time");
    }
  }
  EXPECT_EQ(folded, 2);
  ExpectSameResults(m);
}

// Shape reads only dims: where they are known it folds, so the Reshape's
// shape is a constant and the host need not wait for the device to learn it.
TEST(GraphPasses, ConstantFoldingFoldsShapeOfAKnownShape) {
  ModelBuilder b;
  b.Input("x", {2, 3, 4}).Input("z", {6, 4}).Output("y");
  b.Node("Relu", {"z"}, "t");  // computed at run time: only its dims are known
  b.Node("Shape", {"t"}, "dims");
  b.Node("Reshape", {"x", "dims"}, "y");
  Model m = b.Import();
  auto r = RunPasses(m, {"shape_inference", "constant_folding"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(m.compiled.IsConstant("dims"));
  const Tensor& dims = *m.compiled.FindValue("dims")->constant;
  ASSERT_EQ(dims.numel(), 2);
  EXPECT_EQ(dims.data<int64_t>()[0], 6);
  EXPECT_EQ(dims.data<int64_t>()[1], 4);
  for (const Node& n : m.compiled.nodes()) EXPECT_NE(n.op_type, "Shape");
  for (const Node& f : m.framework.nodes()) {
    if (f.op_type == "Shape") {
      EXPECT_EQ(f.not_executed_reason, "folded into a constant at compile time");
    }
  }
  ExpectSameResults(m);
}

TEST(GraphPasses, ConstantFoldingLeavesShapeOfAnUnknownDimToTheRun) {
  ModelBuilder b;
  b.Input("x", {2, 3}).Symbolic("x", 0, "batch").Output("y");
  b.Node("Shape", {"x"}, "y");
  Model m = b.Import();
  auto r = RunPasses(m, {"shape_inference", "constant_folding"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(m.compiled.IsConstant("y"));
  ASSERT_EQ(m.compiled.nodes().size(), 1u);
  EXPECT_EQ(m.compiled.nodes()[0].op_type, "Shape");
}

TEST(GraphPasses, ConvBnFoldingRewritesWeights) {
  ModelBuilder b;
  b.Input("x", {1, 3, 6, 6}).Const("w", {4, 3, 3, 3}).Const("cb", {4}).Output("y");
  b.Const("scale", {4}, {0.5f, 1.5f, 2.0f, 0.8f}).Const("shift", {4}).Const("mean", {4});
  b.Const("var", {4}, {0.3f, 1.0f, 2.0f, 0.7f});
  auto* conv = b.Node("Conv", {"x", "w", "cb"}, "c");
  ModelBuilder::IntsAttr(conv, "pads", {1, 1, 1, 1});
  b.Node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, "y");
  Model m = b.Import();
  auto r = RunPasses(m, {"conv_bn_folding"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(m.compiled.nodes().size(), 1u);
  const Node& n = m.compiled.nodes()[0];
  EXPECT_EQ(n.op_type, "Conv");
  EXPECT_EQ(n.kind, NodeKind::kFused);
  EXPECT_EQ(n.fused_from, (std::vector<int64_t>{0, 1}));
  for (const Node& f : m.framework.nodes()) {
    EXPECT_FALSE(f.executed);
    EXPECT_EQ(f.absorbed_into, n.id);
    EXPECT_NE(f.not_executed_reason.find("fused into Conv"), std::string::npos) << f.not_executed_reason;
  }
  ExpectSameResults(m);
}

TEST(GraphPasses, BiasActivationFusionForConvGemmMatMul) {
  ModelBuilder b;
  b.Input("x", {1, 2, 5, 5}).Input("v", {3, 8}).Const("w", {4, 2, 3, 3}).Const("cbias", {4, 1, 1});
  b.Const("gw", {8, 6}).Const("gb", {6}).Const("mw", {6, 5}).Const("mb", {5});
  b.Output("y1").Output("y2");
  b.Node("Conv", {"x", "w"}, "c");
  b.Node("Add", {"c", "cbias"}, "cb");
  b.Node("Relu", {"cb"}, "y1");
  b.Node("Gemm", {"v", "gw"}, "g");
  b.Node("Add", {"g", "gb"}, "gbias");
  b.Node("Tanh", {"gbias"}, "gt");
  b.Node("MatMul", {"gt", "mw"}, "mm");
  b.Node("Add", {"mm", "mb"}, "mmb");
  b.Node("Sigmoid", {"mmb"}, "y2");
  Model m = b.Import();
  auto r = RunPasses(m, {"bias_activation_fusion"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].rewrites, 3);
  EXPECT_EQ(CountOp(m.compiled, "FusedConv"), 1);
  EXPECT_EQ(CountOp(m.compiled, "FusedGemm"), 1);
  EXPECT_EQ(CountOp(m.compiled, "FusedMatMul"), 1);
  EXPECT_EQ(m.compiled.nodes().size(), 3u);
  for (const Node& n : m.compiled.nodes()) EXPECT_EQ(n.fused_from.size(), 3u) << n.name;
  ExpectSameResults(m);
}

// A skip connection: a Conv's output plus a tensor of its own shape (the
// other branch, either operand order) joins the FusedConv as Z, B left out
// before it, with the ReLU after; an Add that broadcasts, or one that adds
// the Conv's output to itself, does not.
TEST(GraphPasses, ResidualAddJoinsTheConvAsZ) {
  ModelBuilder b;
  b.Input("x", {1, 2, 5, 5}).Input("s", {1, 2, 1, 1});
  b.Const("w1", {2, 2, 3, 3}).Const("w2", {2, 2, 3, 3}).Const("w3", {2, 2, 3, 3});
  b.Output("y2").Output("y3");
  ModelBuilder::IntsAttr(b.Node("Conv", {"x", "w1"}, "c1"), "pads", {1, 1, 1, 1});
  b.Node("Add", {"x", "c1"}, "r1");
  b.Node("Relu", {"r1"}, "y1");
  ModelBuilder::IntsAttr(b.Node("Conv", {"y1", "w2"}, "c2"), "pads", {1, 1, 1, 1});
  b.Node("Add", {"c2", "s"}, "y2");
  ModelBuilder::IntsAttr(b.Node("Conv", {"y1", "w3"}, "c3"), "pads", {1, 1, 1, 1});
  b.Node("Add", {"c3", "c3"}, "y3");
  Model m = b.Import();
  auto r = RunPasses(m, {"bias_activation_fusion"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].rewrites, 1);
  ASSERT_EQ(CountOp(m.compiled, "FusedConv"), 1);
  EXPECT_EQ(CountOp(m.compiled, "Conv"), 2);
  EXPECT_EQ(CountOp(m.compiled, "Add"), 2);
  for (const Node& n : m.compiled.nodes()) {
    if (n.op_type != "FusedConv") continue;
    EXPECT_EQ(n.inputs, (std::vector<std::string>{"x", "w1", "", "x"}));
    EXPECT_EQ(n.outputs, (std::vector<std::string>{"y1"}));
    EXPECT_EQ(n.attrs.s("activation"), "Relu");
    EXPECT_EQ(n.fused_from.size(), 3u);
  }
  ExpectSameResults(m);
}

TEST(GraphPasses, LayerNormAndGeluFusion) {
  ModelBuilder b;
  b.Input("x", {2, 3, 8}).Const("two", {}, {2.0f}).Const("eps", {}, {1e-5f}).Const("gamma", {8}).Const("beta", {8});
  b.Const("sqrt2", {}, {1.41421356f}).Const("one", {}, {1.0f}).Const("half", {}, {0.5f}).Output("y");
  ModelBuilder::IntsAttr(b.Node("ReduceMean", {"x"}, "mean"), "axes", {-1});
  b.Node("Sub", {"x", "mean"}, "d");
  b.Node("Pow", {"d", "two"}, "sq");
  ModelBuilder::IntsAttr(b.Node("ReduceMean", {"sq"}, "var"), "axes", {-1});
  b.Node("Add", {"var", "eps"}, "ve");
  b.Node("Sqrt", {"ve"}, "sd");
  b.Node("Div", {"d", "sd"}, "n");
  b.Node("Mul", {"n", "gamma"}, "g");
  b.Node("Add", {"g", "beta"}, "ln");
  b.Node("Div", {"ln", "sqrt2"}, "a");
  b.Node("Erf", {"a"}, "e");
  b.Node("Add", {"e", "one"}, "p");
  b.Node("Mul", {"ln", "p"}, "xm");
  b.Node("Mul", {"xm", "half"}, "y");
  Model m = b.Import();
  auto r = RunPasses(m, {"layernorm_fusion", "gelu_fusion"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(m.compiled.nodes().size(), 2u);
  EXPECT_EQ(m.compiled.nodes()[0].op_type, "LayerNormalization");
  EXPECT_EQ(m.compiled.nodes()[0].fused_from.size(), 9u);
  EXPECT_DOUBLE_EQ(m.compiled.nodes()[0].attrs.f("epsilon"), static_cast<double>(1e-5f));
  EXPECT_EQ(m.compiled.nodes()[1].op_type, "Gelu");
  EXPECT_EQ(m.compiled.nodes()[1].fused_from.size(), 5u);
  ExpectSameResults(m);
}

TEST(GraphPasses, GeluTanhForm) {
  ModelBuilder b;
  b.Input("x", {4, 6}).Const("three", {}, {3.0f}).Const("c", {}, {0.044715f}).Const("k", {}, {0.7978845608f});
  b.Const("one", {}, {1.0f}).Const("half", {}, {0.5f}).Output("y");
  b.Node("Pow", {"x", "three"}, "x3");
  b.Node("Mul", {"x3", "c"}, "cx3");
  b.Node("Add", {"x", "cx3"}, "inner");
  b.Node("Mul", {"inner", "k"}, "scaled");
  b.Node("Tanh", {"scaled"}, "t");
  b.Node("Add", {"t", "one"}, "p");
  b.Node("Mul", {"x", "half"}, "hx");
  b.Node("Mul", {"hx", "p"}, "y");
  Model m = b.Import();
  auto r = RunPasses(m, {"gelu_fusion"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(m.compiled.nodes().size(), 1u);
  EXPECT_EQ(m.compiled.nodes()[0].op_type, "Gelu");
  EXPECT_EQ(m.compiled.nodes()[0].attrs.s("approximate"), "tanh");
  ExpectSameResults(m);
}

TEST(GraphPasses, ElementwiseChainFusion) {
  ModelBuilder b;
  b.Input("x", {3, 5}).Input("z", {5}).Const("s", {}, {0.7f}).Output("y").Output("side");
  b.Node("Sub", {"x", "z"}, "a");
  b.Node("Mul", {"s", "a"}, "bb");
  b.Node("Exp", {"bb"}, "c");
  b.Node("Relu", {"c"}, "d");
  b.Node("Add", {"d", "x"}, "y");
  b.Node("Sigmoid", {"x"}, "side");  // a lone op: not a chain
  Model m = b.Import();
  auto r = RunPasses(m, {"elementwise_chain_fusion"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(CountOp(m.compiled, "FusedElementwise"), 1);
  EXPECT_EQ(CountOp(m.compiled, "Sigmoid"), 1);
  for (const Node& n : m.compiled.nodes()) {
    if (n.op_type != "FusedElementwise") continue;
    EXPECT_EQ(n.attrs.strings("ops"), (std::vector<std::string>{"Sub", "Mul", "Exp", "Relu", "Add"}));
    EXPECT_EQ(n.inputs, (std::vector<std::string>{"x", "z", "s"}));
    EXPECT_EQ(n.fused_from.size(), 5u);
  }
  ExpectSameResults(m);
}

// A test op whose result depends on where the channel axis is: it scales
// channel c by c + 1, reading the axis from its "layout" attribute.
Status ChannelScale(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const bool nhwc = ctx.attrs().s("layout") == "NHWC";
  const Shape& s = x.shape();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = nhwc ? i % s[3] : (i / (s[2] * s[3])) % s[1];
    y.FlatSetFromDouble(i, x.FlatGetAsDouble(i) * static_cast<double>(c + 1));
  }
  return Status::Ok();
}

OPSCOPE_OP("TestChannelScale")
    .Input("X", "T").Output("Y", "T").Attr("layout", "NCHW", {"NCHW", "NHWC"}).SameShape()
    .Reference(ChannelScale).Kernel("cpu", ChannelScale, "test_channel_scale");

TEST(GraphPasses, LayoutInsertsTransdataAndCancelsPairs) {
  RegisterLayoutPreference({"TestChannelScale", "NHWC", nullptr});
  ModelBuilder b;
  b.Input("x", {1, 3, 4, 5}).Output("y");
  b.Node("TestChannelScale", {"x"}, "a");
  b.Node("TestChannelScale", {"a"}, "y");
  Model m = b.Import();
  auto r = RunPasses(m, {"shape_inference", "layout"});
  UnregisterLayoutPreference("TestChannelScale");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  int transdata = 0;
  for (const Node& n : m.compiled.nodes()) {
    if (n.kind == NodeKind::kTransdata) {
      ++transdata;
      EXPECT_TRUE(n.fused_from.empty());
    } else {
      EXPECT_EQ(n.attrs.s("layout"), "NHWC");
    }
  }
  // In and out once: the back-and-forth pair between the two ops cancelled.
  EXPECT_EQ(transdata, 2);
  EXPECT_EQ(m.compiled.nodes().size(), 4u);
  ExpectSameResults(m);
}

TEST(GraphPasses, MemoryPlanningReusesAndNeverOverlapsLiveValues) {
  ModelBuilder b;
  b.Input("x", {64, 64}).Output("y");
  std::string prev = "x";
  for (int i = 0; i < 8; ++i) {
    const std::string out = i == 7 ? "y" : "t" + std::to_string(i);
    b.Node(i % 2 ? "Relu" : "Sigmoid", {prev}, out);
    prev = out;
  }
  Model m = b.Import();
  auto r = RunPasses(m, {"memory_planning"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const MemoryPlan& plan = m.compiled.memory();
  EXPECT_EQ(plan.planned_values, 7);
  EXPECT_EQ(plan.no_reuse_bytes, 7 * 64 * 64 * 4);
  EXPECT_LT(plan.arena_bytes, plan.no_reuse_bytes);
  EXPECT_GE(plan.arena_bytes, plan.max_live_bytes);
  // Live ranges [def, last use] that overlap must not share bytes.
  std::map<int64_t, size_t> step;
  for (size_t i = 0; i < m.compiled.nodes().size(); ++i) step[m.compiled.nodes()[i].id] = i;
  struct Live { size_t from, to; int64_t off, bytes; };
  std::vector<Live> lives;
  for (const auto& [name, v] : m.compiled.values()) {
    if (v.mem_offset < 0) continue;
    size_t to = step[v.producer];
    for (int64_t c : v.consumers) to = std::max(to, step[c]);
    lives.push_back({step[v.producer], to, v.mem_offset, v.bytes()});
  }
  for (size_t i = 0; i < lives.size(); ++i) {
    for (size_t j = i + 1; j < lives.size(); ++j) {
      const Live& a = lives[i];
      const Live& c = lives[j];
      if (a.to < c.from || c.to < a.from) continue;
      EXPECT_TRUE(a.off + a.bytes <= c.off || c.off + c.bytes <= a.off);
    }
  }
}

TEST(GraphPasses, DumpCallbackSeesEveryPass) {
  ModelBuilder b;
  b.Input("x", {2, 2}).Output("y");
  b.Node("Relu", {"x"}, "y");
  Model m = b.Import();
  std::vector<std::string> seen;
  auto r = PassManager::Default().Run(m, [&](const PassResult& p, const Model&) {
    seen.push_back(p.name);
    return Status::Ok();
  });
  ASSERT_TRUE(r.ok());
  PassManager pm = PassManager::Default();
  std::vector<std::string> names;
  for (const Pass& p : pm.passes()) names.push_back(p.name);
  EXPECT_EQ(seen, names);
  Status bad = pm.KeepOnly({"constant_fold"});
  EXPECT_NE(bad.message().find("unknown pass 'constant_fold'"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace opscope::graph
