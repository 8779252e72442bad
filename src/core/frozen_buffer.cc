#include "core/frozen_buffer.h"

#include <map>
#include <mutex>
#include <unordered_map>

namespace opscope {
namespace {

struct FrozenEntry {
  std::weak_ptr<Buffer> owner;
  std::map<std::string, std::shared_ptr<const void>> derived;
};

struct FrozenRegistry {
  std::mutex mu;
  std::unordered_map<const Buffer*, FrozenEntry> entries;
  size_t sweep_at = 64;
};

FrozenRegistry& Registry() {
  static FrozenRegistry* r = new FrozenRegistry;  // never destroyed: kernels may run during exit
  return *r;
}

// The live entry for `b`, or nullptr (none, or one left by a dead buffer
// at the same address). Under the registry's lock.
FrozenEntry* LiveEntry(FrozenRegistry& r, const Buffer* b) {
  auto it = r.entries.find(b);
  if (it == r.entries.end()) return nullptr;
  if (it->second.owner.expired()) {
    r.entries.erase(it);
    return nullptr;
  }
  return &it->second;
}

std::string ViewKey(const Tensor& t, const std::string& key) {
  std::string k = key + "@" + std::to_string(t.byte_offset()) + ":" + std::to_string(static_cast<int>(t.dtype())) +
                  ":" + t.shape().ToString() + ":";
  for (int64_t s : t.strides()) k += std::to_string(s) + ",";
  return k;
}

}  // namespace

void FreezeBuffer(const std::shared_ptr<Buffer>& buffer) {
  if (buffer == nullptr) return;
  FrozenRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.entries.find(buffer.get());
  // Every iteration of a run freezes its constants again.
  if (it != r.entries.end() && it->second.owner.lock() == buffer) return;
  // Dead buffers' entries (and their derived data) go when the registry has
  // doubled since the last sweep: amortised, not a pass per call.
  if (r.entries.size() >= r.sweep_at) {
    for (auto e = r.entries.begin(); e != r.entries.end();) {
      e = e->second.owner.expired() ? r.entries.erase(e) : std::next(e);
    }
    r.sweep_at = 2 * r.entries.size() + 64;
  }
  r.entries[buffer.get()] = FrozenEntry{buffer, {}};
}

bool IsFrozen(const Tensor& t) {
  if (t.buffer() == nullptr) return false;
  FrozenRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return LiveEntry(r, t.buffer().get()) != nullptr;
}

std::shared_ptr<const void> FrozenDerived(const Tensor& t, const std::string& key,
                                          const std::function<std::shared_ptr<const void>()>& make) {
  if (t.buffer() == nullptr) return nullptr;
  FrozenRegistry& r = Registry();
  std::string k;  // made only for a frozen buffer: most calls of most kernels are on other buffers
  {
    std::lock_guard<std::mutex> lock(r.mu);
    FrozenEntry* e = LiveEntry(r, t.buffer().get());
    if (e == nullptr) return nullptr;
    k = ViewKey(t, key);
    auto it = e->derived.find(k);
    if (it != e->derived.end()) return it->second;
  }
  // Made outside the lock: packing a large B takes a millisecond, and other
  // kernels look up their own buffers meanwhile.
  std::shared_ptr<const void> made = make();
  if (made == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(r.mu);
  FrozenEntry* e = LiveEntry(r, t.buffer().get());
  if (e == nullptr) return made;  // unfrozen meanwhile: used once, not kept
  return e->derived.emplace(k, std::move(made)).first->second;
}

size_t FrozenBufferCount() {
  FrozenRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  size_t n = 0;
  for (const auto& [b, e] : r.entries) n += e.owner.expired() ? 0 : 1;
  return n;
}

}  // namespace opscope
