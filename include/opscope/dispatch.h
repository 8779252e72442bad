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

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/device.h"
#include "opscope/op.h"

namespace opscope {

struct RunOptions {
  Device* device = nullptr;  // nullptr: run the op's reference kernel on the host
  Stream* stream = nullptr;  // nullptr: the device's default stream
  std::map<std::string, int64_t> tunables;  // unset tunables take their first listed value
  int num_outputs = -1;      // -1: the op's required outputs
  bool synchronize = true;   // wait for the kernel; its error is returned
  bool fingerprint = true;   // compute each input's data fingerprint
  TraceSink* trace = nullptr;  // where the kernel's OPSCOPE_TRACE hits go (opscope/trace.h)
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
};

// Validates the call against the op's schema, allocates its outputs from
// shape inference, and launches its kernel for `options.device` (nullptr: the
// op's double-precision reference on the host).
StatusOr<OpRun> Dispatch(std::string_view op, const std::vector<Tensor>& inputs, Attrs attrs, const RunOptions& options);

}  // namespace opscope
