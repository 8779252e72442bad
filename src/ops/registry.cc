#include <mutex>

#include "core/text_distance.h"
#include "core/text_format.h"
#include "opscope/op.h"
#include "ops/registry_internal.h"

namespace opscope {

namespace {

// The registry's state, one per process.
struct RegistryState {
  std::mutex mu;
  std::map<std::string, OpSchema, std::less<>> ops;
  std::vector<Status> pending;
  std::string source = "builtin";
};

RegistryState& State() {
  static RegistryState* state = new RegistryState();  // never destroyed: plugins may outlive exit order
  return *state;
}

}  // namespace

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry();
  return *registry;
}

Status OpRegistry::Register(OpSchema schema) {
  RegistryState& im = State();
  std::lock_guard<std::mutex> lock(im.mu);
  if (schema.name.empty()) return InvalidArgumentError("an op was registered without a name");
  auto it = im.ops.find(schema.name);
  if (it != im.ops.end()) {
    return InvalidArgumentError("op " + schema.name + " is registered twice (first by " + it->second.source +
                                ", again by " + im.source + ")");
  }
  if (!schema.infer) return InvalidArgumentError("op " + schema.name + " has no shape inference (use SameShape() or Infer())");
  for (const ArgDef& out : schema.outputs) {
    const bool words = out.written_when.find_first_not_of(" \t") != std::string::npos;
    if (words != static_cast<bool>(out.written)) {
      return InvalidArgumentError("op " + schema.name + " output " + out.name + " is declared written only sometimes " +
                                  (words ? "without the function that decides it" : "without saying when") +
                                  ": expected OutputWrittenOnlyWhen(name, when, written) with both the words of "
                                  "`when` (\"training=1\") and a `written` function");
    }
  }
  schema.source = im.source;
  std::string name = schema.name;
  im.ops.emplace(std::move(name), std::move(schema));
  return Status::Ok();
}

void registry_internal::Unregister(const std::string& name) {
  RegistryState& im = State();
  std::lock_guard<std::mutex> lock(im.mu);
  im.ops.erase(name);
}

const OpSchema* OpRegistry::Find(std::string_view name) const {
  RegistryState& im = State();
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
  RegistryState& im = State();
  std::lock_guard<std::mutex> lock(im.mu);
  std::vector<std::string> names;
  for (const auto& [k, v] : im.ops) names.push_back(k);
  return names;
}

std::vector<std::string> OpRegistry::ClosestNames(std::string_view name, int k) const {
  return ClosestStrings(name, Names(), k);
}

void registry_internal::AddPendingError(Status s) {
  RegistryState& im = State();
  std::lock_guard<std::mutex> lock(im.mu);
  im.pending.push_back(std::move(s));
}

std::vector<Status> registry_internal::TakePendingErrors() {
  RegistryState& im = State();
  std::lock_guard<std::mutex> lock(im.mu);
  std::vector<Status> out;
  out.swap(im.pending);
  return out;
}

void registry_internal::SetCurrentSource(std::string source) {
  RegistryState& im = State();
  std::lock_guard<std::mutex> lock(im.mu);
  im.source = std::move(source);
}

}  // namespace opscope
