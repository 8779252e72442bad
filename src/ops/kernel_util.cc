#include "ops/kernel_util.h"

namespace opscope::kernels {

std::vector<int64_t> BroadcastStrides(const Shape& in, const std::vector<int64_t>& in_strides, const Shape& out) {
  std::vector<int64_t> st(out.rank(), 0);
  int off = out.rank() - in.rank();
  for (int i = 0; i < in.rank(); ++i) st[off + i] = in[i] == 1 ? 0 : in_strides[i];
  return st;
}

AxisSplit SplitAtAxis(const Shape& shape, int axis) {
  AxisSplit s;
  for (int i = 0; i < axis; ++i) s.outer *= shape[i];
  s.axis = shape.rank() ? shape[axis] : 1;
  for (int i = axis + 1; i < shape.rank(); ++i) s.inner *= shape[i];
  return s;
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v(t.numel());
  if (t.is_contiguous()) {
    OPSCOPE_SWITCH_ALL(t.dtype(), {
      const scalar_t* p = t.data<scalar_t>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = ToDouble(p[i]);
    });
    return v;
  }
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.FlatGetAsDouble(static_cast<int64_t>(i));
  return v;
}

std::vector<int64_t> ToInt64s(const Tensor& t) {
  std::vector<int64_t> v(t.numel());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(t.FlatGetAsDouble(static_cast<int64_t>(i)));
  if (t.dtype() == DType::kI64 && t.is_contiguous()) {
    const int64_t* p = t.data<int64_t>();  // exact beyond 2^53
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  }
  return v;
}

void FromDoubles(Tensor& t, const std::vector<double>& v) {
  OPSCOPE_SWITCH_ALL(t.dtype(), {
    scalar_t* p = t.data<scalar_t>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = FromDouble<scalar_t>(v[i]);
  });
}

}  // namespace opscope::kernels
