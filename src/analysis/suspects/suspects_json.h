// The suspects (opscope/suspects.h) as report.json's profile section and
// summary.json write them: one object per suspect, ranked, with its numbers.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "opscope/suspects.h"

namespace opscope {

nlohmann::json SuspectsJson(const std::vector<Suspect>& suspects);

}  // namespace opscope
