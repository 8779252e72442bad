// memory_planning: every intermediate value (made by a node, not a graph
// output, not a constant) gets an offset in one arena. Values are placed in
// execution order; a value's block returns to the free list after its last
// reader ran, and a new value takes the smallest free block that fits
// (best fit), growing the arena only when none does.
#include <algorithm>
#include <limits>
#include <map>

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

class Arena {
 public:
  int64_t Allocate(int64_t size) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= size && (best == free_.end() || it->second < best->second)) best = it;
    }
    if (best != free_.end()) {
      const int64_t offset = best->first, left = best->second - size;
      free_.erase(best);
      if (left > 0) free_[offset + size] = left;
      return offset;
    }
    // A free block at the end of the arena grows instead of leaving a hole.
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == size_) {
        const int64_t offset = last->first;
        free_.erase(last);
        size_ = offset + size;
        return offset;
      }
    }
    const int64_t offset = size_;
    size_ += size;
    return offset;
  }

  void Free(int64_t offset, int64_t size) {
    auto it = free_.emplace(offset, size).first;
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

  int64_t size() const { return size_; }

 private:
  std::map<int64_t, int64_t> free_;  // offset -> size
  int64_t size_ = 0;
};

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
