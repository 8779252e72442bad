// --readback: how much of each output comes back from the device. `full`
// copies it all and runs the whole compare engine; `stats` runs
// opscope_tensor_stats on the device and copies back 7 numbers, judged
// against the same numbers of the golden; `sample` runs
// opscope_tensor_sample (4096 evenly spaced elements) on the device and
// compares those elements with the golden's at the same indices.
#pragma once

#include <string>

#include "cli/run_command.h"

namespace opscope::cli {

enum class Readback { kFull, kStats, kSample };

inline constexpr int64_t kSampleCount = 4096;

// Errors name --readback; a backend without the summary kernels is refused.
StatusOr<Readback> ParseReadback(const std::string& text, const std::string& backend);
const char* ReadbackName(Readback r);

// `actual` lives on `device`; `golden` on the host.
StatusOr<RunOutput> ReadBackAndCompare(Readback r, const std::string& name, const Tensor& actual,
                                       const Tensor& golden, const Tolerance& tol, int worst_k, Device* device);

}  // namespace opscope::cli
