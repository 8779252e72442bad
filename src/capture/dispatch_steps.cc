#include "capture/dispatch_steps.h"

#include "capture/output_canary.h"

#include <cstring>

#include "capture/dispatcher.h"
#include "core/text_format.h"
#include "opscope/device.h"

namespace opscope {

StatusOr<SelectedKernel> SelectKernel(const OpSchema& op, const Device* device) {
  if (device == nullptr) {
    if (!op.reference) return UnimplementedError("op " + op.name + " has no reference kernel");
    return SelectedKernel{op.reference, op.name + "_reference"};
  }
  auto it = op.kernels.find(device->backend());
  if (it == op.kernels.end()) {
    const std::string have = JoinMapped(op.kernels, ", ", [](const auto& kv) { return kv.first; });
    return UnimplementedError("op " + op.name + " has no kernel for device " + device->name() +
                              (have.empty() ? "" : " (it has: " + have + ")"));
  }
  return SelectedKernel{it->second, op.kernel_names.at(it->first)};
}

StatusOr<std::vector<Tensor>> PlaceInputs(const std::vector<Tensor>& given, Device* device) {
  std::vector<Tensor> inputs(given.size());
  for (size_t i = 0; i < given.size(); ++i) {
    const Tensor& t = given[i];
    if (!t.defined()) continue;
    if (device == nullptr) {
      OPSCOPE_ASSIGN_OR_RETURN(inputs[i], ToHost(t));
    } else if (t.device() == device ||
               (t.device() == nullptr && device->host_accessible() && !device->checked_allocation())) {
      inputs[i] = t;
    } else {
      OPSCOPE_ASSIGN_OR_RETURN(Tensor host, ToHost(t));
      OPSCOPE_ASSIGN_OR_RETURN(inputs[i], ToDevice(host, device));
    }
  }
  return inputs;
}

// 0xFF in every byte, written where the tensor lives.
static Status Poison(const Tensor& t, Device* device) {
  if (t.nbytes() == 0) return Status::Ok();
  if (device->host_accessible()) {
    std::memset(t.raw_data(), 0xFF, t.nbytes());
    return Status::Ok();
  }
  std::vector<unsigned char> pattern(t.nbytes(), 0xFF);
  return device->CopySync(t.raw_data(), pattern.data(), pattern.size(), CopyKind::kHostToDevice);
}

StatusOr<std::vector<Tensor>> AllocateOutputs(const std::vector<TensorDesc>& desc, Device* device, bool poison,
                                              const std::function<StatusOr<Tensor>(DType, const Shape&)>& memory) {
  std::vector<Tensor> outputs(desc.size());
  for (size_t i = 0; i < desc.size(); ++i) {
    const DType dt = device == nullptr ? ReferenceDType(desc[i].dtype) : desc[i].dtype;
    if (memory && device != nullptr && !poison) {
      OPSCOPE_ASSIGN_OR_RETURN(outputs[i], memory(dt, desc[i].shape));
      if (outputs[i].dtype() != dt || outputs[i].shape() != desc[i].shape || !outputs[i].is_contiguous()) {
        return InternalError("output memory for output " + std::to_string(i) + ": expected a contiguous " +
                             DTypeName(dt) + " " + desc[i].shape.ToString() + ", got " + outputs[i].Describe());
      }
      continue;
    }
    // Under checked allocation every buffer already ends at a guard page,
    // which names the faulting instruction: no canary there to absorb it.
    const bool guard = poison && device != nullptr;
    if (guard && !device->checked_allocation()) {
      OPSCOPE_ASSIGN_OR_RETURN(outputs[i], EmptyWithCanaries(dt, desc[i].shape, device));
    } else {
      OPSCOPE_ASSIGN_OR_RETURN(outputs[i], EmptyOnDevice(dt, desc[i].shape, device));
    }
    if (guard) OPSCOPE_RETURN_IF_ERROR(Poison(outputs[i], device));
  }
  return outputs;
}

StatusOr<std::shared_ptr<TunableValues>> SettleTunables(const OpSchema& op, const TunableValues& given) {
  auto tunables = std::make_shared<TunableValues>();
  for (const auto& t : op.tunables) {
    auto it = given.find(t.name);
    (*tunables)[t.name] = it != given.end() ? it->second : (t.values.empty() ? 0 : t.values[0]);
  }
  for (const auto& [k, v] : given) {
    if (!op.FindTunable(k)) return InvalidArgumentError("op " + op.name + " has no tunable '" + k + "'");
  }
  return tunables;
}

Status FinishKernel(Status st, const KernelContext& ctx, const std::string& context) {
  OPSCOPE_RETURN_IF_ERROR(ctx.undeclared_read());
  if (!st.ok()) return std::move(st).WithContext(context);
  return Status::Ok();
}

}  // namespace opscope
