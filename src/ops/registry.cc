#include <mutex>

#include "opscope/op.h"
#include "ops/text_distance.h"

namespace opscope {

struct OpRegistry::Impl {
  mutable std::mutex mu;
  std::map<std::string, OpSchema, std::less<>> ops;
  std::vector<Status> pending;
  std::string source = "builtin";
};

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry();  // never destroyed: plugins may outlive exit order
  return *registry;
}

OpRegistry::Impl& OpRegistry::impl() const {
  static Impl* impl = new Impl();
  return *impl;
}

Status OpRegistry::Register(OpSchema schema) {
  Impl& im = impl();
  std::lock_guard<std::mutex> lock(im.mu);
  if (schema.name.empty()) return InvalidArgumentError("an op was registered without a name");
  auto it = im.ops.find(schema.name);
  if (it != im.ops.end()) {
    return InvalidArgumentError("op " + schema.name + " is registered twice (first by " + it->second.source +
                                ", again by " + im.source + ")");
  }
  if (!schema.infer) return InvalidArgumentError("op " + schema.name + " has no shape inference (use SameShape() or Infer())");
  schema.source = im.source;
  std::string name = schema.name;
  im.ops.emplace(std::move(name), std::move(schema));
  return Status::Ok();
}

void OpRegistry::Unregister(const std::string& name) {
  Impl& im = impl();
  std::lock_guard<std::mutex> lock(im.mu);
  im.ops.erase(name);
}

const OpSchema* OpRegistry::Find(std::string_view name) const {
  Impl& im = impl();
  std::lock_guard<std::mutex> lock(im.mu);
  auto it = im.ops.find(name);
  return it == im.ops.end() ? nullptr : &it->second;
}

StatusOr<const OpSchema*> OpRegistry::Lookup(std::string_view name) const {
  if (const OpSchema* s = Find(name)) return s;
  std::string msg = "unknown op '" + std::string(name) + "'";
  auto close = ClosestNames(name);
  if (!close.empty()) msg += "; did you mean " + JoinStrings(close, ", ") + "?";
  return NotFoundError(msg);
}

std::vector<std::string> OpRegistry::Names() const {
  Impl& im = impl();
  std::lock_guard<std::mutex> lock(im.mu);
  std::vector<std::string> names;
  for (const auto& [k, v] : im.ops) names.push_back(k);
  return names;
}

std::vector<std::string> OpRegistry::ClosestNames(std::string_view name, int k) const {
  return ClosestStrings(name, Names(), k);
}

void OpRegistry::AddPendingError(Status s) {
  Impl& im = impl();
  std::lock_guard<std::mutex> lock(im.mu);
  im.pending.push_back(std::move(s));
}

std::vector<Status> OpRegistry::TakePendingErrors() {
  Impl& im = impl();
  std::lock_guard<std::mutex> lock(im.mu);
  std::vector<Status> out;
  out.swap(im.pending);
  return out;
}

void OpRegistry::SetCurrentSource(std::string source) {
  Impl& im = impl();
  std::lock_guard<std::mutex> lock(im.mu);
  im.source = std::move(source);
}

}  // namespace opscope
