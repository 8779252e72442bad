#include "graph/runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <unordered_map>

#include "capture/dispatcher.h"
#include "core/clock.h"
#include "core/file_util.h"
#include "core/frozen_buffer.h"
#include "graph/runtime/iteration_plan.h"
#include "graph/runtime/run_races.h"
#include "graph/runtime/stream_arenas.h"
#include "opscope/fill.h"
#include "opscope/npy.h"

namespace opscope::graph {

namespace {

StatusOr<std::map<std::string, Tensor>> PrepareInputs(const Graph& g, const Schedule& s, const ExecuteOptions& o) {
  std::map<std::string, Tensor> fed;
  for (const auto& [name, t] : o.inputs) {
    const Value* v = g.FindValue(name);
    if (!v || !v->is_graph_input || v->constant) {
      std::string known;
      for (const std::string& in : g.inputs()) {
        const Value* iv = g.FindValue(in);
        if (iv && !iv->constant) known += (known.empty() ? "" : ", ") + in;
      }
      return InvalidArgumentError("input_files: the model has no graph input '" + name + "' (inputs: " + known + ")");
    }
  }
  uint64_t index = 0;
  for (const ScheduledTask& t : s.tasks) {
    if (t.desc.kind != TaskKind::kMemcpyH2D) continue;
    const Value* v = g.FindValue(t.value);
    auto it = o.inputs.find(t.value);
    if (it != o.inputs.end()) {
      const Tensor& given = it->second;
      if (v->dtype_known && given.dtype() != v->dtype) {
        return InvalidArgumentError("input_files: input '" + t.value + "' expects " + DTypeName(v->dtype) + ", got " +
                                    given.Describe());
      }
      bool shape_ok = !v->rank_known || static_cast<int>(v->dims.size()) == given.rank();
      for (int d = 0; shape_ok && v->rank_known && d < given.rank(); ++d) {
        shape_ok = v->dims[d] < 0 || v->dims[d] == given.dim(d);
      }
      if (!shape_ok) {
        return InvalidArgumentError("input_files: input '" + t.value + "' expects shape " + Shape(v->dims).ToString() +
                                    ", got " + given.Describe());
      }
      OPSCOPE_ASSIGN_OR_RETURN(Tensor host, ToHost(given));
      OPSCOPE_ASSIGN_OR_RETURN(fed[t.value], host.Contiguous());
    } else {
      if (!v->shape_known() || !v->dtype_known) {
        return InvalidArgumentError("input '" + t.value + "' has unknown shape " + Shape(v->dims).ToString() +
                                    ": give it with `input_files`");
      }
      StatusOr<Tensor> made = Tensor::Empty(v->dtype, v->shape());
      if (!made.ok()) return std::move(made).status().WithContext("graph input '" + t.value + "'");
      Tensor x = std::move(made).value();
      FillSpec spec{.kind = IsFloat(v->dtype) ? FillKind::kUniform : FillKind::kInt, .seed = o.seed + index};
      if (!IsFloat(v->dtype)) spec.low = 0, spec.high = 3;
      OPSCOPE_RETURN_IF_ERROR(Fill(x, spec).WithContext("input '" + t.value + "'"));
      fed[t.value] = std::move(x);
    }
    ++index;
  }
  return fed;
}

// The schedule's arenas (stream_arenas.h) and each stream's memory for
// its arena, made once and used by every iteration.
struct PlacedArenas {
  StreamArenas plan;
  std::vector<std::shared_ptr<Buffer>> memory;  // by schedule stream id
};

// Memory of its own for what the arenas do not hold (a graph input's copy
// on the device, an output's copy to the host, a value whose size was not
// known when the arenas were planned),
// kept from one iteration to the next: allocating it anew each iteration
// was a sixth of the host's time queuing the encoder once the calls were
// settled (perf). By value slot, and by task for the copies to the host.
struct KeptMemory {
  std::vector<Tensor> values, to_host;

  // `kept` again where it has the dtype and shape asked for and nothing but
  // this holds it now (the iteration that used it is over); else new memory, kept.
  static StatusOr<Tensor> Reuse(Tensor& kept, DType dtype, const Shape& shape, Device* device) {
    if (kept.defined() && kept.dtype() == dtype && kept.shape() == shape && kept.buffer().use_count() == 1) {
      return kept;
    }
    OPSCOPE_ASSIGN_OR_RETURN(kept, EmptyOnDevice(dtype, shape, device));
    return kept;
  }
};

// One iteration's device objects and results.
class Run {
 public:
  // `settled`: by task, the dispatcher's settled calls (SettledCall),
  // kept from iteration to iteration.
  Run(const IterationPlan& plan, Schedule& s, Device* device, std::vector<std::unique_ptr<Stream>>& streams,
      std::vector<std::unique_ptr<Event>>& events, const PlacedArenas* arenas,
      std::vector<std::shared_ptr<const SettledCall>>& settled, KeptMemory& kept)
      : plan_(plan), s_(s), device_(device), streams_(streams), events_(events), arenas_(arenas),
        settled_(settled), kept_(kept), env_(plan.names.size()), producer_(plan.names.size(), -1) {}

  StatusOr<std::vector<ClockAnchor>> Anchor() {
    std::vector<ClockAnchor> anchors;
    for (size_t i = 0; i < streams_.size(); ++i) {
      OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> ev, device_->CreateEvent());
      ClockAnchor a;
      a.stream_id = static_cast<int>(i);
      a.host_before_ns = SteadyNowNs();
      OPSCOPE_RETURN_IF_ERROR(streams_[i]->Record(*ev));
      // The stream is idle, so the host runs the record itself inside
      // Synchronize: the bracket holds no thread wake-up.
      OPSCOPE_RETURN_IF_ERROR(streams_[i]->Synchronize());
      a.host_after_ns = SteadyNowNs();
      OPSCOPE_ASSIGN_OR_RETURN(a.device_ns, ev->TimestampNs());
      anchors.push_back(a);
    }
    return anchors;
  }

  Status Enqueue(const std::map<std::string, Tensor>& inputs) {
    start_.resize(s_.tasks.size());
    end_.resize(s_.tasks.size());
    async_launches_.resize(s_.tasks.size());
    for (ScheduledTask& t : s_.tasks) {
      Stream& stream = *streams_[t.desc.stream_id];
      const PlannedTask& p = plan_.tasks[t.desc.task_id];
      for (int64_t e : t.wait_events) OPSCOPE_RETURN_IF_ERROR(stream.Wait(*events_[e]));
      Status st = t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H
                      ? EnqueueCopy(t, p, stream, inputs)
                      : EnqueueKernel(t, p, stream);
      if (!st.ok()) return std::move(st).WithContext("task " + std::to_string(t.desc.task_id));
      // The run is done with these values: it lets go of them. The queued
      // kernels hold their own references; a value in an arena leaves its
      // block to the values planned after it (stream_arenas.h), memory of
      // its own is the next iteration's again (KeptMemory) once nothing
      // holds it.
      for (int v : p.release) env_[v] = Tensor();
      if (t.desc.event_after >= 0) OPSCOPE_RETURN_IF_ERROR(stream.Record(*events_[t.desc.event_after]));
    }
    return Status::Ok();
  }

  // Once every stream is synchronized.
  Status ReadTimes() {
    for (ScheduledTask& t : s_.tasks) {
      OPSCOPE_ASSIGN_OR_RETURN(t.raw_start_ns, start_[t.desc.task_id]->TimestampNs());
      OPSCOPE_ASSIGN_OR_RETURN(t.raw_end_ns, end_[t.desc.task_id]->TimestampNs());
      // Kernels run asynchronously: their launch config is known only now.
      const auto& launches = async_launches_[t.desc.task_id];
      if (!t.launch_known && launches && !launches->empty()) {
        t.launch = launches->front().config;
        t.launch_known = true;
      }
      if (t.launch_known) t.desc.launch = t.launch;
    }
    return Status::Ok();
  }

  std::map<std::string, Tensor>& outputs() { return outputs_; }
  // A copy's destination address -> its task: how the race check names a host-issued copy.
  const std::unordered_map<uint64_t, int64_t>& copy_tasks() const { return copy_tasks_; }
  // Bytes of every tensor the iteration made on the device: its inputs' copies and every kernel output.
  int64_t produced_bytes() const { return produced_bytes_; }

 private:
  Status EnqueueCopy(ScheduledTask& t, const PlannedTask& p, Stream& stream,
                     const std::map<std::string, Tensor>& inputs) {
    const bool h2d = t.desc.kind == TaskKind::kMemcpyH2D;
    Tensor src;
    if (h2d) {
      src = inputs.at(t.value);
    } else {
      const Tensor* computed = Find(p.value);
      if (computed == nullptr) return InternalError("output '" + t.value + "' was never computed");
      // Contiguous() would read the data now, before the producer ran.
      if (!computed->is_contiguous()) return InternalError("output '" + t.value + "' is not contiguous");
      src = *computed;
    }
    Tensor& kept = h2d ? kept_.values.at(static_cast<size_t>(p.value)) : kept_.to_host.at(static_cast<size_t>(t.desc.task_id));
    OPSCOPE_ASSIGN_OR_RETURN(Tensor dst, KeptMemory::Reuse(kept, src.dtype(), src.shape(), h2d ? device_ : nullptr));
    OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> start, device_->CreateEvent());
    OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> end, device_->CreateEvent());
    OPSCOPE_RETURN_IF_ERROR(stream.Record(*start));
    if (src.nbytes() > 0) {
      OPSCOPE_RETURN_IF_ERROR(stream.Memcpy(dst.raw_data(), src.raw_data(), src.nbytes(),
                                            h2d ? CopyKind::kHostToDevice : CopyKind::kDeviceToHost));
    }
    OPSCOPE_RETURN_IF_ERROR(stream.Record(*end));
    copy_tasks_[reinterpret_cast<uint64_t>(dst.raw_data())] = t.desc.task_id;
    start_[t.desc.task_id] = std::move(start);
    end_[t.desc.task_id] = std::move(end);
    // Both ends stay alive until the streams are synchronized: the copy runs
    // later on a stream thread, and a value copied twice (a name listed twice)
    // would otherwise free the first destination while it is written.
    keep_alive_.push_back(src);
    keep_alive_.push_back(dst);
    if (h2d) producer_[p.value] = t.desc.task_id;
    if (h2d) produced_bytes_ += static_cast<int64_t>(dst.nbytes());
    (h2d ? env_[p.value] : outputs_[t.value]) = std::move(dst);
    return Status::Ok();
  }

  Status EnqueueKernel(ScheduledTask& t, const PlannedTask& p, Stream& stream) {
    if (!p.missing.ok()) return p.missing;
    const Node* n = p.node;
    const OpSchema* schema = p.schema;
    std::vector<Tensor> args;
    args.reserve(p.inputs.size());
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      if (p.inputs[i] < 0) {
        args.emplace_back();
        continue;
      }
      const Tensor* in = Find(p.inputs[i]);
      if (in == nullptr) {
        return InternalError("node '" + n->name + "' reads '" + n->inputs[i] + "' before it is computed");
      }
      OPSCOPE_RETURN_IF_ERROR(AwaitIfValueInput(*schema, i, p.inputs[i]));
      args.push_back(*in);
    }
    RunOptions opts{.device = device_, .stream = &stream, .num_outputs = static_cast<int>(n->outputs.size()),
                    .synchronize = false};
    // Outputs in their stream's arena where the plan placed them (output i
    // is node output i: the dispatcher asks in order).
    if (arenas_ != nullptr) {
      opts.output_memory = [this, &p, i = size_t{0}](DType dtype, const Shape& shape) mutable -> StatusOr<Tensor> {
        if (i >= p.places.size()) return EmptyOnDevice(dtype, shape, device_);
        const size_t o = i++;
        return OutputMemory(p.places[o], p.outputs[o], dtype, shape);
      };
    }
    // Every iteration makes the same call: its checks are settled once
    // (again should its inputs' shapes change) and each launch skips them.
    std::shared_ptr<const SettledCall>& call = settled_.at(static_cast<size_t>(t.desc.task_id));
    if (call == nullptr || !call->Matches(args)) call = Dispatcher::Global().Settle(*schema, args, n->attrs, opts);
    StatusOr<OpRun> run = call != nullptr ? Dispatcher::Global().RunSettled(*call, args, opts)
                                          : Dispatcher::Global().Run(*schema, args, n->attrs, opts);
    if (!run.ok()) return std::move(run).status().WithContext("node '" + n->name + "' (" + n->op_type + ")");
    t.op_id = run->op_id;
    t.desc.kernel_name = run->kernel;
    if (!run->launches.empty()) {
      t.launch = run->launches.front().config;
      t.launch_known = true;
    }
    start_[t.desc.task_id] = run->start;
    end_[t.desc.task_id] = run->end;
    async_launches_[t.desc.task_id] = run->async_launches;
    for (size_t i = 0; i < p.outputs.size() && i < run->outputs.size(); ++i) {
      produced_bytes_ += static_cast<int64_t>(run->outputs[i].nbytes());
      if (p.outputs[i] < 0) continue;
      env_[p.outputs[i]] = run->outputs[i];
      producer_[p.outputs[i]] = t.desc.task_id;
    }
    return Status::Ok();
  }

  // A value's tensor: the graph's constant, or what the run computed and
  // still holds; null before its writer is queued or after it was let go.
  const Tensor* Find(int slot) const {
    if (env_[slot].defined()) return &env_[slot];
    return plan_.constants[slot];
  }

  // An output's memory: its block of its stream's arena where the plan
  // placed it (`place`) and it fits (a shape known only now may be larger),
  // else memory of its own, kept from the iteration before where it can be.
  StatusOr<Tensor> OutputMemory(const ValuePlace* place, int slot, DType dtype, const Shape& shape) {
    OPSCOPE_ASSIGN_OR_RETURN(const size_t bytes, ByteSize(shape, dtype));
    if (place == nullptr || bytes == 0 || static_cast<int64_t>(bytes) > place->bytes) {
      if (slot < 0) return EmptyOnDevice(dtype, shape, device_);
      return KeptMemory::Reuse(kept_.values.at(static_cast<size_t>(slot)), dtype, shape, device_);
    }
    return Tensor(arenas_->memory[static_cast<size_t>(place->stream)], dtype, shape, shape.ContiguousStrides(),
                  place->offset);
  }

  // Shape inference reads a value input's data at dispatch: one computed on
  // the device makes the host wait for its producer (a data-dependent shape
  // is a sync point, as on a GPU runtime).
  Status AwaitIfValueInput(const OpSchema& schema, size_t index, int slot) {
    if (schema.inputs.empty()) return Status::Ok();
    const ArgDef& arg = schema.inputs[std::min(index, schema.inputs.size() - 1)];
    if (!arg.value_input) return Status::Ok();
    const int64_t producer = producer_[slot];
    if (producer < 0) return Status::Ok();  // a constant
    return end_[producer]->Synchronize().WithContext("waiting for '" + plan_.names[slot] + "'");
  }

  const IterationPlan& plan_;
  Schedule& s_;
  Device* device_;
  std::vector<std::unique_ptr<Stream>>& streams_;
  std::vector<std::unique_ptr<Event>>& events_;
  const PlacedArenas* arenas_;     // nullptr: every output in memory of its own
  std::vector<std::shared_ptr<const SettledCall>>& settled_;
  KeptMemory& kept_;
  std::vector<Tensor> env_;        // by slot: the values computed and not yet let go of
  std::vector<int64_t> producer_;  // by slot: the task that writes it, -1 for none
  std::vector<std::shared_ptr<Event>> start_, end_;
  std::vector<std::shared_ptr<const std::vector<KernelLaunchInfo>>> async_launches_;
  std::vector<Tensor> keep_alive_;  // copy sources and destinations must outlive the queued copies
  std::map<std::string, Tensor> outputs_;
  std::unordered_map<uint64_t, int64_t> copy_tasks_;
  int64_t produced_bytes_ = 0;
};

Status SynchronizeAll(std::vector<std::unique_ptr<Stream>>& streams) {
  Status first;
  for (auto& s : streams) {
    Status st = s->Synchronize();
    if (first.ok() && !st.ok()) first = std::move(st).WithContext("stream " + std::to_string(s->id()));
  }
  return first;
}

}  // namespace

std::string OutputFileName(const std::string& value_name) {
  std::string out;
  for (char c : value_name) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '-' || c == '.';
    out += safe ? c : '_';
  }
  if (out.empty() || out[0] == '.') out = "_" + out;
  return out + ".npy";
}

namespace {

StatusOr<ExecutionResult> ExecuteImpl(const Graph& compiled, Schedule& schedule, const ExecuteOptions& options) {
  if (!options.device) return InvalidArgumentError("Execute: no device given");
  if (options.iterations < 1) {
    return InvalidArgumentError("iterations: expected at least 1, got " + std::to_string(options.iterations));
  }
  ExecutionResult result;
  OPSCOPE_ASSIGN_OR_RETURN(result.inputs, PrepareInputs(compiled, schedule, options));
  std::vector<std::unique_ptr<Stream>> streams;
  for (int i = 0; i < schedule.num_streams(); ++i) {
    OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Stream> s, options.device->CreateStream());
    result.device_stream_ids.push_back(s->id());
    streams.push_back(std::move(s));
  }
  std::vector<std::unique_ptr<Event>> events;
  for (int64_t i = 0; i < schedule.num_events; ++i) {
    OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> e, options.device->CreateEvent());
    events.push_back(std::move(e));
  }
  if (options.warmup < 0) {
    return InvalidArgumentError("warmup: expected at least 0, got " + std::to_string(options.warmup));
  }
  // Tensors held before the arenas: what the iterations' peak is counted above.
  const int64_t held_before = options.device->tensor_bytes();
  // Under checked allocation each output keeps its own guard page: no arenas.
  std::unique_ptr<PlacedArenas> arenas;
  if (!options.device->checked_allocation()) {
    arenas = std::make_unique<PlacedArenas>();
    arenas->plan = PlanStreamArenas(compiled, schedule);
    for (int64_t bytes : arenas->plan.arena_bytes) {
      std::shared_ptr<Buffer> memory;
      if (bytes > 0) {
        StatusOr<std::shared_ptr<Buffer>> made = AllocateBuffer(options.device, static_cast<size_t>(bytes));
        if (!made.ok()) return std::move(made).status().WithContext("a stream's arena of " + std::to_string(bytes) + " bytes");
        memory = std::move(made).value();
      }
      arenas->memory.push_back(std::move(memory));
    }
  }
  const IterationPlan plan = PlanIteration(compiled, schedule, arenas ? &arenas->plan : nullptr);
  // Nothing writes a constant: kernels may keep what they derive from it (a
  // GEMM's B packed into panels) for as long as it lives.
  for (const Tensor* c : plan.constants) {
    if (c != nullptr) FreezeBuffer(c->buffer());
  }
  std::vector<std::shared_ptr<const SettledCall>> settled(schedule.tasks.size());
  KeptMemory kept{.values = std::vector<Tensor>(plan.names.size()), .to_host = std::vector<Tensor>(schedule.tasks.size())};
  for (int w = 0; w < options.warmup; ++w) {
    Run run(plan, schedule, options.device, streams, events, arenas.get(), settled, kept);
    Status enqueued = run.Enqueue(result.inputs);
    Status synced = SynchronizeAll(streams);  // also when enqueue failed: nothing may stay queued
    OPSCOPE_RETURN_IF_ERROR(std::move(enqueued).WithContext("warm-up iteration " + std::to_string(w + 1)));
    OPSCOPE_RETURN_IF_ERROR(synced);
  }
  std::vector<std::vector<StreamClock>> iteration_clocks;  // per timed iteration, as result.iterations
  for (int it = 0; it < options.iterations; ++it) {
    // The outputs of the iteration before go: their memory is the kept one this iteration reuses.
    result.outputs.clear();
    Run run(plan, schedule, options.device, streams, events, arenas.get(), settled, kept);
    OPSCOPE_ASSIGN_OR_RETURN(std::vector<ClockAnchor> begin, run.Anchor());
    // Only the last iteration is checked: every iteration enqueues the same
    // work in the same order, so one verdict holds for all, and the ring
    // needs room for one iteration only.
    std::unique_ptr<RaceRecording> recording;
    if (!options.race_ring.empty() && it == options.iterations - 1) {
      OPSCOPE_ASSIGN_OR_RETURN(recording, RaceRecording::Start(options.race_ring, schedule, &result.race_check.skipped));
    }
    options.device->ResetPeakTensorBytes();
    const int64_t t0 = SteadyNowNs();
    Status enqueued = run.Enqueue(result.inputs);
    Status synced = SynchronizeAll(streams);  // also when enqueue failed: nothing may stay queued
    OPSCOPE_RETURN_IF_ERROR(enqueued);
    OPSCOPE_RETURN_IF_ERROR(synced);
    result.iteration_wall_us.push_back(static_cast<double>(SteadyNowNs() - t0) / 1e3);
    result.peak_tensor_bytes = std::max(result.peak_tensor_bytes, options.device->peak_tensor_bytes() - held_before);
    result.produced_tensor_bytes = run.produced_bytes();
    if (recording) result.race_check = recording->Finish(compiled, schedule, run.copy_tasks());
    OPSCOPE_ASSIGN_OR_RETURN(std::vector<ClockAnchor> end, run.Anchor());
    OPSCOPE_RETURN_IF_ERROR(run.ReadTimes());
    OPSCOPE_ASSIGN_OR_RETURN(result.clocks, ComputeStreamClocks(begin, end));
    OPSCOPE_RETURN_IF_ERROR(ApplyCalibration(schedule, result.clocks));
    result.iterations.push_back(SnapshotIteration(schedule));
    iteration_clocks.push_back(result.clocks);
    result.outputs = std::move(run.outputs());
  }
  result.median_iteration = MedianIteration(result.iterations);
  RestoreIteration(schedule, result.iterations[result.median_iteration]);
  // The clocks that calibrated the iteration shown, not the last one's: their
  // uncertainty is what bounds the calibrated times the schedule now holds.
  result.clocks = iteration_clocks[result.median_iteration];
  if (!options.save_outputs_dir.empty()) {
    OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(options.save_outputs_dir, "save_outputs"));
    for (const auto& [name, t] : result.outputs) {
      std::string path = (std::filesystem::path(options.save_outputs_dir) / OutputFileName(name)).string();
      OPSCOPE_RETURN_IF_ERROR(WriteNpy(path, t).WithContext("save_outputs"));
      result.saved_files.push_back(path);
    }
  }
  return result;
}

}  // namespace

StatusOr<ExecutionResult> Execute(const Graph& compiled, Schedule& schedule, const ExecuteOptions& options) {
  return ExecuteImpl(compiled, schedule, options);
}

StatusOr<ExecutionResult> Execute(const Model& model, Schedule& schedule, const ExecuteOptions& options) {
  return ExecuteImpl(model.compiled, schedule, options);
}

}  // namespace opscope::graph
