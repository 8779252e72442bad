// memory_planning: every intermediate value (made by a node, not a graph
// output, not a constant) gets an offset in one arena. Values are placed in
// execution order; a value's block returns to the free list after its last
// reader ran, and a new value takes the smallest free block that fits
// (best fit), growing the arena only when none does (arena.h).
#include <algorithm>
#include <limits>
#include <map>

#include "graph/passes/arena.h"
#include "graph/passes/passes.h"

namespace opscope::graph {
namespace {

constexpr int64_t kAlign = 64;

// A value's block, aligned; an error when the value alone is too large for
// an int64 arena (ONNX's inference takes a Reshape's shape as it is, so a
// declared intermediate can reach 2^63 bytes).
StatusOr<int64_t> BlockSize(const Value& v) {
  const int64_t bytes = std::max<int64_t>(v.bytes(), 1);
  if (bytes > std::numeric_limits<int64_t>::max() - (kAlign - 1)) {
    return InvalidArgumentError("value '" + v.name + "' " + Shape(v.dims).ToString() + " needs " +
                                std::to_string(bytes) + " bytes, more than an arena can hold");
  }
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// a + b, or an error naming the value that made the arena total overflow.
StatusOr<int64_t> CheckedAdd(int64_t a, int64_t b, const Value& v, const char* total) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return InvalidArgumentError("the " + std::string(total) + " overflows int64 bytes at value '" +
                                v.name + "' " + Shape(v.dims).ToString() + " (" + std::to_string(b) + " bytes)");
  }
  return sum;
}

StatusOr<int> PlanMemory(CompileContext& ctx) {
  Graph& g = ctx.graph();
  MemoryPlan plan;
  plan.planned = true;
  const auto& nodes = g.nodes();
  std::unordered_map<int64_t, size_t> step;
  for (size_t i = 0; i < nodes.size(); ++i) step[nodes[i].id] = i;
  // last_use[i]: values whose block frees after step i.
  std::vector<std::vector<std::string>> frees(nodes.size());
  for (const std::string& name : g.value_order()) {
    Value* v = g.FindValue(name);
    v->mem_offset = -1;
    if (v->producer < 0 || v->constant || v->is_graph_output) continue;
    if (v->bytes() < 0) {
      ++plan.unknown_size_values;
      continue;
    }
    size_t last = step.at(v->producer);
    for (int64_t c : v->consumers) last = std::max(last, step.at(c));
    frees[last].push_back(name);
  }
  Arena arena;
  int64_t live = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& out : nodes[i].outputs) {
      Value* v = out.empty() ? nullptr : g.FindValue(out);
      if (!v || v->producer != nodes[i].id || v->constant || v->is_graph_output || v->bytes() < 0) continue;
      OPSCOPE_ASSIGN_OR_RETURN(const int64_t size, BlockSize(*v));
      // The arena never exceeds the sum of all blocks, so checking that sum
      // keeps every offset and the arena size inside int64.
      OPSCOPE_ASSIGN_OR_RETURN(plan.no_reuse_bytes, CheckedAdd(plan.no_reuse_bytes, size, *v, "sum of intermediates"));
      v->mem_offset = arena.Allocate(size);
      live += size;
      plan.max_live_bytes = std::max(plan.max_live_bytes, live);
      ++plan.planned_values;
    }
    for (const std::string& name : frees[i]) {
      const Value* v = g.FindValue(name);
      OPSCOPE_ASSIGN_OR_RETURN(const int64_t size, BlockSize(*v));
      arena.Free(v->mem_offset, size);
      live -= size;
    }
  }
  plan.arena_bytes = arena.size();
  g.memory() = plan;
  return static_cast<int>(plan.planned_values);
}

}  // namespace

Pass MemoryPlanningPass() {
  return Pass{"memory_planning", "arena offsets for intermediates, best-fit reuse; peak bytes with and without reuse",
              PlanMemory};
}

}  // namespace opscope::graph
