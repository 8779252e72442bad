// How `ops-debug run` names its inputs and outputs and builds its inputs:
// from .npy files (--inputs) or generated from shapes, dtypes and a seeded fill.
#pragma once

#include <string>
#include <vector>

#include "cli/run_command.h"
#include "opscope/fill.h"

namespace opscope::cli {

const char* FillKindName(FillKind k);
std::string InputName(const OpSchema& op, size_t i);
std::string OutputName(const OpSchema& op, size_t i);
StatusOr<std::vector<RunInput>> BuildInputs(const OpSchema& op, const RunFlags& flags);

}  // namespace opscope::cli
