// File: analysis/harness/input_region.h
// Which input elements produced one (bad) output element. From the op's index
// map when its schema declares one (OpDef::InputRegion); otherwise found by
// perturbing inputs and watching the output element: for each input and dim,
// two binary searches find the lowest and highest index whose perturbation
// changes the element's bits (2·log2(n) runs per dim), so the answer is the
// bounding box of what the element really reads, kernel as built.
//
//   auto probe = [&](const std::vector<Tensor>& in) { return RunAndTakeOutput0(in); };
//   OPSCOPE_ASSIGN_OR_RETURN(InputRegion r, FindRegionByPerturbation(inputs, {3,17,0,55}, probe, skip));
//   DescribeRegion({"x"}, r)  ->  "x[3,17,0:2,54:57]"
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "opscope/index_box.h"
#include "opscope/report.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

class Attrs;      // opscope/op.h
struct OpSchema;  // opscope/op.h

// Runs the op on `inputs` and returns the output under study on the host.
using OutputProbe = std::function<StatusOr<Tensor>(const std::vector<Tensor>& inputs)>;

// `skip[i]`: leave input i alone (it is read as values: a shape, axes...) and
// report it whole.
StatusOr<InputRegion> FindRegionByPerturbation(const std::vector<Tensor>& inputs,
                                               const std::vector<int64_t>& out_coords, const OutputProbe& probe,
                                               const std::vector<bool>& skip);

// From the schema's index map, clamped to the inputs' shapes.
InputRegion RegionFromIndexMap(const OpSchema& op, const std::vector<Tensor>& inputs,
                               const std::vector<Tensor>& outputs, const Attrs& attrs, int output,
                               const std::vector<int64_t>& out_coords);

// "x[3,17,0:2,54:57]  w[0:64]"; inputs the element does not read are left out.
std::string DescribeRegion(const std::vector<std::string>& names, const InputRegion& region);

// A contiguous host copy of the elements of `t` inside `box`.
StatusOr<Tensor> CropTensor(const Tensor& t, const IndexBox& box);

// The whole of `t` as a box.
IndexBox WholeBox(const Tensor& t);

}  // namespace opscope
