#include "capture/dispatcher.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "capture/dispatch_steps.h"
#include "capture/op_instance.h"
#include "core/clock.h"
#include "core/frozen_buffer.h"
#include "core/hash_mix.h"
#include "device/stream_observer.h"

namespace opscope {

namespace {

// Set while this thread runs hooks: a launch a hook makes (a tensor
// summary) reaches no hook, the flight recorder's own included.
thread_local int t_in_hooks = 0;

struct HookScope {
  HookScope() { ++t_in_hooks; }
  ~HookScope() { --t_in_hooks; }
};

using HookList = std::vector<std::shared_ptr<DispatchHook>>;

template <typename F>
void CallHooks(const HookList& hooks, F&& f) {
  if (hooks.empty()) return;
  HookScope in_hook;
  for (const auto& h : hooks) f(*h);
}

const std::shared_ptr<const HookList>& NoHooks() {
  static const auto* none = new std::shared_ptr<const HookList>(std::make_shared<HookList>());
  return *none;
}

}  // namespace

const char* DispatchPhaseName(DispatchPhase p) {
  switch (p) {
    case DispatchPhase::kValidate: return "validate";
    case DispatchPhase::kInfer: return "infer";
    case DispatchPhase::kPlaceInputs: return "place inputs";
    case DispatchPhase::kAllocate: return "allocate";
    case DispatchPhase::kSetup: return "setup";
    case DispatchPhase::kEnqueue: return "enqueue";
    case DispatchPhase::kWait: return "wait";
    case DispatchPhase::kFinish: return "finish";
    case DispatchPhase::kCount: break;
  }
  return "?";
}

double DispatchTimes::PhaseUs(int i) const {
  if (!timed() || end_ns[i] == 0) return 0;
  const int64_t from = PhaseBeginNs(i);
  return from > 0 ? (end_ns[i] - from) / 1e3 : 0;
}

double DispatchTimes::TotalUs() const {
  if (!timed()) return 0;
  for (int i = kDispatchPhaseCount - 1; i >= 0; --i) {
    if (end_ns[i] != 0) return (end_ns[i] - begin_ns) / 1e3;
  }
  return 0;
}

uint64_t Fingerprint::Hash() const {
  uint64_t h = 0x51ed270b27b0f4a1ull;
  auto add = [&](double d) {
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    h = HashMix(h, b);
  };
  for (int i = 0; i < first_count; ++i) add(first[i]);
  for (double d : dim_min) add(d);
  return h;
}

Fingerprint ComputeFingerprint(const Tensor& t) {
  Fingerprint f;
  if (!t.defined() || !t.on_host() || t.numel() == 0) return f;
  int64_t n = t.numel();
  f.first_count = static_cast<int>(std::min<int64_t>(n, Fingerprint::kFirst));
  for (int i = 0; i < f.first_count; ++i) f.first[i] = t.FlatGetAsDouble(i);
  f.dim_min.resize(t.rank(), std::numeric_limits<double>::infinity());
  std::vector<int64_t> idx(t.rank(), 0);
  for (int d = 0; d < t.rank(); ++d) {
    for (int64_t i = 0; i < t.dim(d); ++i) {
      idx[d] = i;
      double v = t.GetAsDouble(idx);
      if (v < f.dim_min[d] || std::isnan(v)) f.dim_min[d] = v;
    }
    idx[d] = 0;
  }
  return f;
}

DType ReferenceDType(DType t) { return IsFloat(t) ? DType::kF64 : t; }

uint64_t ComputeOpId(const std::vector<Tensor>& inputs, uint64_t seq) {
  uint64_t h = HashMix(0x6f7073636f7065ull, seq);
  for (const Tensor& t : inputs) h = HashMix(h, reinterpret_cast<uintptr_t>(t.defined() ? t.raw_data() : nullptr));
  return h;
}

Dispatcher& Dispatcher::Global() {
  static Dispatcher* d = new Dispatcher();
  return *d;
}

std::shared_ptr<const HookList> Dispatcher::Hooks() const {
  if (t_in_hooks > 0) return NoHooks();
  return std::atomic_load(&hook_snapshot_);
}

int Dispatcher::AddHook(std::shared_ptr<DispatchHook> hook) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  int id = next_hook_id_++;
  hooks_.emplace_back(id, std::move(hook));
  auto snap = std::make_shared<std::vector<std::shared_ptr<DispatchHook>>>();
  for (auto& [i, h] : hooks_) snap->push_back(h);
  std::atomic_store(&hook_snapshot_, std::shared_ptr<const std::vector<std::shared_ptr<DispatchHook>>>(snap));
  return id;
}

void Dispatcher::RemoveHook(int id) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  std::erase_if(hooks_, [id](const auto& p) { return p.first == id; });
  auto snap = std::make_shared<std::vector<std::shared_ptr<DispatchHook>>>();
  for (auto& [i, h] : hooks_) snap->push_back(h);
  std::atomic_store(&hook_snapshot_, std::shared_ptr<const std::vector<std::shared_ptr<DispatchHook>>>(snap));
}

// The outputs a call gets when its caller does not say: an op with any number
// of outputs makes as many as it is told by its num_outputs attribute or by
// the length of its sizes (Split's split, as input or attribute); any other
// op its required outputs.
static int DefaultOutputCount(const OpSchema& op, const std::vector<const Tensor*>& values, const Attrs& attrs) {
  const int required = std::max(op.MinOutputs(), 1);
  if (op.MaxOutputs() != INT32_MAX) return required;
  constexpr int64_t kMost = 1 << 20;
  if (attrs.has("num_outputs")) return static_cast<int>(std::clamp<int64_t>(attrs.i("num_outputs"), 1, kMost));
  if (attrs.has("split")) return static_cast<int>(std::clamp<int64_t>(attrs.ints("split").size(), 1, kMost));
  for (size_t i = 0; i < values.size() && i < op.inputs.size(); ++i) {
    if (op.inputs[i].name == "split" && values[i]) return static_cast<int>(std::clamp<int64_t>(values[i]->numel(), 1, kMost));
  }
  return required;
}

static std::vector<TensorDesc> Describe(const std::vector<Tensor>& inputs) {
  std::vector<TensorDesc> d(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined()) d[i] = TensorDesc{inputs[i].dtype(), inputs[i].shape()};
    else d[i].present = false;
  }
  return d;
}

StatusOr<std::vector<TensorDesc>> Dispatcher::InferOutputs(const OpSchema& op, const std::vector<Tensor>& inputs,
                                                           Attrs& attrs, int num_outputs) {
  Status st = Validate(op, inputs, attrs);
  auto out = st.ok() ? InferValidated(op, inputs, attrs, num_outputs) : StatusOr<std::vector<TensorDesc>>(st);
  if (out.ok()) return out;
  // A call its inference refuses is evidence for a diagnosis, as in Run.
  auto hooks = Hooks();
  if (!hooks->empty()) {
    LaunchRecord rec;
    rec.op = &op;
    rec.inputs = &inputs;
    rec.attrs = &attrs;
    rec.host_enqueue_ns = SteadyNowNs();
    CallHooks(*hooks, [&](DispatchHook& h) { h.CallRejected(rec, out.status()); });
  }
  return out;
}

Status Dispatcher::Validate(const OpSchema& op, const std::vector<Tensor>& inputs, Attrs& attrs) {
  OPSCOPE_RETURN_IF_ERROR(op.ValidateAttrs(attrs));
  return op.CheckInputs(Describe(inputs));
}

StatusOr<std::vector<TensorDesc>> Dispatcher::InferValidated(const OpSchema& op, const std::vector<Tensor>& inputs,
                                                             Attrs& attrs, int num_outputs) {
  std::vector<TensorDesc> in = Describe(inputs);
  // Value inputs are read on the host by shape inference.
  std::vector<Tensor> host_values(inputs.size());
  std::vector<const Tensor*> values(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ArgDef& arg = op.inputs[std::min(i, op.inputs.size() - 1)];
    if (!arg.value_input || !inputs[i].defined()) continue;
    if (inputs[i].on_host()) {
      host_values[i] = inputs[i];
    } else {
      OPSCOPE_ASSIGN_OR_RETURN(host_values[i], ToHost(inputs[i]));
    }
    values[i] = &host_values[i];
  }
  if (num_outputs < 0) num_outputs = DefaultOutputCount(op, values, attrs);
  auto outputs = op.InferOutputs(in, values, attrs, num_outputs);
  OPSCOPE_RETURN_IF_ERROR(attrs.undeclared_read());  // shape inference read a name the op lacks
  return outputs;
}

StatusOr<OpRun> Dispatcher::Run(std::string_view op_name, const std::vector<Tensor>& inputs, Attrs attrs,
                                const RunOptions& options) {
  OPSCOPE_ASSIGN_OR_RETURN(const OpSchema* op, OpRegistry::Global().Lookup(op_name));
  return Run(*op, inputs, std::move(attrs), options);
}

namespace {

// RunOptions::time_phases: the end of each phase, one clock read each, only
// for the caller who asked (profile).
class PhaseClock {
 public:
  explicit PhaseClock(bool on) : on_(on) {
    if (on_) times_.begin_ns = SteadyNowNs();
  }
  void Mark(DispatchPhase p) {
    if (on_) times_.end_ns[static_cast<int>(p)] = SteadyNowNs();
  }
  DispatchTimes* record() { return on_ ? &times_ : nullptr; }
  const DispatchTimes& times() const { return times_; }

 private:
  bool on_;
  DispatchTimes times_;
};

// The launch as the hooks see it, before it runs. Buffers and fingerprints
// are for the hooks only: without one, their cost is skipped.
LaunchRecord NewLaunchRecord(uint64_t seq, const OpSchema& op, Device* device, const std::string& kernel,
                             std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, const Attrs& attrs,
                             bool hooked, bool fingerprint) {
  LaunchRecord rec;
  rec.seq = seq;
  rec.op_id = ComputeOpId(inputs, rec.seq);
  rec.op = &op;
  rec.device = device;
  rec.kernel = kernel;
  rec.inputs = &inputs;
  rec.outputs = &outputs;
  rec.attrs = &attrs;
  if (hooked) {
    for (const Tensor& t : inputs) if (t.defined()) rec.reads.push_back({t.raw_data(), t.nbytes()});
    for (const Tensor& t : outputs) rec.writes.push_back({t.raw_data(), t.nbytes()});
    if (fingerprint) {
      for (const Tensor& t : inputs) rec.fingerprints.push_back(ComputeFingerprint(t));
    }
  }
  return rec;
}

// The reference kernel runs inline on the calling thread, on the host.
StatusOr<OpRun> RunReference(const OpSchema& op, const KernelFn& kernel, LaunchRecord& rec, const HookList& hooks,
                             const std::shared_ptr<TunableValues>& tunables, PhaseClock& clock, OpRun run,
                             const RunOptions& options) {
  rec.host_enqueue_ns = SteadyNowNs();
  CallHooks(hooks, [&](DispatchHook& h) { h.BeforeLaunch(rec); });
  KernelContext ctx(op.name, *rec.inputs, *rec.outputs, *rec.attrs, nullptr, nullptr, *tunables);
  ctx.SetTrace(rec.op_id, options.trace);
  clock.Mark(DispatchPhase::kSetup);
  clock.Mark(DispatchPhase::kEnqueue);  // nothing is handed over
  Status st;
  {
    ScopedRunningKernel running(op.name.c_str(), rec.op_id);
    st = FinishKernel(kernel(ctx), ctx, "op " + op.name + " reference kernel");
  }
  if (!st.ok()) {
    CallHooks(hooks, [&](DispatchHook& h) { h.LaunchFailed(rec, st); });
    return st;
  }
  clock.Mark(DispatchPhase::kWait);
  rec.launches = ctx.launches();
  CallHooks(hooks, [&](DispatchHook& h) { h.AfterLaunch(rec); });
  run.outputs = std::move(ctx.outputs());
  run.launches = std::move(rec.launches);
  clock.Mark(DispatchPhase::kFinish);
  run.times = clock.times();
  return run;
}

// The kernel function on a device: in stream order on the stream's thread
// where the device reads host memory (so one host thread keeps several
// streams busy), on the calling thread otherwise; timed by two events.
StatusOr<OpRun> LaunchOnDevice(const OpSchema& op, const KernelFn& kernel, LaunchRecord& rec, const HookList& hooks,
                               const std::shared_ptr<Attrs>& attrs, const std::shared_ptr<TunableValues>& tunables,
                               PhaseClock& clock, OpRun run, const RunOptions& options, bool sync_points) {
  Device* device = rec.device;
  Stream* stream = options.stream ? options.stream : &device->default_stream();
  rec.stream_id = stream->id();
  rec.stream = stream;
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> start_ev, device->CreateEvent());
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> end_ev, device->CreateEvent());
  rec.start = std::shared_ptr<Event>(std::move(start_ev));
  rec.end = std::shared_ptr<Event>(std::move(end_ev));
  rec.host_enqueue_ns = SteadyNowNs();
  CallHooks(hooks, [&](DispatchHook& h) { h.BeforeLaunch(rec); });
  auto failed = [&](Status st) {
    CallHooks(hooks, [&](DispatchHook& h) { h.LaunchFailed(rec, st); });
    return st;
  };

  auto ctx = std::make_shared<KernelContext>(op.name, *rec.inputs, *rec.outputs, *attrs, device, stream, *tunables);
  ctx->SetTrace(rec.op_id, options.trace);
  clock.Mark(DispatchPhase::kSetup);
  // An asynchronous run learns its launch configs only when the kernel ran:
  // the kernel's own thread copies them here, before `end` is recorded.
  std::shared_ptr<std::vector<KernelLaunchInfo>> async_launches;
  if (!options.synchronize) async_launches = std::make_shared<std::vector<KernelLaunchInfo>>();
  {
    PauseStreamObserver own_event;  // the dispatcher's timing event, not the program's edge
    OPSCOPE_RETURN_IF_ERROR(stream->Record(*rec.start));
  }
  const uint64_t op_id = rec.op_id;
  if (device->host_accessible()) {
    std::string name = op.name;
    // A launch made while the observer is paused (a tensor summary) keeps it
    // paused on the stream's thread too: its copies are not the program's.
    const bool paused = StreamObserverPausedHere();
    OPSCOPE_RETURN_IF_ERROR(
        stream->EnqueueHostFunction([ctx, kernel, attrs, tunables, name, async_launches, op_id, paused]() -> Status {
          std::optional<PauseStreamObserver> pause;
          if (paused) pause.emplace();
          ScopedRunningKernel running(name.c_str(), op_id);
          Status st = kernel(*ctx);
          if (async_launches) *async_launches = ctx->launches();
          return FinishKernel(std::move(st), *ctx, "op " + name + " kernel");
        }));
  } else {
    Status st;
    {
      ScopedRunningKernel running(op.name.c_str(), op_id);
      st = kernel(*ctx);
    }
    if (async_launches) *async_launches = ctx->launches();
    st = FinishKernel(std::move(st), *ctx, "op " + op.name + " kernel");
    if (!st.ok()) return failed(std::move(st));
  }
  rec.async_launches = async_launches;
  run.async_launches = async_launches;
  {
    PauseStreamObserver own_event;
    OPSCOPE_RETURN_IF_ERROR(stream->Record(*rec.end));
  }
  clock.Mark(DispatchPhase::kEnqueue);
  run.outputs = ctx->outputs();
  run.start = rec.start;
  run.end = rec.end;
  if (options.synchronize) {
    if (Status st = stream->Synchronize(); !st.ok()) return failed(std::move(st));
    clock.Mark(DispatchPhase::kWait);
    rec.launches = ctx->launches();
    run.launches = rec.launches;
    auto us = run.end->ElapsedUsSince(*run.start);
    if (us.ok()) run.device_us = *us;
  } else if (sync_points) {
    // The program did not ask to wait; diagnose does, so the kernel that
    // fails is the call that fails: the error the program would have met at
    // its own synchronisation, it meets here.
    const int64_t t0 = SteadyNowNs();
    MarkNextStreamSyncInserted();
    Status st = stream->Synchronize();
    ClearInsertedStreamSync();
    rec.sync_point_ns = SteadyNowNs() - t0;
    if (!st.ok()) return failed(std::move(st));
  }
  CallHooks(hooks, [&](DispatchHook& h) { h.AfterLaunch(rec); });
  clock.Mark(DispatchPhase::kFinish);
  run.times = clock.times();
  return run;
}

// Run's steps once the call is checked: its inputs placed, its outputs
// made, a record for the hooks, the launch.
StatusOr<OpRun> LaunchChecked(const OpSchema& op, const KernelFn& fn, const std::string& kernel_name,
                              const std::shared_ptr<Attrs>& attrs, const std::vector<TensorDesc>& out_desc,
                              const std::vector<Tensor>& inputs_in, const RunOptions& options, const HookList& hooks,
                              PhaseClock& clock, std::shared_ptr<TunableValues> tunables, std::atomic<uint64_t>& seq,
                              bool sync_points) {
  Device* device = options.device;  // nullptr: the reference kernel
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, PlaceInputs(inputs_in, device));
  clock.Mark(DispatchPhase::kPlaceInputs);
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, AllocateOutputs(out_desc, device, options.poison_outputs,
                                                                            options.output_memory));
  clock.Mark(DispatchPhase::kAllocate);
  if (!tunables) {
    OPSCOPE_ASSIGN_OR_RETURN(tunables, SettleTunables(op, options.tunables));
  }

  // A fingerprint reads the inputs here, on the calling thread. That is their
  // value only when no launch still queued may write them: a call that waits
  // (or runs at diagnose's sync points, or on the reference) follows launches
  // that were waited for. An asynchronous launch records none (0: not
  // computed) rather than values a kernel on a stream may still be writing.
  const bool settled = device == nullptr || options.synchronize || sync_points;
  LaunchRecord rec = NewLaunchRecord(seq.fetch_add(1, std::memory_order_relaxed), op, device, kernel_name, inputs,
                                     outputs, *attrs, !hooks.empty(), options.fingerprint && settled);
  rec.times = clock.record();
  OpRun run;
  run.op_id = rec.op_id;
  run.seq = rec.seq;
  run.kernel = kernel_name;
  if (device == nullptr) return RunReference(op, fn, rec, hooks, tunables, clock, std::move(run), options);
  return LaunchOnDevice(op, fn, rec, hooks, attrs, tunables, clock, std::move(run), options, sync_points);
}

}  // namespace

StatusOr<OpRun> Dispatcher::Run(const OpSchema& op, const std::vector<Tensor>& inputs_given, Attrs attrs_in,
                                const RunOptions& options) {
  PhaseClock clock(options.time_phases);
  auto attrs = std::make_shared<Attrs>(std::move(attrs_in));
  // Older-opset attributes reach the kernels as the inputs they stand for.
  std::vector<Tensor> inputs_in = inputs_given;
  if (!op.attr_inputs.empty()) {
    OPSCOPE_RETURN_IF_ERROR(op.ValidateAttrs(*attrs));
    OPSCOPE_RETURN_IF_ERROR(op.MoveAttrsToInputs(inputs_in, *attrs));
  }
  auto hooks = Hooks();
  // A refused call is evidence too (a shape the kernel's op does not take).
  auto rejected = [&](Status st) {
    if (hooks->empty()) return st;
    LaunchRecord rec;
    rec.op = &op;
    rec.device = options.device;
    rec.inputs = &inputs_in;
    rec.attrs = attrs.get();
    rec.host_enqueue_ns = SteadyNowNs();
    HookScope in_hook;
    for (const auto& h : *hooks) h->CallRejected(rec, st);
    return st;
  };
  if (Status st = Validate(op, inputs_in, *attrs); !st.ok()) return rejected(std::move(st));
  clock.Mark(DispatchPhase::kValidate);
  auto inferred = InferValidated(op, inputs_in, *attrs, options.num_outputs);
  if (!inferred.ok()) return rejected(inferred.status());
  OPSCOPE_ASSIGN_OR_RETURN(SelectedKernel kernel, SelectKernel(op, options.device));
  clock.Mark(DispatchPhase::kInfer);
  return LaunchChecked(op, kernel.fn, kernel.name, attrs, *inferred, inputs_in, options, *hooks, clock, nullptr, seq_,
                       sync_points());
}

std::shared_ptr<const SettledCall> Dispatcher::Settle(const OpSchema& op, const std::vector<Tensor>& inputs,
                                                      Attrs attrs, const RunOptions& options) {
  // (all(), not has(): a read is not recorded against attributes validated before.)
  for (const AttrInputDef& def : op.attr_inputs) {
    if (attrs.all().count(def.attr) != 0) return nullptr;
  }
  auto call = std::make_shared<SettledCall>();
  call->values.resize(inputs.size());
  for (size_t i = 0; i < inputs.size() && !op.inputs.empty(); ++i) {
    if (!op.inputs[std::min(i, op.inputs.size() - 1)].value_input || !inputs[i].defined()) continue;
    if (!IsFrozen(inputs[i])) return nullptr;
    call->values[i] = inputs[i];
  }
  call->op = &op;
  call->device = options.device;
  call->attrs = std::make_shared<Attrs>(std::move(attrs));
  if (!Validate(op, inputs, *call->attrs).ok()) return nullptr;
  StatusOr<std::vector<TensorDesc>> inferred = InferValidated(op, inputs, *call->attrs, options.num_outputs);
  StatusOr<SelectedKernel> kernel = SelectKernel(op, options.device);
  StatusOr<std::shared_ptr<TunableValues>> tunables = SettleTunables(op, options.tunables);
  if (!inferred.ok() || !kernel.ok() || !tunables.ok()) return nullptr;
  call->inputs = Describe(inputs);
  call->outputs = std::move(inferred).value();
  call->kernel = kernel->fn;
  call->kernel_name = kernel->name;
  call->tunables = std::move(tunables).value();
  return call;
}

bool SettledCall::Matches(const std::vector<Tensor>& given) const {
  if (given.size() != inputs.size()) return false;
  for (size_t i = 0; i < given.size(); ++i) {
    if (given[i].defined() != inputs[i].present) return false;
    if (given[i].defined() && (given[i].dtype() != inputs[i].dtype || !(given[i].shape() == inputs[i].shape))) {
      return false;
    }
    if (values[i].defined() && (given[i].buffer() != values[i].buffer() || given[i].raw_data() != values[i].raw_data())) {
      return false;
    }
  }
  return true;
}

StatusOr<OpRun> Dispatcher::RunSettled(const SettledCall& call, const std::vector<Tensor>& inputs,
                                       const RunOptions& options) {
  PhaseClock clock(options.time_phases);
  clock.Mark(DispatchPhase::kValidate);
  clock.Mark(DispatchPhase::kInfer);
  return LaunchChecked(*call.op, call.kernel, call.kernel_name, call.attrs, call.outputs, inputs, options, *Hooks(),
                       clock, call.tunables, seq_, sync_points());
}

StatusOr<OpRun> Dispatch(std::string_view op, const std::vector<Tensor>& inputs, Attrs attrs,
                         const RunOptions& options) {
  return Dispatcher::Global().Run(op, inputs, std::move(attrs), options);
}

}  // namespace opscope
