// How `ops-debug run` names its inputs and outputs and builds its inputs:
// from .npy files (--inputs) or generated from shapes, dtypes and a seeded fill.
#pragma once

#include <string>
#include <vector>

#include "opscope/harness.h"
#include "opscope/fill.h"

namespace opscope {

const char* FillKindName(FillKind k);
std::string InputName(const OpSchema& op, size_t i);
std::string OutputName(const OpSchema& op, size_t i);
StatusOr<std::vector<OpRunInput>> BuildInputs(const OpSchema& op, const OpRunRequest& flags);

}  // namespace opscope
