#include <algorithm>

#include "opscope/op.h"
#include "device/stream_observer.h"
#include "ops/undeclared_reads.h"

namespace opscope {

KernelContext::KernelContext(std::string_view op, std::vector<Tensor> inputs, std::vector<Tensor> outputs,
                             const Attrs& attrs, Device* device, Stream* stream,
                             const std::map<std::string, int64_t>& tunables)
    : op_(op), inputs_(std::move(inputs)), outputs_(std::move(outputs)), attrs_(attrs), device_(device),
      stream_(stream), tunables_(tunables) {}

int64_t KernelContext::tunable(std::string_view name, int64_t fallback) const {
  auto it = tunables_.find(std::string(name));
  if (it != tunables_.end()) return it->second;
  std::lock_guard<std::mutex> lock(undeclared_mu_);
  if (undeclared_tunable_.empty()) {
    std::vector<std::string> declared;
    for (const auto& [k, v] : tunables_) declared.push_back(k);
    undeclared_tunable_ = UndeclaredReads::Message(op_, "tunable", name, declared);
  }
  return fallback;
}

Status KernelContext::undeclared_read() const {
  OPSCOPE_RETURN_IF_ERROR(attrs_.undeclared_read());
  std::lock_guard<std::mutex> lock(undeclared_mu_);
  return undeclared_tunable_.empty() ? Status::Ok() : InvalidArgumentError(undeclared_tunable_);
}

std::string KernelLaunchInfo::ResourcesText() const {
  std::string s;
  if (registers_per_thread >= 0) s = std::to_string(registers_per_thread) + " registers/thread";
  if (shared_bytes_per_block >= 0) s += (s.empty() ? "" : ", ") + std::to_string(shared_bytes_per_block) + " B shared/block";
  if (occupancy >= 0) {
    s += (s.empty() ? "" : ", ") + std::string("occupancy ") + std::to_string(static_cast<int>(occupancy * 100 + 0.5)) +
         "% (" + std::to_string(active_blocks_per_sm) + " blocks/SM)";
  }
  return s;
}

Status KernelContext::Launch(const KernelLaunch& kernel) {
  KernelLaunchInfo info{.name = kernel.name, .config = kernel.config};
  if (device_ != nullptr && kernel.device.function != nullptr && !device_->host_accessible()) {
    const KernelResources r = device_->DescribeKernel(kernel.device, kernel.config);
    info.registers_per_thread = r.registers_per_thread;
    info.active_blocks_per_sm = r.active_blocks_per_sm;
    info.occupancy = r.occupancy;
    if (r.static_shared_bytes >= 0) {
      info.shared_bytes_per_block = r.static_shared_bytes + static_cast<int64_t>(kernel.device.shared_bytes);
    }
  }
  launches_.push_back(std::move(info));
  if (stream_ != nullptr) {
    DispatchedLaunch dispatched;  // the dispatcher's hooks record this launch, with the op's buffers
    return stream_->Launch(kernel);
  }
  // Host (reference) run: the blocks one after another on this thread.
  if (!kernel.host) return UnimplementedError("kernel " + kernel.name + " has no host body");
  const LaunchConfig& c = kernel.config;
  BlockContext b{.grid_dim = c.grid, .block_dim = c.block, .vector_width = c.vector_width};
  for (int64_t z = 0; z < c.grid.z; ++z)
    for (int64_t y = 0; y < c.grid.y; ++y)
      for (int64_t x = 0; x < c.grid.x; ++x) {
        b.block_idx = {x, y, z};
        kernel.host(b);
      }
  return Status::Ok();
}

Status KernelContext::ParallelFor(std::string_view kernel_name, int64_t n,
                                  const std::function<void(int64_t, int64_t)>& fn, int64_t default_block) {
  if (n <= 0) return Status::Ok();
  // Not tunable(): an op need not declare "block" or "vec" to use ParallelFor.
  auto declared_or = [this](const char* name, int64_t fallback) {
    auto it = tunables_.find(name);
    return it == tunables_.end() ? fallback : it->second;
  };
  int64_t block = std::max<int64_t>(1, declared_or("block", default_block));
  int64_t grid = (n + block - 1) / block;
  KernelLaunch k;
  k.name = std::string(kernel_name);
  k.config.grid = {grid, 1, 1};
  k.config.block = {block, 1, 1};
  k.config.vector_width = static_cast<int>(declared_or("vec", 1));
  k.host = [&fn, n, block](const BlockContext& b) {
    int64_t begin = b.block_idx.x * block;
    fn(begin, std::min(n, begin + block));
  };
  OPSCOPE_RETURN_IF_ERROR(Launch(k));
  // fn is borrowed by reference: the launch must finish before we return.
  if (stream_ != nullptr) OPSCOPE_RETURN_IF_ERROR(stream_->Synchronize());
  return Status::Ok();
}

}  // namespace opscope
