// Small helpers the rewrite passes share to read a graph: which node makes a
// value, whether a node is a runnable op of a type, constant scalars.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <unordered_set>

#include "graph/ir/ir.h"
#include "ops/kernel_util.h"

namespace opscope::graph {

// A runnable node of ONNX's default domain with this op type.
inline bool IsOp(const Node* n, std::string_view op) {
  return n && n->executable && n->op_type == op && (n->domain.empty() || n->domain == "ai.onnx");
}

inline const Node* ProducerOf(const Graph& g, const std::string& value) {
  const Value* v = g.FindValue(value);
  return v && v->producer >= 0 ? g.FindNode(v->producer) : nullptr;
}

// The value of a one-element constant.
inline std::optional<double> ScalarConstant(const Graph& g, const std::string& value) {
  const Value* v = g.FindValue(value);
  if (!v || !v->constant || v->constant->numel() != 1) return std::nullopt;
  return v->constant->FlatGetAsDouble(0);
}

inline bool Near(std::optional<double> v, double want, double rel = 1e-4) {
  return v && std::fabs(*v - want) <= rel * std::fabs(want) + 1e-12;
}

// For a binary node with `operand` as one input: the other input's name
// ("" when the node does not read `operand` or reads it twice).
inline std::string OtherInput(const Node& n, const std::string& operand) {
  if (n.inputs.size() != 2) return "";
  if (n.inputs[0] == operand && n.inputs[1] != operand) return n.inputs[1];
  if (n.inputs[1] == operand && n.inputs[0] != operand) return n.inputs[0];
  return "";
}

inline bool IsFloatValue(const Graph& g, const std::string& value) {
  const Value* v = g.FindValue(value);
  return v && v->dtype_known && IsFloat(v->dtype);
}

// Node ids a pass already rewrote this round; a node joins one rewrite at most.
class UsedSet {
 public:
  bool AnyUsed(std::initializer_list<const Node*> nodes) const {
    for (const Node* n : nodes) {
      if (n && used_.count(n->id)) return true;
    }
    return false;
  }
  template <typename Range>
  bool AnyUsedIn(const Range& nodes) const {
    for (const Node* n : nodes) {
      if (used_.count(n->id)) return true;
    }
    return false;
  }
  void Use(const Node* n) { used_.insert(n->id); }

 private:
  std::unordered_set<int64_t> used_;
};

}  // namespace opscope::graph
