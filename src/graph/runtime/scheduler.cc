#include "graph/runtime/scheduler.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace opscope::graph {

bool IsFoldedConstantNode(const Graph& g, const Node& n) {
  return n.op_type == "Constant" && !n.outputs.empty() && g.IsConstant(n.outputs[0]);
}

namespace {

class Builder {
 public:
  Builder(const Graph& g, int compute_streams, bool replay) : g_(g), replay_(replay), load_(compute_streams, 0) {
    s_.compute_streams = compute_streams;
    s_.copy_stream = compute_streams;
  }

  Status Build() {
    for (const std::string& in : g_.inputs()) {
      const Value* v = g_.FindValue(in);
      if (!v) return InternalError("graph input '" + in + "' has no value");
      if (v->constant) continue;  // an input with an initializer: a constant
      ScheduledTask& t = Add(TaskKind::kMemcpyH2D, s_.copy_stream, -1);
      t.value = in;
      t.op_type = "memcpy";
      t.desc.kernel_name = "memcpy_h2d";
      t.desc.label = "inserted: H2D copy of input '" + in + "'";
      producer_task_[in] = t.desc.task_id;
    }
    for (const Node& n : g_.nodes()) {
      if (IsFoldedConstantNode(g_, n)) continue;
      if (!n.executable && !replay_) {
        return FailedPreconditionError("node '" + n.name + "' (" + n.op_type + ") cannot run: " +
                                       n.not_executable_reason);
      }
      int stream = PickStream(n);
      ScheduledTask& t = Add(n.kind == NodeKind::kTransdata ? TaskKind::kTransdata : TaskKind::kKernel, stream, n.id);
      t.op_type = n.op_type;
      t.node_name = n.name;
      const int64_t id = t.desc.task_id;
      for (const std::string& in : n.inputs) AddDep(id, in);
      for (const std::string& out : n.outputs) {
        if (!out.empty()) producer_task_[out] = id;
      }
      ++load_[stream];
    }
    for (const std::string& out : g_.outputs()) {
      if (!producer_task_.count(out)) {
        const Value* v = g_.FindValue(out);
        if (v && v->constant) continue;  // a constant output needs no copy from the device
        return InternalError("graph output '" + out + "' has no producing task");
      }
      ScheduledTask& t = Add(TaskKind::kMemcpyD2H, s_.copy_stream, -1);
      t.value = out;
      t.op_type = "memcpy";
      t.desc.kernel_name = "memcpy_d2h";
      t.desc.label = "inserted: D2H copy of output '" + out + "'";
      AddDep(t.desc.task_id, out);
    }
    return Status::Ok();
  }

  Schedule Take() { return std::move(s_); }

 private:
  ScheduledTask& Add(TaskKind kind, int stream, int64_t node) {
    ScheduledTask t;
    t.desc.task_id = static_cast<int64_t>(s_.tasks.size());
    t.desc.kind = kind;
    t.desc.stream_id = stream;
    t.desc.op_node_id = node;
    s_.tasks.push_back(std::move(t));
    return s_.tasks.back();
  }

  // Whether a node starting a branch is worth a stream of its own: a dense
  // op, or one writing at least a megabyte (tens of microseconds here). A
  // lighter one (attention's Slices, Reshapes, Transposes) would cost less than
  // the cross-stream event and the other stream thread's wake-up around it.
  bool WorthAStream(const Node& n) const {
    static const char* const kDense[] = {"Conv", "ConvTranspose", "MatMul", "Gemm", "FusedConv", "FusedGemm",
                                         "FusedMatMul"};
    for (const char* op : kDense) {
      if (n.op_type == op) return true;
    }
    int64_t bytes = 0;
    for (const std::string& out : n.outputs) {
      const Value* v = out.empty() ? nullptr : g_.FindValue(out);
      if (v != nullptr) bytes += std::max<int64_t>(v->bytes(), 0);
    }
    return bytes >= (int64_t{1} << 20);
  }

  // The stream of the latest producer of one of n's inputs that no node
  // continues yet (a chain, a branch's first consumer, a join after its last
  // branch). Else a branch: a light one stays on its latest producer's
  // stream, a heavy one takes the compute stream with the fewest tasks.
  int PickStream(const Node& n) {
    int64_t latest = -1, latest_any = -1;
    for (const std::string& in : n.inputs) {
      if (in.empty() || g_.IsConstant(in)) continue;
      auto it = producer_task_.find(in);
      if (it == producer_task_.end()) continue;
      if (s_.tasks[it->second].desc.stream_id >= s_.compute_streams) continue;  // a copy
      latest_any = std::max(latest_any, it->second);
      if (!continued_.count(it->second)) latest = std::max(latest, it->second);
    }
    if (latest >= 0) {
      continued_.insert(latest);
      return s_.tasks[latest].desc.stream_id;
    }
    if (latest_any >= 0 && !WorthAStream(n)) return s_.tasks[latest_any].desc.stream_id;
    int best = 0;
    for (int s = 1; s < static_cast<int>(load_.size()); ++s) {
      if (load_[s] < load_[best]) best = s;
    }
    return best;
  }

  void AddDep(int64_t task, const std::string& value) {
    auto it = producer_task_.find(value);
    if (value.empty() || it == producer_task_.end()) return;  // constants need no task
    ScheduledTask& t = s_.tasks[task];
    for (int64_t d : t.deps) {
      if (d == it->second) return;
    }
    t.deps.push_back(it->second);
    ScheduledTask& p = s_.tasks[it->second];
    if (p.desc.stream_id == t.desc.stream_id) return;
    if (p.desc.event_after < 0) p.desc.event_after = s_.num_events++;
    t.wait_events.push_back(p.desc.event_after);
    if (t.desc.event_before < 0) t.desc.event_before = p.desc.event_after;
  }

  const Graph& g_;
  const bool replay_;
  Schedule s_;
  std::vector<int> load_;
  std::unordered_map<std::string, int64_t> producer_task_;
  std::unordered_set<int64_t> continued_;  // producer tasks a consumer already continues on their stream
};

}  // namespace

StatusOr<Schedule> ScheduleGraph(const Graph& compiled, const ScheduleOptions& options) {
  if (options.compute_streams < 1 || options.compute_streams > 64) {
    return InvalidArgumentError("streams: expected 1 to 64 compute streams, got " +
                                std::to_string(options.compute_streams));
  }
  Builder b(compiled, options.compute_streams, options.replay);
  OPSCOPE_RETURN_IF_ERROR(b.Build());
  return b.Take();
}

std::string StreamName(const Schedule& s, int stream_id) {
  if (stream_id >= 0 && static_cast<size_t>(stream_id) < s.stream_names.size()) return s.stream_names[stream_id];
  if (stream_id == s.copy_stream) return "copy";
  return "compute " + std::to_string(stream_id);
}

}  // namespace opscope::graph
