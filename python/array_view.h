// File: python/array_view.h
// A numpy array as an opscope Tensor over the same memory: no copy, the
// array's strides kept (in elements). The array must outlive the tensor; the
// callers hold it for the length of the call. Refused with ValueError: a
// dtype opscope has no type for (complex, object, bfloat16 that numpy cannot
// hold), strides that are not whole elements or are negative.
#pragma once

#include <string>

#include <pybind11/numpy.h>

#include "opscope/tensor.h"

namespace opscope::python {

// `what` names the argument in errors ("actual", "expected"). `bfloat16`:
// the array holds bfloat16 bits in 2-byte integers (a torch bfloat16 tensor
// viewed as int16, which numpy can hold), read as bfloat16.
Tensor TensorOver(const pybind11::array& array, const std::string& what, bool bfloat16 = false);

}  // namespace opscope::python
