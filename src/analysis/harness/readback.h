// --readback: how much of each output comes back from the device. `full`
// copies it all and runs the whole compare engine; `stats` runs
// opscope_tensor_stats on the device and copies back 7 numbers, judged
// against the same numbers of the golden; `sample` runs
// opscope_tensor_sample (4096 evenly spaced elements) on the device and
// compares those elements with the golden's at the same indices.
#pragma once

#include <string>

#include "opscope/harness.h"

namespace opscope {

// A backend without the summary kernels is refused; errors name --readback.
Status CheckReadback(Readback r, const std::string& backend);

// `actual` lives on `device`; `golden` on the host.
// `inputs`: the op's inputs, whose values a failed full compare ties the errors to.
StatusOr<OpRunOutput> ReadBackAndCompare(Readback r, const std::string& name, const Tensor& actual,
                                       const Tensor& golden, const Tolerance& tol, int worst_k, Device* device,
                                       const std::vector<OpRunInput>& inputs = {});

}  // namespace opscope
