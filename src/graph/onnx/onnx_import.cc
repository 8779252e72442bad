#include "graph/onnx/onnx_import.h"

#include "onnx/onnx_pb.h"

#include <exception>
#include <functional>
#include <set>
#include <string>
#include <limits>
#include <unordered_set>

#include "graph/onnx/onnx_adapter.h"
#include "graph/onnx/onnx_convert.h"
#include "graph/onnx/onnx_inference_guard.h"
#include "graph/onnx/onnx_precheck.h"
#include "onnx/shape_inference/implementation.h"

namespace opscope::graph {
namespace {

// Fills dtype and dims of `v` from an ONNX type; only tensor types carry them.
Status ReadType(const onnx::TypeProto& type, Value& v) {
  if (!type.has_tensor_type()) return Status::Ok();
  const auto& tt = type.tensor_type();
  if (tt.elem_type() != 0) {
    StatusOr<DType> d = DTypeFromOnnx(tt.elem_type(), "value '" + v.name + "'");
    if (d.ok()) {
      v.dtype = *d;
      v.dtype_known = true;
    }
  }
  if (!tt.has_shape()) return Status::Ok();
  v.rank_known = true;
  v.dims.clear();
  v.dim_params.clear();
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) {
        return InvalidArgumentError("value '" + v.name + "' has a negative dim (" + std::to_string(d.dim_value()) +
                                    ")");
      }
      v.dims.push_back(d.dim_value());
      v.dim_params.push_back("");
    } else {
      v.dims.push_back(-1);
      v.dim_params.push_back(d.dim_param());
    }
  }
  // Known dims alone may already overflow the element count.
  int64_t n = 1;
  for (int64_t d : v.dims) {
    if (d <= 0) continue;
    if (n > std::numeric_limits<int64_t>::max() / d) {
      return InvalidArgumentError("value '" + v.name + "' has dims " + Shape(v.dims).ToString() +
                                  " whose element count overflows int64");
    }
    n *= d;
  }
  return Status::Ok();
}

// ONNX's Constant node: its value as a tensor, from whichever attr holds it.
StatusOr<Tensor> ConstantNodeValue(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.name() == "value") return TensorFromProto(a.t());
    if (a.name() == "value_float" || a.name() == "value_int") {
      const bool is_float = a.name() == "value_float";
      OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(is_float ? DType::kF32 : DType::kI64, Shape()));
      if (is_float) t.data<float>()[0] = a.f();
      else t.data<int64_t>()[0] = a.i();
      return t;
    }
    if (a.name() == "value_floats" || a.name() == "value_ints") {
      const bool is_float = a.name() == "value_floats";
      const int64_t n = is_float ? a.floats_size() : a.ints_size();
      OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(is_float ? DType::kF32 : DType::kI64, Shape({n})));
      for (int64_t i = 0; i < n; ++i) {
        if (is_float) t.data<float>()[i] = a.floats(i);
        else t.data<int64_t>()[i] = a.ints(i);
      }
      return t;
    }
  }
  return UnimplementedError("Constant node '" + node.name() + "' holds no value opscope reads "
                            "(value, value_float(s), value_int(s))");
}

// Attributes without a schema (unknown ops): what converts, for display.
Attrs LooseAttrs(const onnx::NodeProto& node, std::vector<std::string>& subgraphs) {
  Attrs attrs;
  for (const auto& a : node.attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPH || a.has_g()) {
      subgraphs.push_back(a.name() + ": " + a.g().name() + " (" + std::to_string(a.g().node_size()) + " nodes)");
      continue;
    }
    if (a.type() == onnx::AttributeProto::GRAPHS) {
      for (const auto& g : a.graphs()) {
        subgraphs.push_back(a.name() + ": " + g.name() + " (" + std::to_string(g.node_size()) + " nodes)");
      }
      continue;
    }
    StatusOr<AttrValue> v = AttrValueFromProto(a);
    if (v.ok()) attrs.Set(a.name(), std::move(v).value());
  }
  return attrs;
}

// An If opscope expands: default domain, both branches given as graphs.
bool IsExpandableIf(const onnx::NodeProto& node) {
  if (node.op_type() != "If" || !IsDefaultOnnxDomain(node.domain()) || node.input_size() != 1) return false;
  int branches = 0;
  for (const auto& a : node.attribute()) {
    if ((a.name() == "then_branch" || a.name() == "else_branch") && a.has_g()) ++branches;
  }
  return branches == 2;
}

const onnx::GraphProto& BranchGraph(const onnx::NodeProto& node, const std::string& branch) {
  for (const auto& a : node.attribute()) {
    if (a.name() == branch) return a.g();
  }
  return onnx::GraphProto::default_instance();
}

// "<if>/then_branch" + "/scale/Mul" or "Mul_2": the branch node's full name.
std::string BranchNodeName(const std::string& prefix, const std::string& inner) {
  return prefix + (inner.starts_with('/') ? inner : "/" + inner);
}

void MarkNotExecutable(Node& n, std::string why) {
  if (!n.executable) return;  // the first reason is the one to fix first
  n.executable = false;
  n.not_executable_reason = std::move(why);
}

// Ok when the node gives its schema's input count and every required input
// (an older opset's attribute standing for an input counts as that input).
// The rewrite passes and shape inference index the inputs a schema promises,
// so a node failing this is never run nor rewritten.
Status CheckArity(const OpSchema& schema, const std::vector<std::string>& inputs, const Attrs& attrs) {
  std::vector<bool> present;
  for (const std::string& in : inputs) present.push_back(!in.empty());
  for (const AttrInputDef& def : schema.attr_inputs) {
    if (!attrs.has(def.attr)) continue;
    if (present.size() <= static_cast<size_t>(def.input)) present.resize(def.input + 1, false);
    present[def.input] = true;
  }
  while (!present.empty() && !present.back()) present.pop_back();  // trailing optionals left out
  const int n = static_cast<int>(present.size());
  if (n < schema.MinInputs() || n > schema.MaxInputs()) {
    const int lo = schema.MinInputs(), hi = schema.MaxInputs();
    const std::string want = hi == INT32_MAX ? "at least " + std::to_string(lo)
                             : lo == hi      ? std::to_string(lo)
                                             : std::to_string(lo) + " to " + std::to_string(hi);
    return InvalidArgumentError("has " + std::to_string(n) + " input(s); op " + schema.name + " takes " + want);
  }
  for (int i = 0; i < n && !schema.inputs.empty(); ++i) {
    const ArgDef& arg = schema.inputs[std::min<size_t>(i, schema.inputs.size() - 1)];
    if (!present[i] && arg.kind == ArgDef::Kind::kSingle) {
      return InvalidArgumentError("leaves required input " + std::to_string(i) + " (" + arg.name + ") empty");
    }
  }
  return Status::Ok();
}

class Importer {
 public:
  Importer(onnx::ModelProto proto, std::string path) : proto_(std::move(proto)) { model_.path = std::move(path); }

  StatusOr<Model> Run() {
    ReadMetadata();
    OPSCOPE_RETURN_IF_ERROR(CheckBeforeOnnxInference(proto_));
    InferShapes();
    const onnx::GraphProto& g = proto_.graph();
    Graph& graph = model_.framework;
    for (const auto& init : g.initializer()) {
      StatusOr<Tensor> t = TensorFromProto(init);
      if (!t.ok()) return std::move(t).status().WithContext("initializer '" + init.name() + "'");
      Value& v = graph.GetOrAddValue(init.name());
      v.SetDesc(t->dtype(), t->shape());
      v.constant = std::move(t).value();
    }
    for (const auto& in : g.input()) {
      Value& v = graph.GetOrAddValue(in.name());
      if (v.constant) continue;  // IR < 4 lists initializers among the inputs too
      OPSCOPE_RETURN_IF_ERROR(ReadType(in.type(), v).WithContext("graph input"));
      v.is_graph_input = true;
      graph.inputs().push_back(in.name());
    }
    for (const auto& vi : g.value_info()) {
      Value& v = graph.GetOrAddValue(vi.name());
      if (!v.constant) OPSCOPE_RETURN_IF_ERROR(ReadType(vi.type(), v));
    }
    for (const auto& out : g.output()) {
      Value& v = graph.GetOrAddValue(out.name());
      if (!v.constant) OPSCOPE_RETURN_IF_ERROR(ReadType(out.type(), v).WithContext("graph output"));
      graph.outputs().push_back(out.name());
    }
    for (int i = 0; i < g.node_size(); ++i) {
      if (IsExpandableIf(g.node(i))) {
        OPSCOPE_RETURN_IF_ERROR(AddIf(g.node(i), i));
      } else {
        OPSCOPE_RETURN_IF_ERROR(AddNode(g.node(i), next_id_++, i));
      }
    }
    OPSCOPE_RETURN_IF_ERROR(graph.Rebuild());
    model_.next_node_id = next_id_;
    return std::move(model_);
  }

 private:
  void ReadMetadata() {
    model_.ir_version = proto_.ir_version();
    model_.producer = proto_.producer_name();
    if (!proto_.producer_version().empty()) model_.producer += " " + proto_.producer_version();
    for (const auto& op : proto_.opset_import()) model_.opsets.push_back({op.domain(), op.version()});
    const int64_t opset = OpsetVersion(proto_, "");
    if (opset >= 0 && (opset < kMinOnnxOpset || opset > kMaxOnnxOpset)) {
      model_.warnings.push_back("default-domain opset " + std::to_string(opset) + " is outside the supported " +
                                std::to_string(kMinOnnxOpset) + "-" + std::to_string(kMaxOnnxOpset) +
                                "; nodes are adapted where opscope knows the older form");
    }
  }

  // ONNX's inference fills value_info; a model it cannot infer still imports.
  void InferShapes() {
    OnnxInferenceGuard guard(proto_);  // what ONNX's conv inference assumes unchecked
    try {
      onnx::ShapeInferenceOptions options;
      options.check_type = false;
      options.error_mode = 0;
      onnx::shape_inference::InferShapes(proto_, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception& e) {
      model_.warnings.push_back(std::string("ONNX shape inference stopped: ") + e.what());
    } catch (...) {
      model_.warnings.push_back("ONNX shape inference stopped");
    }
  }

  NodeEnv EnvFor(const onnx::NodeProto& node) const {
    NodeEnv env;
    env.opset = OpsetVersion(proto_, node.domain());
    for (const std::string& in : node.input()) {
      const Value* v = model_.framework.FindValue(in);
      if (!v) continue;
      if (v->dtype_known && v->shape_known()) env.descs[in] = v->desc();
      if (v->constant) env.values[in] = *v->constant;
    }
    return env;
  }

  // A top-level If: its branches become framework nodes. When a branch holds
  // something the importer cannot take, the If is kept with its subgraphs
  // only listed, as for other control flow, and a warning says why.
  Status AddIf(const onnx::NodeProto& proto, int index) {
    Graph saved = model_.framework;
    const int64_t saved_id = next_id_;
    onnx::NodeProto named = proto;
    if (named.name().empty()) named.set_name("If_" + std::to_string(index));
    Status expanded = ExpandIf(named);
    if (expanded.ok()) return Status::Ok();
    model_.framework = std::move(saved);
    next_id_ = saved_id;
    scopes_.clear();
    model_.warnings.push_back("If '" + named.name() + "': branches not expanded: " + expanded.message());
    return AddNode(proto, next_id_++, index);
  }

  // `node` has its final name and its inputs and outputs in outer names.
  // Values a branch defines are renamed "<if>/<branch>/<value>"; values it
  // reads from outside keep their names, so they are edges of the outer graph.
  Status ExpandIf(const onnx::NodeProto& node) {
    Graph& graph = model_.framework;
    Node n;
    n.id = next_id_++;
    n.op_type = node.op_type();
    n.name = node.name();
    n.name_space = NamespaceOf(n.name);
    n.inputs = {node.input(0)};
    n.outputs.assign(node.output().begin(), node.output().end());
    n.attrs = LooseAttrs(node, n.subgraphs);
    for (const char* branch : {"then_branch", "else_branch"}) {
      OPSCOPE_ASSIGN_OR_RETURN(Node::Branch b, ExpandBranch(BranchGraph(node, branch), n, branch));
      n.inputs.insert(n.inputs.end(), b.outputs.begin(), b.outputs.end());
      n.branches.push_back(std::move(b));
    }
    for (const Node::Branch& b : n.branches) {
      if (b.outputs.size() != n.outputs.size()) {
        return InvalidArgumentError(b.name + " has " + std::to_string(b.outputs.size()) + " outputs, the If " +
                                    std::to_string(n.outputs.size()));
      }
    }
    for (const std::string& out : n.outputs) {
      if (!out.empty()) graph.GetOrAddValue(out);
    }
    MarkNotExecutable(n, "control flow: opscope runs an If only when its cond '" + node.input(0) +
                             "' is constant at compile time (the compiler then inlines the branch taken)");
    graph.mutable_nodes().push_back(std::move(n));
    return Status::Ok();
  }

  StatusOr<Node::Branch> ExpandBranch(const onnx::GraphProto& sub, const Node& if_node, const std::string& branch) {
    if (sub.input_size() > 0) return UnimplementedError(branch + " declares inputs, which an If branch has not");
    Graph& graph = model_.framework;
    const std::string prefix = if_node.name + "/" + branch;
    scopes_.emplace_back();
    for (const auto& init : sub.initializer()) scopes_.back()[init.name()] = prefix + "/" + init.name();
    for (const auto& node : sub.node()) {
      for (const std::string& out : node.output()) {
        if (!out.empty()) scopes_.back()[out] = prefix + "/" + out;
      }
    }
    for (const auto& init : sub.initializer()) {
      StatusOr<Tensor> t = TensorFromProto(init);
      if (!t.ok()) return std::move(t).status().WithContext(branch + " initializer '" + init.name() + "'");
      Value& v = graph.GetOrAddValue(Resolve(init.name()));
      v.SetDesc(t->dtype(), t->shape());
      v.constant = std::move(t).value();
    }
    for (const auto* infos : {&sub.value_info(), &sub.output()}) {
      for (const auto& vi : *infos) {
        if (!scopes_.back().count(vi.name())) continue;  // an outer value: typed out there
        Value& v = graph.GetOrAddValue(Resolve(vi.name()));
        if (!v.constant) OPSCOPE_RETURN_IF_ERROR(ReadType(vi.type(), v).WithContext(branch));
      }
    }
    for (int i = 0; i < sub.node_size(); ++i) {
      onnx::NodeProto copy = sub.node(i);
      const std::string inner = copy.name().empty() ? copy.op_type() + "_" + std::to_string(i) : copy.name();
      const std::string full = BranchNodeName(prefix, inner);
      copy.set_name(full);
      for (std::string& in : *copy.mutable_input()) in = Resolve(in);
      for (std::string& out : *copy.mutable_output()) out = Resolve(out);
      if (IsExpandableIf(copy)) {
        OPSCOPE_RETURN_IF_ERROR(ExpandIf(copy));
      } else {
        OPSCOPE_RETURN_IF_ERROR(AddNode(copy, next_id_++, i));
      }
      Node& added = graph.mutable_nodes().back();
      added.branch_of = if_node.id;
      added.branch = branch;
      added.name_space = full.substr(0, full.rfind('/'));
    }
    Node::Branch b;
    b.name = branch;
    for (const auto& out : sub.output()) b.outputs.push_back(Resolve(out.name()));
    scopes_.pop_back();
    return b;
  }

  // A name as the framework graph knows it: the innermost branch defining it
  // renamed it; a name no branch defines is a value of the main graph.
  std::string Resolve(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    return name;
  }

  Status AddNode(const onnx::NodeProto& proto, int64_t id, int index) {
    Graph& graph = model_.framework;
    Node n;
    n.id = id;
    n.op_type = proto.op_type();
    n.domain = proto.domain();
    n.name = proto.name().empty() ? proto.op_type() + "_" + std::to_string(index) : proto.name();
    n.name_space = NamespaceOf(n.name);
    n.inputs.assign(proto.input().begin(), proto.input().end());
    n.outputs.assign(proto.output().begin(), proto.output().end());
    for (const std::string& out : n.outputs) {
      if (!out.empty()) graph.GetOrAddValue(out);
    }
    const std::string what = "node '" + n.name + "' (" + n.op_type + ")";

    if (n.op_type == "Constant" && IsDefaultOnnxDomain(n.domain)) {
      StatusOr<Tensor> t = ConstantNodeValue(proto);
      if (!t.ok()) return std::move(t).status().WithContext(what);
      if (!n.outputs.empty()) {
        Value& v = graph.GetOrAddValue(n.outputs[0]);
        v.SetDesc(t->dtype(), t->shape());
        v.constant = std::move(t).value();
      }
      n.note = "a constant: folded at compile time";
      graph.mutable_nodes().push_back(std::move(n));
      return Status::Ok();
    }

    const int64_t opset = OpsetVersion(proto_, n.domain);
    const std::string op = AdaptedOpType(proto, opset);
    const OpSchema* schema = OpRegistry::Global().Find(op);
    if (schema && !IsDefaultOnnxDomain(n.domain) && schema->domain != n.domain) schema = nullptr;
    if (!schema) {
      n.attrs = LooseAttrs(proto, n.subgraphs);
      std::string why = "opscope has no kernel for op '" + n.op_type + "'";
      if (!n.domain.empty()) why += " in domain '" + n.domain + "'";
      if (!n.subgraphs.empty()) why += " (control flow: its subgraphs are listed, not expanded)";
      MarkNotExecutable(n, why);
      graph.mutable_nodes().push_back(std::move(n));
      return Status::Ok();
    }

    StatusOr<AdaptedNode> adapted = AdaptOnnxNode(proto, EnvFor(proto));
    const onnx::NodeProto* form = &proto;
    if (adapted.ok()) {
      form = &adapted->node;
      if (adapted->changed) {
        n.op_type = adapted->node.op_type();
        n.inputs.assign(adapted->node.input().begin(), adapted->node.input().end());
        n.note = "rewritten from its opset " + std::to_string(opset) + " form";
        for (auto& [name, t] : adapted->constants) {
          Value& v = graph.GetOrAddValue(name);
          v.SetDesc(t.dtype(), t.shape());
          v.constant = t;
        }
      }
    } else {
      MarkNotExecutable(n, adapted.status().message());
    }
    StatusOr<Attrs> attrs = AttrsFromNode(*form, *schema);
    if (attrs.ok()) {
      n.attrs = std::move(attrs).value();
      Attrs checked = n.attrs;
      Status valid = schema->ValidateAttrs(checked);
      if (!valid.ok()) MarkNotExecutable(n, valid.message());
      Status arity = CheckArity(*schema, n.inputs, n.attrs);
      if (!arity.ok()) MarkNotExecutable(n, "the node " + arity.message());
    } else {
      n.attrs = LooseAttrs(*form, n.subgraphs);
      MarkNotExecutable(n, attrs.status().message());
    }
    graph.mutable_nodes().push_back(std::move(n));
    return Status::Ok();
  }

  onnx::ModelProto proto_;
  Model model_;
  int64_t next_id_ = 0;
  // Renames of the If branches being expanded, innermost last.
  std::vector<std::unordered_map<std::string, std::string>> scopes_;
};

}  // namespace

StatusOr<Model> ImportOnnxModel(const onnx::ModelProto& proto, const std::string& path) {
  StatusOr<Model> m = Importer(proto, path).Run();
  if (!m.ok()) return std::move(m).status().WithContext(path);
  return m;
}

StatusOr<Model> ImportOnnx(const std::string& path) {
  OPSCOPE_ASSIGN_OR_RETURN(onnx::ModelProto proto, LoadModel(path));
  StatusOr<Model> m = Importer(std::move(proto), path).Run();
  if (!m.ok()) return std::move(m).status().WithContext(path);
  return m;
}

StatusOr<Model> ImportOptimizedOnnx(const std::string& path) {
  OPSCOPE_ASSIGN_OR_RETURN(onnx::ModelProto proto, LoadModel(path));
  std::set<std::string> used;
  std::function<void(const onnx::GraphProto&)> collect = [&](const onnx::GraphProto& g) {
    for (const onnx::NodeProto& n : g.node()) {
      used.insert(IsDefaultOnnxDomain(n.domain()) ? "" : n.domain());
      for (const onnx::AttributeProto& a : n.attribute()) {
        if (a.has_g()) collect(a.g());
        for (const onnx::GraphProto& sub : a.graphs()) collect(sub);
      }
    }
  };
  collect(proto.graph());
  auto* opsets = proto.mutable_opset_import();
  for (int i = opsets->size() - 1; i >= 0; --i) {
    const std::string domain = IsDefaultOnnxDomain(opsets->Get(i).domain()) ? "" : opsets->Get(i).domain();
    if (used.count(domain) == 0) opsets->DeleteSubrange(i, 1);
  }
  StatusOr<Model> m = Importer(std::move(proto), path).Run();
  if (!m.ok()) return std::move(m).status().WithContext(path);
  return m;
}

}  // namespace opscope::graph
