#include "graph/ort/ort_mapping.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace opscope::graph {
namespace {

enum class Rule { kTensorName, kLayout, kNodeName };

// What a compiled tensor is in the framework graph, and how that was found.
struct Tie {
  std::string framework;
  std::string how;
  Rule rule = Rule::kTensorName;
};
using Ties = std::unordered_map<std::string, Tie>;

constexpr char kNchwcSuffix[] = "_nchwc";

std::string Quote(const std::string& s) { return "'" + s + "'"; }
std::string Describe(const Node& n) { return n.op_type + " " + Quote(n.name); }

bool IsReorder(const Node& n) { return n.op_type == "ReorderInput" || n.op_type == "ReorderOutput"; }


// A tensor the framework graph computes or takes in, which a compiled tensor can be.
bool Computed(const Graph& f, const std::string& name) {
  const Value* v = f.FindValue(name);
  return v != nullptr && !v->constant && (v->producer >= 0 || v->is_graph_input);
}

// The one node reading `tensor` when it is not also a graph output: a fused
// chain can only run on through such a node.
const Node* SoleReader(const Graph& g, const std::string& tensor) {
  const Value* v = g.FindValue(tensor);
  if (v == nullptr || v->is_graph_output || v->consumers.size() != 1) return nullptr;
  return g.FindNode(v->consumers[0]);
}

bool Reads(const Node& n, const std::string& tensor) {
  return std::find(n.inputs.begin(), n.inputs.end(), tensor) != n.inputs.end();
}

// Rule 2, both ways along each reorder: the tensor on one side is the other's in another layout.
void TieThroughReorders(const Graph& c, Ties& ties) {
  auto across = [&](const Node& n) {
    if (!IsReorder(n) || n.inputs.empty() || n.outputs.empty()) return;
    const std::string &in = n.inputs[0], &out = n.outputs[0];
    const bool has_in = ties.count(in) > 0, has_out = ties.count(out) > 0;
    if (has_in == has_out) return;
    const std::string& known = has_in ? in : out;
    const std::string& other = has_in ? out : in;
    const std::string framework = ties[known].framework;
    ties[other] = {framework,
                   Quote(other) + " is the framework's " + Quote(framework) + " in another layout, through " +
                       Describe(n),
                   Rule::kLayout};
  };
  for (auto it = c.nodes().rbegin(); it != c.nodes().rend(); ++it) across(*it);
  for (const Node& n : c.nodes()) across(n);
}

// Rule 3: a node named after the framework tensor it computes, carried on
// through what onnxruntime fused after it (the Add of a Sum input, then the
// activation), which the name, given before those fusions, does not say.
void TieByNodeNames(const Graph& f, const Graph& c, Ties& ties) {
  std::unordered_map<std::string, const Node*> framework_by_name;
  for (const Node& n : f.nodes()) framework_by_name.emplace(n.name, &n);
  for (const Node& n : c.nodes()) {
    if (n.outputs.empty() || ties.count(n.outputs[0]) > 0) continue;
    std::string base = n.name;
    const size_t suffix = sizeof(kNchwcSuffix) - 1;
    if (base.size() > suffix && base.compare(base.size() - suffix, suffix, kNchwcSuffix) == 0) {
      base.resize(base.size() - suffix);
    }
    if (!Computed(f, base)) {
      // Or the name of the framework node it still is (onnxruntime kept the
      // node, in another layout): its outputs are that node's.
      const auto it = framework_by_name.find(n.name);
      const Node* same = it != framework_by_name.end() ? it->second : nullptr;
      if (same == nullptr || same->op_type != n.op_type || same->outputs.size() != n.outputs.size()) continue;
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        if (n.outputs[k].empty() || ties.count(n.outputs[k]) > 0 || !Computed(f, same->outputs[k])) continue;
        ties[n.outputs[k]] = {same->outputs[k], "named as the framework " + Describe(*same), Rule::kNodeName};
      }
      continue;
    }
    std::string tensor = base, how = "named after the framework's tensor " + Quote(base);
    const bool conv = n.op_type == "Conv" || n.op_type == "FusedConv";
    if (conv && n.inputs.size() > 3 && ties.count(n.inputs[3]) > 0) {
      const Node* add = SoleReader(f, tensor);
      if (add != nullptr && (add->op_type == "Add" || add->op_type == "Sum") &&
          Reads(*add, ties[n.inputs[3]].framework) && !add->outputs.empty()) {
        tensor = add->outputs[0];
        how += ", then the " + Describe(*add) + " of its Sum input";
      }
    }
    const AttrValue* a = n.attrs.Find("activation");
    const std::string* activation = a != nullptr ? std::get_if<std::string>(a) : nullptr;
    const Value* v = f.FindValue(tensor);
    const Node* producer = v != nullptr ? f.FindNode(v->producer) : nullptr;
    if (activation != nullptr && producer != nullptr && producer->op_type != *activation) {
      const Node* act = SoleReader(f, tensor);
      if (act != nullptr && act->op_type == *activation && !act->outputs.empty()) {
        tensor = act->outputs[0];
        how += ", then its activation " + Describe(*act);
      }
    }
    ties[n.outputs[0]] = {tensor, how, Rule::kNodeName};
  }
}

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t{0}); }
  size_t Find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Join(size_t a, size_t b) { parent[Find(a)] = Find(b); }
};

// Compiled nodes joined by the tensors no rule tied: each region computes
// together what lies between its tied inputs and outputs.
std::vector<std::vector<size_t>> Regions(const Graph& c, const Ties& ties) {
  std::unordered_map<int64_t, size_t> pos;
  for (size_t i = 0; i < c.nodes().size(); ++i) pos[c.nodes()[i].id] = i;
  UnionFind uf(c.nodes().size());
  for (const std::string& name : c.value_order()) {
    const Value* v = c.FindValue(name);
    if (v->constant || v->producer < 0 || ties.count(name) > 0) continue;
    for (int64_t consumer : v->consumers) uf.Join(pos.at(v->producer), pos.at(consumer));
  }
  std::vector<std::vector<size_t>> regions;
  std::unordered_map<size_t, size_t> region_of_root;
  for (size_t i = 0; i < c.nodes().size(); ++i) {
    auto [it, added] = region_of_root.emplace(uf.Find(i), regions.size());
    if (added) regions.emplace_back();
    regions[it->second].push_back(i);
  }
  return regions;
}

struct Mapper {
  Graph& f;
  Graph& c;
  Ties ties;
  std::set<std::string> boundary;               // framework tensors a compiled tensor is (or a constant there)
  std::unordered_map<int64_t, int64_t> owner;   // framework node -> compiled node
  OrtMapping stats;

  // The framework nodes behind `outputs`, back to the tied tensors, that no region took yet.
  std::vector<int64_t> Claim(const std::vector<std::string>& outputs, int64_t compiled_id) {
    std::vector<int64_t> taken, stack;
    for (const std::string& t : outputs) {
      const Value* v = f.FindValue(t);
      if (v != nullptr && v->producer >= 0) stack.push_back(v->producer);
    }
    while (!stack.empty()) {
      const int64_t id = stack.back();
      stack.pop_back();
      if (owner.count(id) > 0) continue;
      owner[id] = compiled_id;
      taken.push_back(id);
      for (const std::string& in : f.FindNode(id)->inputs) {
        if (in.empty() || boundary.count(in) > 0) continue;
        const Value* v = f.FindValue(in);
        if (v != nullptr && v->producer >= 0) stack.push_back(v->producer);
      }
    }
    return taken;
  }

  void MapRegion(const std::vector<size_t>& region) {
    std::vector<Node*> nodes;
    for (size_t i : region) nodes.push_back(&c.mutable_nodes()[i]);
    const bool reorders_only = std::all_of(nodes.begin(), nodes.end(), [](const Node* n) { return IsReorder(*n); });
    std::vector<std::string> outputs, inputs;
    for (const Node* n : nodes) {
      for (const std::string& o : n->outputs) {
        if (auto it = ties.find(o); it != ties.end()) outputs.push_back(it->second.framework);
      }
      for (const std::string& in : n->inputs) {
        auto it = ties.find(in);
        if (it == ties.end()) continue;
        const std::string q = Quote(it->second.framework);
        if (std::find(inputs.begin(), inputs.end(), q) == inputs.end()) inputs.push_back(q);
      }
    }
    std::vector<int64_t> taken = reorders_only ? std::vector<int64_t>{} : Claim(outputs, nodes.front()->id);
    // In graph order, for the rules below and for stable fused_from lists.
    std::sort(taken.begin(), taken.end());
    if (nodes.size() == 1) {
      Node& n = *nodes.front();
      n.fused_from = taken;
      // The first output a rule tied says how (a node with several outputs may have only some tied).
      auto tie = ties.end();
      for (const std::string& o : n.outputs) {
        if (tie == ties.end()) tie = ties.find(o);
      }
      if (taken.empty()) {
        n.mapped_by = "inserted by onnxruntime" + std::string(IsReorder(n) ? ": a layout conversion" : "");
        ++stats.inserted;
      } else if (tie != ties.end()) {
        n.mapped_by = "by its output: " + tie->second.how;
        ++(tie->second.rule == Rule::kTensorName ? stats.by_tensor_name
           : tie->second.rule == Rule::kLayout   ? stats.by_layout
                                                 : stats.by_node_name);
      }
      return;
    }
    // Several compiled nodes share the region's framework nodes.
    std::string between = "one of " + std::to_string(nodes.size()) + " onnxruntime nodes";
    if (!inputs.empty() || !outputs.empty()) {
      std::vector<std::string> quoted_out;
      for (const std::string& o : outputs) quoted_out.push_back(Quote(o));
      auto join = [](const std::vector<std::string>& v) {
        std::string s;
        for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
        return s.empty() ? std::string("nothing tied") : s;
      };
      between += " computing " + join(quoted_out) + " from " + join(inputs);
    }
    // onnxruntime names a node it made after the one it replaced: the same
    // name, or it with "/<fusion>" or "_<what it is>" appended.
    auto named_after = [](const Node& cn, const Node& fn) {
      if (cn.name == fn.name) return 2;
      if (cn.name.size() > fn.name.size() && cn.name.compare(0, fn.name.size(), fn.name) == 0 &&
          (cn.name[fn.name.size()] == '/' || cn.name[fn.name.size()] == '_')) {
        return 1;
      }
      return 0;
    };
    // The main node: one named after a framework node of the region that
    // computes (not a reshape or a reorder), else the first that computes.
    Node* main = nullptr;
    for (Node* cn : nodes) {
      for (int64_t id : taken) {
        if (main == nullptr && !IsShapeOrLayoutOp(cn->op_type) && named_after(*cn, *f.FindNode(id)) > 0) main = cn;
      }
    }
    if (main == nullptr) {
      auto it = std::find_if(nodes.begin(), nodes.end(), [](const Node* n) { return !IsShapeOrLayoutOp(n->op_type); });
      main = it != nodes.end() ? *it : nodes.front();
    }
    std::unordered_map<const Node*, std::string> why;
    for (int64_t id : taken) {
      const Node& fn = *f.FindNode(id);
      Node* to = nullptr;
      std::string rule;
      for (Node* cn : nodes) {
        for (const std::string& o : cn->outputs) {
          auto it = ties.find(o);
          if (to == nullptr && it != ties.end() && cn->op_type == fn.op_type &&
              std::find(fn.outputs.begin(), fn.outputs.end(), it->second.framework) != fn.outputs.end()) {
            to = cn, rule = "its output is the framework " + Describe(fn) + "'s";
          }
        }
      }
      for (int strength : {2, 1}) {
        for (Node* cn : nodes) {
          if (to == nullptr && named_after(*cn, fn) == strength) to = cn, rule = "named after the framework " + Describe(fn);
        }
      }
      if (to == nullptr) to = main, rule = "the region's main node";
      to->fused_from.push_back(id);
      owner[id] = to->id;
      if (why.count(to) == 0) why[to] = rule;
    }
    for (Node* cn : nodes) {
      if (cn->fused_from.empty()) {
        cn->mapped_by = "inserted by onnxruntime beside " + Describe(*main) + " (" + between + ")";
        ++stats.inserted;
      } else {
        cn->mapped_by = between + "; " + why[cn];
        ++stats.in_region;
      }
    }
  }
};

void MarkKinds(Graph& c) {
  for (Node& n : c.mutable_nodes()) {
    n.executable = true;  // onnxruntime ran it, whatever opscope can run
    n.not_executable_reason.clear();
    if (IsReorder(n)) {
      const AttrValue* a = n.attrs.Find("channels_last");
      const int64_t* last = a != nullptr ? std::get_if<int64_t>(a) : nullptr;
      const std::string plain = last != nullptr && *last != 0 ? "NHWC" : "NCHW";
      n.kind = NodeKind::kTransdata;
      n.layout_from = n.op_type == "ReorderInput" ? plain : "NCHWc";
      n.layout_to = n.op_type == "ReorderInput" ? "NCHWc" : plain;
    } else if (n.fused_from.size() > 1) {
      n.kind = NodeKind::kFused;
    }
  }
}

}  // namespace

OrtMapping MapOrtGraph(Model& model) {
  Mapper m{.f = model.framework, .c = model.compiled};
  for (Node& n : m.c.mutable_nodes()) {
    n.fused_from.clear();
    n.mapped_by.clear();
  }
  for (const std::string& name : m.c.value_order()) {
    const Value* v = m.c.FindValue(name);
    if (v->constant) {
      m.boundary.insert(name);  // folded there: what produced it in the framework graph never ran
    } else if (Computed(m.f, name)) {
      m.ties[name] = {name, Quote(name) + " is the framework's tensor of that name", Rule::kTensorName};
    }
  }
  TieThroughReorders(m.c, m.ties);
  TieByNodeNames(m.f, m.c, m.ties);
  TieThroughReorders(m.c, m.ties);
  for (const auto& [tensor, tie] : m.ties) m.boundary.insert(tie.framework);
  for (const std::vector<size_t>& region : Regions(m.c, m.ties)) m.MapRegion(region);
  MarkKinds(m.c);

  for (Node& fn : m.f.mutable_nodes()) {
    fn.executable = true;  // what opscope could run does not matter to an onnxruntime run
    fn.not_executable_reason.clear();
    fn.not_executed_reason.clear();
    fn.executed = true;
    auto it = m.owner.find(fn.id);
    if (it != m.owner.end()) {
      fn.absorbed_into = it->second;
      continue;
    }
    fn.absorbed_into = -1;
    fn.executed = false;
    const bool folded = !fn.outputs.empty() && std::all_of(fn.outputs.begin(), fn.outputs.end(), [&](const auto& o) {
      const Value* v = m.c.FindValue(o);
      return v != nullptr && v->constant;
    });
    if (folded) {
      fn.not_executed_reason = "folded by onnxruntime: " + Quote(fn.outputs[0]) + " is a constant of the optimized model";
      ++m.stats.folded;
    } else {
      fn.not_executed_reason = "removed by onnxruntime: no node of the optimized model computes " +
                               Quote(fn.outputs.empty() ? fn.name : fn.outputs[0]);
    }
    ++m.stats.removed;
  }
  return m.stats;
}

}  // namespace opscope::graph
