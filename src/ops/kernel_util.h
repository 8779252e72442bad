// Helpers shared by the built-in kernels: shape/stride arithmetic for
// broadcasting and axis iteration, and typed element loops. Kernels use these
// instead of re-deriving index math each time.
#pragma once

#include <cstdint>
#include <vector>

#include "core/flat_offset.h"
#include "opscope/op.h"

namespace opscope::kernels {

// Element strides of `in` as seen from a broadcast output of shape `out`
// (0 on broadcast dims; `in` is right-aligned against `out`).
std::vector<int64_t> BroadcastStrides(const Shape& in, const std::vector<int64_t>& in_strides, const Shape& out);

// A flat index of `out` as an offset through its per-dim `strides`:
// core/flat_offset.h's FlatToOffset. The incremental iterators below are faster.
using ::opscope::FlatToOffset;

// Walks the row-major index space of `shape` from `start`, keeping element
// offsets for N operands in step (each with its own strides per dim of `shape`).
template <int N>
class StridedIter {
 public:
  StridedIter(const Shape& shape, const std::vector<int64_t>* strides[N], int64_t start) : shape_(shape) {
    idx_.assign(shape.rank(), 0);
    for (int k = 0; k < N; ++k) { st_[k] = strides[k]; off_[k] = 0; }
    int64_t f = start;
    for (int i = shape.rank() - 1; i >= 0; --i) {
      idx_[i] = shape[i] ? f % shape[i] : 0;
      f = shape[i] ? f / shape[i] : 0;
      for (int k = 0; k < N; ++k) off_[k] += idx_[i] * (*st_[k])[i];
    }
  }
  int64_t offset(int k) const { return off_[k]; }
  void Next() {
    for (int i = shape_.rank() - 1; i >= 0; --i) {
      if (++idx_[i] < shape_[i]) {
        for (int k = 0; k < N; ++k) off_[k] += (*st_[k])[i];
        return;
      }
      for (int k = 0; k < N; ++k) off_[k] -= (idx_[i] - 1) * (*st_[k])[i];
      idx_[i] = 0;
    }
  }

 private:
  const Shape& shape_;
  std::vector<int64_t> idx_;
  const std::vector<int64_t>* st_[N];
  int64_t off_[N];
};

// outer x axis x inner decomposition of `shape` around `axis` (for softmax,
// reductions over one axis, concat, gather ...).
struct AxisSplit {
  int64_t outer = 1, axis = 1, inner = 1;
};
AxisSplit SplitAtAxis(const Shape& shape, int axis);

// Reads all elements of a host tensor (any dtype, any strides) as doubles, row-major.
std::vector<double> ToDoubles(const Tensor& t);
// Reads an integer tensor (shape inputs, axes, k, ...) as int64 values.
std::vector<int64_t> ToInt64s(const Tensor& t);
// Writes doubles into a contiguous host tensor, converting to its dtype.
void FromDoubles(Tensor& t, const std::vector<double>& v);

}  // namespace opscope::kernels
