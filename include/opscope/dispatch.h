// File: opscope/dispatch.h
// Launching one op from a program of one's own: through the one dispatcher
// every launch takes (the same op_id, fingerprints, hooks and capture
// sessions as under ops-debug and inspector-cli).
//
//   OPSCOPE_ASSIGN_OR_RETURN(Device* cpu, GetDevice("cpu"));
//   OPSCOPE_ASSIGN_OR_RETURN(OpRun relu, Dispatch("Relu", {x}, {}, {.device = cpu}));
//   // relu.outputs[0] lives on `cpu`; relu.op_id ties every record of this launch together.
//   OPSCOPE_ASSIGN_OR_RETURN(OpRun add, Dispatch("Add", {relu.outputs[0], x}, {}, {.device = cpu, .synchronize = false}));
//   OPSCOPE_RETURN_IF_ERROR(cpu->default_stream().Synchronize());
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/device.h"
#include "opscope/op.h"

namespace opscope {

// Where the time of one call goes, each phase a span the dispatcher measured
// on the host's steady_clock (never estimated): the phases follow one another,
// phase i running from the end of phase i-1 (from `begin_ns` for the first)
// to end_ns[i]. kWait is the host blocked on the stream: the kernel's
// queueing and its run; the device's own events time the kernel alone.
enum class DispatchPhase : int {
  kValidate,     // attributes and input dtypes/ranks against the schema
  kInfer,        // shape inference (value inputs read on the host) and the kernel's lookup
  kPlaceInputs,  // inputs copied to the device where they are not on it
  kAllocate,     // outputs allocated from the inferred shapes
  kSetup,        // tunables, the launch record, device events, the hooks before launch
  kEnqueue,      // the kernel handed to the stream, between its two events
  kWait,         // synchronisation: queueing and the kernel, until the end event
  kFinish,       // launch configs collected, the hooks after launch
  kCount
};
inline constexpr int kDispatchPhaseCount = static_cast<int>(DispatchPhase::kCount);
const char* DispatchPhaseName(DispatchPhase p);  // "validate", "infer", "place inputs", ...

struct DispatchTimes {
  int64_t begin_ns = -1;  // steady_clock when the call entered the dispatcher; -1: not timed
  std::array<int64_t, kDispatchPhaseCount> end_ns{};  // 0: the phase was not reached
  bool timed() const { return begin_ns >= 0; }
  int64_t PhaseBeginNs(int i) const { return i == 0 ? begin_ns : end_ns[i - 1]; }
  double PhaseUs(int i) const;  // 0 for a phase not reached
  double TotalUs() const;       // begin to the last phase reached
};

struct RunOptions {
  Device* device = nullptr;  // nullptr: run the op's reference kernel on the host
  Stream* stream = nullptr;  // nullptr: the device's default stream
  std::map<std::string, int64_t> tunables;  // unset tunables take their first listed value
  int num_outputs = -1;      // -1: the op's required outputs
  bool synchronize = true;   // wait for the kernel; its error is returned
  bool fingerprint = true;   // compute each input's data fingerprint
  TraceSink* trace = nullptr;  // where the kernel's OPSCOPE_TRACE hits go (opscope/trace.h)
  bool time_phases = false;    // fill OpRun::times (a steady_clock read per phase, ~20 ns each)
  // Fill the outputs with 0xFF bytes (NaN in every float dtype, -1 or the
  // maximum in integers) before the kernel runs, so an element it never
  // writes cannot pass for right with what a reused buffer held before.
  bool poison_outputs = false;
  // Where each output's memory comes from on the device (not the reference,
  // not with poison_outputs): called once per output, in order, with its
  // dtype and shape, and must return a contiguous tensor of them. Unset: a
  // new tensor each (EmptyOnDevice). A graph runtime hands out memory its
  // earlier values are done with.
  std::function<StatusOr<Tensor>(DType, const Shape&)> output_memory;
};

struct OpRun {
  std::vector<Tensor> outputs;
  uint64_t op_id = 0;
  uint64_t seq = 0;
  std::string kernel;
  std::vector<KernelLaunchInfo> launches;  // synchronous runs only
  double device_us = -1;                   // synchronous runs with events only
  std::shared_ptr<Event> start, end;
  // Asynchronous runs: as LaunchRecord::async_launches (valid once `end` is reached).
  std::shared_ptr<const std::vector<KernelLaunchInfo>> async_launches;
  DispatchTimes times;  // with RunOptions::time_phases
};

// Validates the call against the op's schema, allocates its outputs from
// shape inference, and launches its kernel for `options.device` (nullptr: the
// op's double-precision reference on the host).
StatusOr<OpRun> Dispatch(std::string_view op, const std::vector<Tensor>& inputs, Attrs attrs, const RunOptions& options);

}  // namespace opscope
