// File: analysis/harness/minimal_repro.h
// Shrinks a failing call's inputs around the region the bad element read,
// keeping only crops under which the call still fails. First all inputs are
// cropped to their region boxes at once; when the op refuses that (coupled
// dims, e.g. a weight sized by x's channels) or the failure vanishes, one dim
// at a time is cropped, biggest saving first, also together with the dims of
// the other inputs of the same length, keeping each crop that still fails.
// Where the region is all of every input, or no crop to it still fails, each
// dim is halved (coupled dims with it) while the failure keeps.
//
//   MinimalRepro r = MinimizeInputs(inputs, region, [&](const std::vector<Tensor>& in) {
//     return StillFails(in);   // run kernel + golden, compare: true if it fails
//   });
//   if (r.found) ... r.inputs, r.Ratio() ...
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/harness/input_region.h"

namespace opscope {

// true: the call still fails on these inputs; an error: the op refuses them.
using FailureCheck = std::function<StatusOr<bool>(const std::vector<Tensor>& inputs)>;


MinimalRepro MinimizeInputs(const std::vector<Tensor>& inputs, const InputRegion& region, const FailureCheck& fails);

}  // namespace opscope
