// File: capture/dispatcher.h
// The one path every op launch takes, whether a lone op under ops-debug or a
// model's node under inspector-cli. The dispatcher validates the call against
// the schema, allocates outputs from shape inference, gives the launch an
// op_id and a data fingerprint, brackets the kernel with device events, and
// tells the registered hooks before and after.
//
//   OPSCOPE_ASSIGN_OR_RETURN(Device* cpu, GetDevice("cpu"));
//   RunOptions opts{.device = cpu};
//   OPSCOPE_ASSIGN_OR_RETURN(OpRun r, Dispatcher::Global().Run("Relu", {x}, {}, opts));
//   // r.outputs[0] lives on `cpu`; r.op_id ties every record of this launch together.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "opscope/device.h"
#include "opscope/dispatch.h"
#include "opscope/op.h"

namespace opscope {


// A light summary that tells apart two calls with equal shapes but other data:
// the first elements, and for each dim d the minimum along the line
// x[0,..,0,i_d,0,..,0] (cheap: the sum of the dims, not their product).
struct Fingerprint {
  static constexpr int kFirst = 8;
  std::array<double, kFirst> first{};
  int first_count = 0;
  std::vector<double> dim_min;
  uint64_t Hash() const;
};
Fingerprint ComputeFingerprint(const Tensor& t);  // host-readable tensors only; empty otherwise

struct MemoryRange {
  const void* ptr = nullptr;
  size_t bytes = 0;
};

// What hooks see of one launch.
struct LaunchRecord {
  uint64_t seq = 0;     // dispatcher-wide call sequence number
  uint64_t op_id = 0;   // hash(input addresses, seq)
  const OpSchema* op = nullptr;
  Device* device = nullptr;  // nullptr for a reference run
  int stream_id = -1;
  Stream* stream = nullptr;  // where the kernel is queued; nullptr for a reference run
  std::string kernel;        // the kernel's registered name
  std::vector<KernelLaunchInfo> launches;  // filled once the kernel ran (synchronous runs)
  // Asynchronous runs (synchronize = false): the kernel's launches, filled in
  // stream order when it ran; read them only once `end` is reached.
  std::shared_ptr<const std::vector<KernelLaunchInfo>> async_launches;
  std::vector<MemoryRange> reads, writes;
  std::vector<Fingerprint> fingerprints;  // per input
  // The call's tensors and attributes, valid while a hook runs: inputs where
  // the kernel reads them, outputs as allocated (written once `end` is reached).
  const std::vector<Tensor>* inputs = nullptr;
  const std::vector<Tensor>* outputs = nullptr;
  const Attrs* attrs = nullptr;
  // A sync point (Dispatcher::SetSyncPoints) waited this long after the
  // enqueue, before AfterLaunch; 0 without one.
  int64_t sync_point_ns = 0;
  int64_t host_enqueue_ns = 0;  // steady_clock when the dispatcher enqueued
  // The call's phase spans so far (the phases up to kWait are in when
  // AfterLaunch runs); nullptr unless RunOptions::time_phases.
  const DispatchTimes* times = nullptr;
  // Device events around the kernel; their timestamps are read once reached.
  std::shared_ptr<Event> start, end;
};

class DispatchHook {
 public:
  virtual ~DispatchHook() = default;
  virtual void BeforeLaunch(const LaunchRecord&) {}
  virtual void AfterLaunch(const LaunchRecord&) {}
  // The kernel returned an error (seen at the call's own synchronisation or
  // a sync point); AfterLaunch is not called for it.
  virtual void LaunchFailed(const LaunchRecord&, const Status&) {}
  // The call was refused before any launch: its attributes, inputs or shape
  // inference (the record holds op, inputs and attrs only).
  virtual void CallRejected(const LaunchRecord&, const Status&) {}
};


// Outputs of a reference run are float64 where the op's output is floating point.
DType ReferenceDType(DType t);

uint64_t ComputeOpId(const std::vector<Tensor>& inputs, uint64_t seq);

// What a call's checks settled (Dispatcher::Settle): its attributes as
// validation leaves them, its outputs' descriptions, its kernel and its
// tunables. Another call of the op with the same attributes, options and
// input descriptions settles the same way, so a runtime that makes the same
// calls every iteration settles each once and launches it with RunSettled:
// validating and inferring were a third of the host's time a launch
// (perf, inspector-cli run on the encoder), time the cpu device's kernels
// then running lost.
struct SettledCall {
  const OpSchema* op = nullptr;
  Device* device = nullptr;
  std::shared_ptr<Attrs> attrs;     // validated; shared by every launch of the call
  std::vector<TensorDesc> inputs;   // what it was settled for
  std::vector<TensorDesc> outputs;  // inferred
  KernelFn kernel;
  std::string kernel_name;
  std::shared_ptr<std::map<std::string, int64_t>> tunables;
  // By input: a value input (read on the host by shape inference) as it was
  // settled for, a constant (its buffer frozen: nothing writes it again);
  // undefined for every other input.
  std::vector<Tensor> values;
  // Whether `given` are inputs of the same dtypes and shapes, present where
  // these were, and the same constants where shapes were read from values.
  bool Matches(const std::vector<Tensor>& given) const;
};

class Dispatcher {
 public:
  static Dispatcher& Global();

  StatusOr<OpRun> Run(const OpSchema& op, const std::vector<Tensor>& inputs, Attrs attrs,
                      const RunOptions& options);
  StatusOr<OpRun> Run(std::string_view op, const std::vector<Tensor>& inputs, Attrs attrs,
                      const RunOptions& options);

  // Hooks run on the launching thread, in registration order. A launch made
  // from inside a hook (a tensor summary) reaches no hook.
  int AddHook(std::shared_ptr<DispatchHook> hook);
  void RemoveHook(int id);

  // Sync points (ops-debug diagnose): every asynchronous launch is followed
  // by a synchronisation of its stream, so a failing kernel fails its own
  // call and the flight recorder names it. Not an edge of the program's
  // order: the stream observer does not see these.
  void SetSyncPoints(bool on) { sync_points_.store(on, std::memory_order_relaxed); }
  bool sync_points() const { return sync_points_.load(std::memory_order_relaxed); }

  // Run's checks without its launch. Null where the call cannot be settled
  // ahead (its shapes depend on the values of an input that is not a frozen
  // constant; it has attributes an older opset gave as inputs) or is
  // refused: Run then says why.
  std::shared_ptr<const SettledCall> Settle(const OpSchema& op, const std::vector<Tensor>& inputs, Attrs attrs,
                                            const RunOptions& options);
  // Run for a settled call, on inputs it Matches, with the options it was
  // settled with: its launch, record and hooks, as Run's.
  StatusOr<OpRun> RunSettled(const SettledCall& call, const std::vector<Tensor>& inputs, const RunOptions& options);

  // Only shape checks and inference: the output descriptions a call would get.
  StatusOr<std::vector<TensorDesc>> InferOutputs(const OpSchema& op, const std::vector<Tensor>& inputs,
                                                 Attrs& attrs, int num_outputs);

 private:
  static Status Validate(const OpSchema& op, const std::vector<Tensor>& inputs, Attrs& attrs);
  static StatusOr<std::vector<TensorDesc>> InferValidated(const OpSchema& op, const std::vector<Tensor>& inputs,
                                                          Attrs& attrs, int num_outputs);
  // The hooks a launch on this thread reaches: none from inside a hook.
  std::shared_ptr<const std::vector<std::shared_ptr<DispatchHook>>> Hooks() const;
  std::atomic<uint64_t> seq_{0};
  std::atomic<bool> sync_points_{false};
  std::mutex hooks_mu_;
  std::vector<std::pair<int, std::shared_ptr<DispatchHook>>> hooks_;
  std::shared_ptr<const std::vector<std::shared_ptr<DispatchHook>>> hook_snapshot_ =
      std::make_shared<std::vector<std::shared_ptr<DispatchHook>>>();
  int next_hook_id_ = 1;
};

}  // namespace opscope
