#include "capture/op_instance.h"

#include <string>
#include <utility>

#include "capture/dispatcher.h"

namespace opscope {
namespace {

// FNV-1a: stable across processes and builds, which std::hash is not.
uint64_t Fnv(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}
constexpr uint64_t kFnvBasis = 1469598103934665603ull;

thread_local const RunningKernel* t_running = nullptr;
thread_local bool t_inserted_sync = false;

}  // namespace

uint64_t OpInstanceKey(std::string_view op, const Attrs& attrs, const std::vector<Tensor>& inputs) {
  uint64_t h = Fnv(kFnvBasis, op);
  h = Fnv(h, "|" + attrs.ToString());
  for (const Tensor& t : inputs) {
    h = Fnv(h, t.defined() ? "|" + std::string(DTypeName(t.dtype())) + t.shape().ToString() : "|-");
  }
  return h;
}

uint64_t CombineFingerprints(const std::vector<uint64_t>& hashes) {
  uint64_t h = kFnvBasis;
  for (uint64_t v : hashes) h = Fnv(h, std::string_view(reinterpret_cast<const char*>(&v), sizeof v));
  return h;
}

uint64_t InputFingerprint(const std::vector<Tensor>& inputs) {
  std::vector<uint64_t> hashes;
  for (const Tensor& t : inputs) hashes.push_back(t.defined() ? ComputeFingerprint(t).Hash() : 0);
  return CombineFingerprints(hashes);
}

void MarkNextStreamSyncInserted() { t_inserted_sync = true; }
bool ConsumeInsertedStreamSync() { return std::exchange(t_inserted_sync, false); }
void ClearInsertedStreamSync() { t_inserted_sync = false; }

const RunningKernel* CurrentRunningKernel() { return t_running; }

ScopedRunningKernel::ScopedRunningKernel(const char* op, uint64_t op_id) : self_{op, op_id}, previous_(t_running) {
  t_running = &self_;
}
ScopedRunningKernel::~ScopedRunningKernel() { t_running = previous_; }

}  // namespace opscope
