// File: ops/registry_internal.h
// The parts of the op registry that only the library uses (the plugin loader
// and static registration), kept out of the op author's header opscope/op.h.
#pragma once

#include <string>
#include <vector>

#include "opscope/status.h"

namespace opscope::registry_internal {

// Removes an op: the loader's rollback of a plugin that failed half-way.
void Unregister(const std::string& name);
// Static registration cannot return errors; they wait here for the plugin loader.
void AddPendingError(Status s);
std::vector<Status> TakePendingErrors();
// The source recorded on ops registered from now on ("builtin" by default).
void SetCurrentSource(std::string source);

}  // namespace opscope::registry_internal
