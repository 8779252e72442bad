#include "graph/runtime/stream_arenas.h"

#include <algorithm>

#include "graph/passes/arena.h"
#include "graph/runtime/happens_before.h"

namespace opscope::graph {

constexpr int64_t kArenaAlign = 64;  // a block's start: a cache line

bool IsKernelTask(const ScheduledTask& t) {
  return t.desc.kind != TaskKind::kMemcpyH2D && t.desc.kind != TaskKind::kMemcpyD2H;
}

std::vector<std::string> ReadsOf(const Graph& g, const ScheduledTask& t) {
  std::vector<std::string> reads;
  if (t.desc.kind == TaskKind::kMemcpyD2H) reads.push_back(t.value);
  if (!IsKernelTask(t)) return reads;
  if (const Node* n = g.FindNode(t.desc.op_node_id)) {
    for (const std::string& in : n->inputs) {
      if (!in.empty()) reads.push_back(in);
    }
  }
  return reads;
}

int64_t StreamArenas::total_bytes() const {
  int64_t total = 0;
  for (int64_t b : arena_bytes) total += b;
  return total;
}

namespace {

// The arena of values used on two streams (a branch's input, an output the
// copy stream copies): blocks handed from value to value, a block going to
// a value only once every task that used its last value is ordered before
// the new value's writer (HappensBefore), whatever the streams' timing. A
// block is taken whole (best fit by size) or a new one added at the end.
class SharedArena {
 public:
  explicit SharedArena(const HappensBefore& hb) : hb_(hb) {}

  // The offset of a block of `bytes` for a value written by task `writer`
  // and used by the tasks `users` (its writer and readers).
  int64_t Place(int64_t bytes, size_t writer, std::vector<size_t> users) {
    Block* best = nullptr;
    for (Block& b : blocks_) {
      if (b.bytes < bytes || (best != nullptr && b.bytes >= best->bytes)) continue;
      bool done = true;
      for (size_t u : b.users) done = done && hb_.Before(u, writer);
      if (done) best = &b;
    }
    if (best == nullptr) {
      blocks_.push_back({size_, bytes, {}});
      size_ += bytes;
      best = &blocks_.back();
    }
    best->users = std::move(users);
    return best->offset;
  }
  int64_t size() const { return size_; }

 private:
  struct Block {
    int64_t offset, bytes;
    std::vector<size_t> users;  // of the value in it now
  };
  const HappensBefore& hb_;
  std::vector<Block> blocks_;
  int64_t size_ = 0;
};

}  // namespace

StreamArenas PlanStreamArenas(const Graph& g, const Schedule& s) {
  // Each value's one stream (-1 once it is used on two), its writer, its
  // readers (the last of them last), and the graph inputs.
  std::unordered_map<std::string, int> stream_of;
  std::unordered_map<std::string, size_t> writer, last_reader;
  std::unordered_map<std::string, std::vector<size_t>> readers;
  auto on = [&](const std::string& v, int stream) {
    auto [it, added] = stream_of.emplace(v, stream);
    if (!added && it->second != stream) it->second = -1;
  };
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    const ScheduledTask& t = s.tasks[i];
    for (const std::string& v : ReadsOf(g, t)) {
      on(v, t.desc.stream_id);
      last_reader[v] = i;
      readers[v].push_back(i);
    }
    if (t.desc.kind == TaskKind::kMemcpyH2D) writer.emplace(t.value, i);  // a graph input: never placed
    if (!IsKernelTask(t)) continue;
    if (const Node* n = g.FindNode(t.desc.op_node_id)) {
      for (const std::string& out : n->outputs) {
        if (out.empty()) continue;
        on(out, t.desc.stream_id);
        writer.emplace(out, i);
      }
    }
  }
  StreamArenas plan;
  const int streams = std::max(1, s.num_streams());
  plan.arena_bytes.assign(static_cast<size_t>(streams) + 1, 0);
  std::vector<Arena> arenas(static_cast<size_t>(streams));
  const HappensBefore hb(s);
  SharedArena shared(hb);
  // After task i: the placed values it was the last to read (or that nothing reads).
  std::vector<std::vector<std::string>> frees(s.tasks.size());
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    const ScheduledTask& t = s.tasks[i];
    if (IsKernelTask(t)) {
      const Node* n = g.FindNode(t.desc.op_node_id);
      for (const std::string& out : n != nullptr ? n->outputs : std::vector<std::string>{}) {
        const Value* v = out.empty() ? nullptr : g.FindValue(out);
        const int stream = t.desc.stream_id;
        if (v == nullptr || v->constant || stream < 0 || stream >= streams || writer.at(out) != i ||
            plan.places.count(out) > 0) {
          continue;
        }
        const int64_t bytes = v->bytes();
        if (bytes <= 0 || bytes > (int64_t{1} << 40)) continue;  // unknown, empty, or no arena's
        const int64_t block = (bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
        if (stream_of.at(out) != stream) {  // used on two streams
          std::vector<size_t> users = readers[out];
          users.push_back(i);
          plan.places[out] = {streams, shared.Place(block, i, std::move(users)), block};
          continue;
        }
        plan.places[out] = {stream, arenas[static_cast<size_t>(stream)].Allocate(block), block};
        auto last = last_reader.find(out);
        frees[last != last_reader.end() && last->second > i ? last->second : i].push_back(out);
      }
    }
    for (const std::string& v : frees[i]) {
      const ValuePlace& p = plan.places.at(v);
      arenas[static_cast<size_t>(p.stream)].Free(p.offset, p.bytes);
    }
  }
  for (int k = 0; k < streams; ++k) plan.arena_bytes[static_cast<size_t>(k)] = arenas[static_cast<size_t>(k)].size();
  plan.arena_bytes[static_cast<size_t>(streams)] = shared.size();
  return plan;
}

}  // namespace opscope::graph
