// Tensors in device memory: the part of Tensor that needs a Device, kept in
// the device layer so that core stays free of devices.
#include <algorithm>
#include <cstring>

#include "opscope/device.h"

#include "device/stream_observer.h"

namespace opscope {

void Device::AddTensorBytes(int64_t delta) {
  const int64_t now = tensor_bytes_.fetch_add(delta, std::memory_order_relaxed) + delta;
  int64_t peak = peak_tensor_bytes_.load(std::memory_order_relaxed);
  while (now > peak && !peak_tensor_bytes_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

StatusOr<std::shared_ptr<Buffer>> AllocateBuffer(Device* device, size_t bytes) {
  if (!device) return Buffer::AllocateHost(bytes);
  OPSCOPE_ASSIGN_OR_RETURN(void* p, device->Allocate(std::max<size_t>(bytes, 1)));
  if (StreamObserver* o = ActiveStreamObserver()) o->OnAllocate(device->name().c_str(), p, bytes);
  const int64_t counted = static_cast<int64_t>(bytes);
  device->AddTensorBytes(counted);
  return std::make_shared<Buffer>(p, bytes, device, device->host_accessible(), [device, counted](void* q) {
    device->Free(q);
    device->AddTensorBytes(-counted);
  });
}

StatusOr<Tensor> EmptyOnDevice(DType dtype, const Shape& shape, Device* device) {
  OPSCOPE_ASSIGN_OR_RETURN(const size_t bytes, ByteSize(shape, dtype));
  StatusOr<std::shared_ptr<Buffer>> buf = AllocateBuffer(device, bytes);
  if (!buf.ok()) return std::move(buf).status().WithContext(std::string(DTypeName(dtype)) + " " + shape.ToString());
  return Tensor(std::move(buf).value(), dtype, shape, shape.ContiguousStrides());
}

StatusOr<Tensor> ToDevice(const Tensor& host, Device* device) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor src, host.Contiguous());
  OPSCOPE_ASSIGN_OR_RETURN(Tensor out, EmptyOnDevice(src.dtype(), src.shape(), device));
  if (src.nbytes() == 0) return out;
  if (device) {
    OPSCOPE_RETURN_IF_ERROR(device->CopySync(out.raw_data(), src.raw_data(), src.nbytes(), CopyKind::kHostToDevice));
  } else {
    std::memcpy(out.raw_data(), src.raw_data(), src.nbytes());
  }
  return out;
}

StatusOr<Tensor> ToHost(const Tensor& t) {
  Device* d = t.device();
  if (d == nullptr) return t;
  if (!t.is_contiguous()) {
    if (d->host_accessible()) return t.Clone();
    return UnimplementedError("copying a non-contiguous device tensor to the host");
  }
  OPSCOPE_ASSIGN_OR_RETURN(Tensor out, Tensor::Empty(t.dtype(), t.shape()));
  if (t.nbytes() == 0) return out;
  OPSCOPE_RETURN_IF_ERROR(d->CopySync(out.raw_data(), t.raw_data(), t.nbytes(), CopyKind::kDeviceToHost));
  return out;
}

}  // namespace opscope
