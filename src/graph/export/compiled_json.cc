#include "graph/export/compiled_json.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "graph/passes/pass_manager.h"
#include "opscope/dtype.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

// A rank no real tensor has; a file claiming more is not one of ours.
constexpr size_t kMaxRank = 64;

// JSON has no NaN or infinity: they are written as strings.
json NumberJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double NumberFromJson(const JsonField& f) {
  if (f.raw().is_string()) {
    const std::string s = f.String();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    f.Fail("expected a number, \"nan\", \"inf\" or \"-inf\", found \"" + s + "\"");
    return 0;
  }
  return f.Number();
}

std::vector<int64_t> KeptInts(const JsonField& f) {
  std::vector<int64_t> out(f.Size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = f[i].Int();
  return out;
}

std::vector<int64_t> KeptDims(const JsonField& f) {
  if (f.Size() > kMaxRank) f.Fail("expected at most " + std::to_string(kMaxRank) + " dims");
  std::vector<int64_t> dims = f.Size() > kMaxRank ? std::vector<int64_t>{} : KeptInts(f);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < -1) f[i].Fail("expected a dim >= 0, or -1 when unknown");
  }
  return dims;
}

const char kHexDigits[] = "0123456789abcdef";

json KeptTensorJson(const Tensor& t) {
  json j = {{"dtype", DTypeName(t.dtype())}, {"dims", t.shape().dims()}};
  if (!t.defined() || !t.is_contiguous() || !t.on_host() || t.nbytes() > kMaxInlineTensorBytes) {
    j["data"] = nullptr;  // read back from the framework node's attribute
    return j;
  }
  const auto* p = static_cast<const unsigned char*>(t.raw_data());
  std::string hex(t.nbytes() * 2, '0');
  for (size_t i = 0; i < t.nbytes(); ++i) {
    hex[2 * i] = kHexDigits[p[i] >> 4];
    hex[2 * i + 1] = kHexDigits[p[i] & 15];
  }
  j["data"] = std::move(hex);
  return j;
}

json KeptAttrJson(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> json {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, int64_t>) return {{"int", x}};
        if constexpr (std::is_same_v<X, double>) return {{"float", NumberJson(x)}};
        if constexpr (std::is_same_v<X, std::string>) return {{"string", x}};
        if constexpr (std::is_same_v<X, std::vector<int64_t>>) return {{"ints", x}};
        if constexpr (std::is_same_v<X, std::vector<std::string>>) return {{"strings", x}};
        if constexpr (std::is_same_v<X, std::vector<double>>) {
          json a = json::array();
          for (double d : x) a.push_back(NumberJson(d));
          return {{"floats", std::move(a)}};
        }
        if constexpr (std::is_same_v<X, Tensor>) return {{"tensor", KeptTensorJson(x)}};
      },
      v);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// A tensor attribute: inline, or the framework node's own (see the header).
std::optional<Tensor> TensorFromJson(const JsonField& j, const Node* framework_twin, const std::string& attr) {
  StatusOr<DType> dtype = ParseDType(j["dtype"].String());
  const std::vector<int64_t> dims = KeptDims(j["dims"]);
  if (!dtype.ok()) {
    j["dtype"].Fail(dtype.status().message());
    return std::nullopt;
  }
  for (int64_t d : dims) {
    if (d < 0) j["dims"].Fail("expected known dims");
  }
  if (!j["data"].Present()) {
    const AttrValue* v = framework_twin ? framework_twin->attrs.Find(attr) : nullptr;
    const Tensor* t = v ? std::get_if<Tensor>(v) : nullptr;
    if (!t || t->dtype() != *dtype || t->shape().dims() != dims) {
      j["data"].Fail("null, and framework node " + (framework_twin ? std::to_string(framework_twin->id) : "(none)") +
                     " of the model has no such tensor attribute '" + attr + "' to take it from");
      return std::nullopt;
    }
    return *t;
  }
  const std::string hex = j["data"].String();
  // The length is checked against the dims before anything is allocated.
  const Shape shape(dims);
  if (shape.Validate().ok() && hex.size() == static_cast<size_t>(shape.numel()) * DTypeSize(*dtype) * 2 &&
      hex.size() <= kMaxInlineTensorBytes * 2) {
    StatusOr<Tensor> t = Tensor::Empty(*dtype, shape);
    if (!t.ok()) {
      j["data"].Fail(t.status().message());
      return std::nullopt;
    }
    auto* p = static_cast<unsigned char*>(t->raw_data());
    for (size_t i = 0; i < hex.size() / 2; ++i) {
      const int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
      if (hi < 0 || lo < 0) {
        j["data"].Fail("expected lowercase hex digits");
        return std::nullopt;
      }
      p[i] = static_cast<unsigned char>(hi << 4 | lo);
    }
    return *std::move(t);
  }
  j["data"].Fail("expected " + std::to_string(2 * DTypeSize(*dtype)) + " hex digits per element of " +
                 shape.ToString() + ", at most " + std::to_string(kMaxInlineTensorBytes) + " bytes in all");
  return std::nullopt;
}

void RestoreAttrs(const JsonField& j, const Node* framework_twin, Attrs& attrs) {
  if (!j.Object()) return;
  for (const auto& [name, raw] : j.raw().items()) {
    const JsonField a = j[name];
    if (!a.Object() || raw.size() != 1) {
      a.Fail("expected one of {\"int\"|\"float\"|\"string\"|\"ints\"|\"floats\"|\"strings\"|\"tensor\": value}");
      return;
    }
    const std::string kind = raw.begin().key();
    const JsonField v = a[kind];
    if (kind == "int") {
      attrs.Set(name, v.Int());
    } else if (kind == "float") {
      attrs.Set(name, NumberFromJson(v));
    } else if (kind == "string") {
      attrs.Set(name, v.String());
    } else if (kind == "ints") {
      attrs.Set(name, KeptInts(v));
    } else if (kind == "strings") {
      attrs.Set(name, v.Strings());
    } else if (kind == "floats") {
      std::vector<double> fs(v.Size());
      for (size_t i = 0; i < fs.size(); ++i) fs[i] = NumberFromJson(v[i]);
      attrs.Set(name, std::move(fs));
    } else if (kind == "tensor") {
      if (std::optional<Tensor> t = TensorFromJson(v, framework_twin, name)) attrs.Set(name, *std::move(t));
    } else {
      a.Fail("unknown attribute kind \"" + kind + "\"");
    }
  }
}

NodeKind NodeKindFromJson(const JsonField& f) {
  const std::string s = f.String();
  for (NodeKind k : {NodeKind::kOp, NodeKind::kFused, NodeKind::kTransdata}) {
    if (s == NodeKindName(k)) return k;
  }
  f.Fail("expected \"op\", \"fused\" or \"transdata\", found \"" + s + "\"");
  return NodeKind::kOp;
}

json ValueJson(const Value& v) {
  json j = {{"name", v.name},
            {"dtype", v.dtype_known ? json(DTypeName(v.dtype)) : json(nullptr)},
            {"dims", v.rank_known ? json(v.dims) : json(nullptr)},
            {"constant", v.constant.has_value()},
            {"mem_offset", v.mem_offset}};
  bool symbolic = false;
  for (const std::string& p : v.dim_params) symbolic = symbolic || !p.empty();
  if (symbolic) j["dim_params"] = v.dim_params;
  return j;
}

void RestoreValue(const JsonField& j, Graph& g, std::set<std::string>& seen) {
  const std::string name = j["name"].String();
  if (!seen.insert(name).second) j["name"].Fail("the value \"" + name + "\" is listed twice");
  Value& v = g.GetOrAddValue(name);
  if (j["dtype"].Present()) {
    StatusOr<DType> t = ParseDType(j["dtype"].String());
    if (t.ok()) v.dtype = *t, v.dtype_known = true;
    else j["dtype"].Fail(t.status().message());
  }
  if (j["dims"].Present()) {
    v.dims = KeptDims(j["dims"]);
    v.rank_known = true;
  }
  v.dim_params.assign(v.dims.size(), "");
  if (j["dim_params"].Present()) {
    std::vector<std::string> params = j["dim_params"].Strings();
    if (params.size() != v.dims.size()) j["dim_params"].Fail("expected one name per dim");
    else v.dim_params = std::move(params);
  }
  // No data: the model file has it, and nothing reading a folder executes the graph.
  if (j["constant"].Bool()) v.constant = Tensor();
  v.mem_offset = j["mem_offset"].Int();
  if (v.mem_offset < -1) j["mem_offset"].Fail("expected an offset >= 0, or -1 when unplanned");
}

json NodeJson(const Node& n) {
  json attrs = json::object();
  for (const auto& [name, v] : n.attrs.all()) attrs[name] = KeptAttrJson(v);
  json j = {{"id", n.id},
            {"kind", NodeKindName(n.kind)},
            {"op_type", n.op_type},
            {"domain", n.domain},
            {"name", n.name},
            {"namespace", n.name_space},
            {"inputs", n.inputs},
            {"outputs", n.outputs},
            {"attrs", std::move(attrs)},
            {"fused_from", n.fused_from}};
  if (!n.executable) j["not_executable_reason"] = n.not_executable_reason;
  if (!n.layout_from.empty() || !n.layout_to.empty()) j["layout"] = {n.layout_from, n.layout_to};
  if (!n.note.empty()) j["note"] = n.note;
  if (!n.subgraphs.empty()) j["subgraphs"] = n.subgraphs;
  if (!n.branches.empty()) {
    json b = json::array();
    for (const Node::Branch& br : n.branches) b.push_back({{"name", br.name}, {"outputs", br.outputs}});
    j["branches"] = std::move(b);
  }
  if (n.branch_of >= 0) j["branch_of"] = {n.branch_of, n.branch};
  return j;
}

Node NodeFromJson(const JsonField& j, const Model& model) {
  Node n;
  n.layer = Layer::kCompiled;
  n.id = j["id"].Int();
  if (n.id < 0) j["id"].Fail("expected a node id >= 0");
  n.kind = NodeKindFromJson(j["kind"]);
  n.op_type = j["op_type"].String();
  n.domain = j["domain"].String();
  n.name = j["name"].String();
  n.name_space = j["namespace"].String();
  n.inputs = j["inputs"].Strings();
  n.outputs = j["outputs"].Strings();
  n.fused_from = KeptInts(j["fused_from"]);
  for (size_t i = 0; i < n.fused_from.size(); ++i) {
    if (!model.framework.FindNode(n.fused_from[i])) {
      j["fused_from"][i].Fail("names framework node " + std::to_string(n.fused_from[i]) +
                              ", which the model " + model.path + " does not have as imported here");
    }
  }
  RestoreAttrs(j["attrs"], model.framework.FindNode(n.id), n.attrs);
  if (j["not_executable_reason"].Present()) {
    n.executable = false;
    n.not_executable_reason = j["not_executable_reason"].String();
  }
  if (j["layout"].Present()) {
    n.layout_from = j["layout"][0].String();
    n.layout_to = j["layout"][1].String();
  }
  if (j["note"].Present()) n.note = j["note"].String();
  if (j["subgraphs"].Present()) n.subgraphs = j["subgraphs"].Strings();
  if (j["branches"].Present()) {
    for (size_t i = 0; i < j["branches"].Size(); ++i) {
      const JsonField b = j["branches"][i];
      n.branches.push_back({.name = b["name"].String(), .outputs = b["outputs"].Strings()});
    }
  }
  if (j["branch_of"].Present()) {
    n.branch_of = j["branch_of"][0].Int();
    n.branch = j["branch_of"][1].String();
  }
  return n;
}

json MemoryJson(const MemoryPlan& m) {
  return {{"planned", m.planned},
          {"arena_bytes", m.arena_bytes},
          {"no_reuse_bytes", m.no_reuse_bytes},
          {"max_live_bytes", m.max_live_bytes},
          {"planned_values", m.planned_values},
          {"unknown_size_values", m.unknown_size_values}};
}

MemoryPlan MemoryFromJson(const JsonField& j) {
  return {.planned = j["planned"].Bool(),
          .arena_bytes = j["arena_bytes"].Int(),
          .no_reuse_bytes = j["no_reuse_bytes"].Int(),
          .max_live_bytes = j["max_live_bytes"].Int(),
          .planned_values = j["planned_values"].Int(),
          .unknown_size_values = j["unknown_size_values"].Int()};
}

}  // namespace

json CompiledGraphJson(const Model& model) {
  const Graph& g = model.compiled;
  json values = json::array(), nodes = json::array(), removed = json::object();
  for (const std::string& name : g.value_order()) {
    if (const Value* v = g.FindValue(name)) values.push_back(ValueJson(*v));
  }
  for (const Node& n : g.nodes()) nodes.push_back(NodeJson(n));
  // The compiler's reason for each framework node that no compiled node stands for.
  for (const Node& f : model.framework.nodes()) {
    if (f.absorbed_into < 0) removed[std::to_string(f.id)] = f.not_executed_reason;
  }
  return {{"next_node_id", model.next_node_id},
          {"inputs", g.inputs()},
          {"outputs", g.outputs()},
          {"memory", MemoryJson(g.memory())},
          {"values", std::move(values)},
          {"nodes", std::move(nodes)},
          {"framework_removed", std::move(removed)}};
}

Status RestoreCompiledGraph(const JsonField& j, Model& model, const JsonFields& fields) {
  Graph g(Layer::kCompiled);
  std::set<std::string> seen;
  const JsonField values = j["values"], nodes = j["nodes"];
  for (size_t i = 0; i < values.Size() && fields.ok(); ++i) RestoreValue(values[i], g, seen);
  std::set<int64_t> ids;
  int64_t max_id = -1;
  for (size_t i = 0; i < nodes.Size() && fields.ok(); ++i) {
    Node n = NodeFromJson(nodes[i], model);
    if (!ids.insert(n.id).second) nodes[i]["id"].Fail("node id " + std::to_string(n.id) + " is used twice");
    max_id = std::max(max_id, n.id);
    g.mutable_nodes().push_back(std::move(n));
  }
  g.inputs() = j["inputs"].Strings();
  g.outputs() = j["outputs"].Strings();
  g.memory() = MemoryFromJson(j["memory"]);
  const int64_t next_id = j["next_node_id"].Int();
  if (next_id <= max_id) j["next_node_id"].Fail("expected more than the largest node id, " + std::to_string(max_id));
  std::map<int64_t, std::string> removed;
  const JsonField r = j["framework_removed"];
  if (r.Object()) {
    for (const auto& [key, reason] : r.raw().items()) {
      char* end = nullptr;
      const long long id = std::strtoll(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0' || !model.framework.FindNode(id)) {
        r[key].Fail("expected the id of one of the model's framework nodes");
        break;
      }
      removed[id] = r[key].String();
    }
  }
  OPSCOPE_RETURN_IF_ERROR(fields.status());
  for (const std::string& name : g.inputs()) g.GetOrAddValue(name).is_graph_input = true;
  // Producers, consumers and order, and the checks that come with them: a
  // value with two producers, an input nothing produces, a cycle.
  OPSCOPE_RETURN_IF_ERROR(g.Rebuild().WithContext(fields.file() + ": field " + j.path()));
  model.compiled = std::move(g);
  model.next_node_id = next_id;
  MapFrameworkToCompiled(model, removed);
  return Status::Ok();
}

}  // namespace opscope::graph
