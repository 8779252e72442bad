// File: capture/dispatch_steps.h
// The steps of one Dispatcher::Run that need no hook and no record: which
// kernel runs, where its inputs live, its outputs made, its tunables
// settled. Dispatcher::Run (dispatcher.cc) calls them in this order, then
// launches and tells the hooks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "opscope/op.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

struct SelectedKernel {
  KernelFn fn;
  std::string name;  // "relu_cpu", or "<op>_reference"
};

// The op's kernel for `device`'s backend; its reference kernel where device
// is nullptr. Unimplemented where it has none, naming the backends it has.
StatusOr<SelectedKernel> SelectKernel(const OpSchema& op, const Device* device);

// The inputs where the kernel reads them: copies on the host for the
// reference (device nullptr); on `device` otherwise, passed as they are where
// they already live there or it reads host memory without checked allocation.
StatusOr<std::vector<Tensor>> PlaceInputs(const std::vector<Tensor>& given, Device* device);

// Empty outputs on `device` (the reference computes in float64); with
// `poison`, every byte of a device output 0xFF, so an element the kernel
// never writes shows, and canaries on each side (capture/output_canary.h),
// so a write past either end shows.
StatusOr<std::vector<Tensor>> AllocateOutputs(const std::vector<TensorDesc>& desc, Device* device, bool poison,
                                              const std::function<StatusOr<Tensor>(DType, const Shape&)>& memory = {});

// Every tunable the op declares with a value: the caller's, else the first
// listed. A name the op does not declare is an error.
using TunableValues = std::map<std::string, int64_t>;
StatusOr<std::shared_ptr<TunableValues>> SettleTunables(const OpSchema& op, const TunableValues& given);

// A kernel's status with its context, unless it read an attribute or tunable
// its op does not declare: whatever it returned, that read is the error.
Status FinishKernel(Status st, const KernelContext& ctx, const std::string& context);

}  // namespace opscope
