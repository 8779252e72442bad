#include "device/cuda/cuda_stream.h"

#include <string>

#include "device/cuda/cuda_event.h"
#include "device/cuda/cuda_status.h"

namespace opscope {
namespace {

cudaMemcpyKind ToCuda(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice: return cudaMemcpyHostToDevice;
    case CopyKind::kDeviceToHost: return cudaMemcpyDeviceToHost;
    case CopyKind::kDeviceToDevice: return cudaMemcpyDeviceToDevice;
  }
  return cudaMemcpyDefault;
}

dim3 ToDim3(const Dim3& d) {
  return dim3(static_cast<unsigned>(d.x), static_cast<unsigned>(d.y), static_cast<unsigned>(d.z));
}

struct HostCall {
  std::function<Status()> fn;
  std::shared_ptr<CudaHostErrorState> state;
};

void RunHostCall(void* user_data) {
  std::unique_ptr<HostCall> call(static_cast<HostCall*>(user_data));
  {
    std::lock_guard<std::mutex> lock(call->state->mu);
    if (!call->state->error.ok()) return;  // skipped after an unreported error
  }
  Status st = call->fn();
  if (st.ok()) return;
  std::lock_guard<std::mutex> lock(call->state->mu);
  if (call->state->error.ok()) call->state->error = std::move(st);
}

// The observer's name for this device: static storage, as StreamRef wants.
const char* DeviceName(int ordinal) {
  static constexpr const char* kNames[] = {"cuda:0", "cuda:1", "cuda:2", "cuda:3",
                                           "cuda:4", "cuda:5", "cuda:6", "cuda:7"};
  return ordinal >= 0 && ordinal < 8 ? kNames[ordinal] : "cuda";
}

}  // namespace

CudaStream::CudaStream(int id, int ordinal, cudaStream_t stream) : id_(id), ordinal_(ordinal), stream_(stream) {}

const char* CudaStream::device_name() const { return DeviceName(ordinal_); }

CudaStream::~CudaStream() {
  cudaSetDevice(ordinal_);
  cudaStreamSynchronize(stream_);
  cudaStreamDestroy(stream_);
}

Status CudaStream::DoLaunch(const KernelLaunch& k) {
  if (k.device.function == nullptr) {
    return InvalidArgumentError("kernel '" + k.name + "' has no cuda function: the cuda device cannot run it");
  }
  const LaunchConfig& c = k.config;
  const int64_t kMaxDim = 0x7fffffff;
  for (const Dim3* d : {&c.grid, &c.block}) {
    if (d->x < 1 || d->y < 1 || d->z < 1 || d->x > kMaxDim || d->y > kMaxDim || d->z > kMaxDim) {
      return InvalidArgumentError("kernel '" + k.name + "': launch config " + c.ToString() +
                                  " has a dimension out of range");
    }
  }
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  return CudaStatus(cudaLaunchKernel(k.device.function, ToDim3(c.grid), ToDim3(c.block), k.device.args,
                                     k.device.shared_bytes, stream_),
                    "launch of kernel '" + k.name + "' " + c.ToString());
}

Status CudaStream::DoMemcpy(void* dst, const void* src, size_t bytes, CopyKind kind) {
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  return CudaStatus(cudaMemcpyAsync(dst, src, bytes, ToCuda(kind), stream_),
                    "cudaMemcpyAsync of " + std::to_string(bytes) + " bytes");
}

Status CudaStream::DoRecord(Event& event) {
  auto* e = dynamic_cast<CudaEvent*>(&event);
  if (e == nullptr || e->ordinal() != ordinal_) {
    return InvalidArgumentError("Record: the event belongs to another device");
  }
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaEventRecord(e->handle(), stream_), "cudaEventRecord");
  e->MarkRecorded();
  return Status::Ok();
}

Status CudaStream::DoWait(Event& event) {
  auto* e = dynamic_cast<CudaEvent*>(&event);
  if (e == nullptr) return InvalidArgumentError("Wait: the event belongs to another device, not cuda");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  return CudaStatus(cudaStreamWaitEvent(stream_, e->handle(), 0), "cudaStreamWaitEvent");
}

Status CudaStream::DoSynchronize() {
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  std::lock_guard<std::mutex> lock(host_error_->mu);
  Status st = std::move(host_error_->error);
  host_error_->error = Status::Ok();
  return st;
}

Status CudaStream::EnqueueHostFunction(std::function<Status()> fn) {
  if (!fn) return InvalidArgumentError("EnqueueHostFunction: empty function");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  auto call = std::make_unique<HostCall>(HostCall{std::move(fn), host_error_});
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaLaunchHostFunc(stream_, RunHostCall, call.get()), "cudaLaunchHostFunc");
  call.release();  // RunHostCall owns it now
  return Status::Ok();
}

}  // namespace opscope
