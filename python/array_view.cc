#include "array_view.h"

#include <stdexcept>

namespace opscope::python {
namespace {

// numpy's kind and item size to opscope's dtype.
bool NumpyDType(const pybind11::dtype& d, DType& out) {
  const char kind = d.kind();
  const ssize_t size = d.itemsize();
  if (kind == 'f' && size == 8) out = DType::kF64;
  else if (kind == 'f' && size == 4) out = DType::kF32;
  else if (kind == 'f' && size == 2) out = DType::kF16;
  else if (kind == 'i' && size == 8) out = DType::kI64;
  else if (kind == 'i' && size == 4) out = DType::kI32;
  else if (kind == 'i' && size == 2) out = DType::kI16;
  else if (kind == 'i' && size == 1) out = DType::kI8;
  else if (kind == 'u' && size == 1) out = DType::kU8;
  else if (kind == 'u' && size == 2) out = DType::kU16;
  else if (kind == 'u' && size == 4) out = DType::kU32;
  else if (kind == 'u' && size == 8) out = DType::kU64;
  else if (kind == 'b' && size == 1) out = DType::kBool;
  else return false;
  return true;
}

}  // namespace

Tensor TensorOver(const pybind11::array& a, const std::string& what, bool bfloat16) {
  DType dtype;
  if (bfloat16) {
    if (a.itemsize() != 2 || (a.dtype().kind() != 'i' && a.dtype().kind() != 'u')) {
      throw pybind11::value_error(what + ": bfloat16 bits must come in a 2-byte integer array");
    }
    dtype = DType::kBF16;
  } else if (!NumpyDType(a.dtype(), dtype)) {
    throw pybind11::value_error(what + ": dtype " + std::string(pybind11::str(a.dtype())) +
                                " has no opscope type (float64/32/16, int64/32/16/8, uint64/32/16/8, bool)");
  }
  std::vector<int64_t> dims, strides;
  int64_t extent = 1;  // elements from the first to one past the last, all strides >= 0
  const ssize_t item = a.itemsize();
  for (ssize_t i = 0; i < a.ndim(); ++i) {
    const ssize_t s = a.strides(i);
    if (s < 0 || s % item != 0) {
      throw pybind11::value_error(what + ": strides that are negative or not whole elements (pass a copy: "
                                         "numpy.ascontiguousarray)");
    }
    dims.push_back(a.shape(i));
    strides.push_back(s / item);
    if (a.shape(i) == 0) extent = 0;
  }
  for (size_t i = 0; i < dims.size() && extent > 0; ++i) extent += (dims[i] - 1) * strides[i];
  void* data = const_cast<void*>(a.data());
  return Tensor(Buffer::Borrow(data, static_cast<size_t>(extent) * static_cast<size_t>(item)), dtype, Shape(dims),
                strides);
}

}  // namespace opscope::python
