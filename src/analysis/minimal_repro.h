// File: analysis/minimal_repro.h
// Shrinks a failing call's inputs around the region the bad element read,
// keeping only crops under which the call still fails. First all inputs are
// cropped to their region boxes at once; when the op refuses that (coupled
// dims, e.g. a weight sized by x's channels) or the failure vanishes, one dim
// at a time is cropped, biggest saving first, also together with the dims of
// the other inputs of the same length, keeping each crop that still fails.
//
//   MinimalRepro r = MinimizeInputs(inputs, region, [&](const std::vector<Tensor>& in) {
//     return StillFails(in);   // run kernel + golden, compare: true if it fails
//   });
//   if (r.found) ... r.inputs, r.Ratio() ...
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/input_region.h"

namespace opscope {

// true: the call still fails on these inputs; an error: the op refuses them.
using FailureCheck = std::function<StatusOr<bool>(const std::vector<Tensor>& inputs)>;

struct MinimalRepro {
  bool found = false;             // some crop smaller than the original still fails
  std::vector<Tensor> inputs;     // the cropped inputs (host, contiguous)
  std::vector<IndexBox> crops;    // per input, in the original's coordinates
  int attempts = 0;               // crops tried
  int64_t original_bytes = 0, repro_bytes = 0;
  std::string note;               // why nothing was found
  double Ratio() const { return repro_bytes ? static_cast<double>(original_bytes) / repro_bytes : 0; }
};

MinimalRepro MinimizeInputs(const std::vector<Tensor>& inputs, const InputRegion& region, const FailureCheck& fails);

}  // namespace opscope
