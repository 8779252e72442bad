#include "capture/op_instance.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <variant>

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

namespace {

template <typename T>
uint64_t FnvValue(uint64_t h, const T& v) {
  return Fnv(h, std::string_view(reinterpret_cast<const char*>(&v), sizeof v));
}

uint64_t HashAttr(uint64_t h, const AttrValue& v) {
  h = FnvValue(h, v.index());
  if (auto* i = std::get_if<int64_t>(&v)) return FnvValue(h, *i);
  if (auto* d = std::get_if<double>(&v)) return FnvValue(h, *d);
  if (auto* s = std::get_if<std::string>(&v)) return Fnv(h, *s);
  if (auto* is = std::get_if<std::vector<int64_t>>(&v)) {
    for (int64_t x : *is) h = FnvValue(h, x);
    return h;
  }
  if (auto* ds = std::get_if<std::vector<double>>(&v)) {
    for (double x : *ds) h = FnvValue(h, x);
    return h;
  }
  if (auto* ss = std::get_if<std::vector<std::string>>(&v)) {
    for (const std::string& x : *ss) h = Fnv(Fnv(h, x), "|");
    return h;
  }
  if (auto* t = std::get_if<Tensor>(&v); t && t->defined()) {
    h = FnvValue(h, static_cast<int>(t->dtype()));
    for (int d = 0; d < t->rank(); ++d) h = FnvValue(h, t->dim(d));
  }
  return h;
}

}  // namespace

uint64_t OpInstanceKey(std::string_view op, const Attrs& attrs, const std::vector<Tensor>& inputs) {
  uint64_t h = Fnv(kFnvBasis, op);
  for (const auto& [name, value] : attrs.all()) h = HashAttr(Fnv(Fnv(h, "|"), name), value);
  for (const Tensor& t : inputs) {
    h = Fnv(h, "|");
    if (!t.defined()) continue;
    h = FnvValue(h, static_cast<int>(t.dtype()));
    for (int d = 0; d < t.rank(); ++d) h = FnvValue(h, t.dim(d));
  }
  return h;
}

uint64_t CombineFingerprint(uint64_t h, uint64_t fingerprint) { return FnvValue(h, fingerprint); }

uint64_t InputFingerprint(const std::vector<Tensor>& inputs) {
  uint64_t h = kFingerprintBasis;
  for (const Tensor& t : inputs) h = CombineFingerprint(h, t.defined() ? ComputeFingerprint(t).Hash() : 0);
  return h;
}

void FormatAttrs(const Attrs& attrs, char* buf, size_t cap) {
  if (cap == 0) return;
  size_t n = 0;
  buf[0] = '\0';
  auto put = [&](const char* fmt, auto... args) {
    if (n + 1 >= cap) return;
    int w = std::snprintf(buf + n, cap - n, fmt, args...);
    if (w > 0) n = std::min(cap - 1, n + static_cast<size_t>(w));
  };
  bool first = true;
  for (const auto& [name, v] : attrs.all()) {
    put(first ? "%s=" : ",%s=", name.c_str());
    first = false;
    if (auto* i = std::get_if<int64_t>(&v)) put("%lld", static_cast<long long>(*i));
    else if (auto* d = std::get_if<double>(&v)) put("%g", *d);
    else if (auto* s = std::get_if<std::string>(&v)) put("%s", s->c_str());
    else if (auto* is = std::get_if<std::vector<int64_t>>(&v)) {
      put("%s", "[");
      for (size_t k = 0; k < is->size(); ++k) put(k ? ",%lld" : "%lld", static_cast<long long>((*is)[k]));
      put("%s", "]");
    } else if (auto* ds = std::get_if<std::vector<double>>(&v)) {
      put("%s", "[");
      for (size_t k = 0; k < ds->size(); ++k) put(k ? ",%g" : "%g", (*ds)[k]);
      put("%s", "]");
    } else if (auto* ss = std::get_if<std::vector<std::string>>(&v)) {
      put("%s", "[");
      for (size_t k = 0; k < ss->size(); ++k) put(k ? ",%s" : "%s", (*ss)[k].c_str());
      put("%s", "]");
    } else {
      put("%s", "<tensor>");
    }
  }
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
