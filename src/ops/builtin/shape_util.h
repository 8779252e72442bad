// Helpers shared by the shape, data-movement and reduction built-ins.
//
// Kernels move bytes, not typed values: every data-movement op is described as
// a strided copy (an index space plus byte strides on each side) and run by
// RunStridedCopy, which memcpys the innermost contiguous run and falls back to
// fixed-size element copies otherwise. So one code path serves every dtype.
//
// References take the other road on purpose: they build, with plain loops, the
// flat source index of every output element and apply it with ReferenceGather.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/op.h"

namespace opscope::shape_ops {

// dst[i] = src[i] over the row-major index space `shape`; strides are in bytes
// per dim of `shape` (src strides may be negative or zero).
struct CopyPlan {
  std::vector<int64_t> shape;
  std::vector<int64_t> dst_strides;
  std::vector<int64_t> src_strides;
};

// Runs the plan as one ParallelFor over the elements ("block" = elements per block).
Status RunStridedCopy(KernelContext& ctx, std::string_view kernel_name, char* dst, const char* src,
                      CopyPlan plan, size_t elem_size);

// Byte strides of a tensor's view.
std::vector<int64_t> ByteStrides(const Tensor& t);
// Byte strides of a contiguous tensor of this shape.
std::vector<int64_t> ContiguousByteStrides(const Shape& shape, size_t elem_size);

// Copies a whole tensor (any strides) into a contiguous output of the same numel.
Status CopyInto(KernelContext& ctx, std::string_view kernel_name, const Tensor& in, Tensor& out);

// Fills `n` elements of `elem_size` bytes at dst with the one element at `value`.
void FillElements(char* dst, int64_t n, const char* value, size_t elem_size);
// The bytes of `v` converted to `dtype` (as FromDouble does).
std::vector<char> ScalarBytes(DType dtype, double v);

// ---- reference side ---------------------------------------------------------

// out[i] = in[src_index[i]] (row-major flat indices of `in`), or `fill` where
// src_index[i] < 0. Float data is written as the reference's float64; other
// dtypes are copied bit for bit.
Status ReferenceGather(const Tensor& in, const std::vector<int64_t>& src_index, Tensor& out, double fill = 0);

// Calls fn(index) for every row-major multi-index of `shape`.
void ForEachIndex(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& fn);
// Row-major flat offset of `index` in `shape`.
int64_t FlatIndex(const std::vector<int64_t>& index, const Shape& shape);

// ---- checks shared by shape inference ---------------------------------------

// "[1,2,3]"
std::string IntsToString(const std::vector<int64_t>& v);
// The int values of a value input, or an error naming op/input when shape
// inference was not given them.
StatusOr<std::vector<int64_t>> ValueInts(const InferContext& c, int input, std::string_view input_name);
// Normalises each axis against `rank`, rejecting out-of-range and repeated axes.
StatusOr<std::vector<int>> NormalizeAxes(std::string_view op, std::string_view what,
                                         const std::vector<int64_t>& axes, int rank);

// Cost of pure data movement: every input read once, every output written once.
Cost MoveCost(const OpCall& c);

}  // namespace opscope::shape_ops
