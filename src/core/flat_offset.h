// File: core/flat_offset.h
// A row-major flat index of `shape` as an element offset through `strides`
// (one per dim of `shape`): how a strided tensor, a broadcast operand or a
// batch of matrices is read element by element. Kernels that walk a whole
// range keep offsets incrementally instead (ops/kernel_util.h's StridedIter).
#pragma once

#include <cstdint>
#include <vector>

#include "opscope/tensor.h"

namespace opscope {

inline int64_t FlatToOffset(int64_t flat, const Shape& shape, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    const int64_t d = shape[i];
    off += (flat % d) * strides[i];
    flat /= d;
  }
  return off;
}

}  // namespace opscope
