#include "ops/builtin/ew_util.h"

#include <cctype>

#include "core/text_format.h"

namespace opscope::ew {

std::vector<DType> Floats() { return {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}; }

std::vector<DType> Numeric() {
  return {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI32, DType::kI16,
          DType::kI8,  DType::kU64, DType::kU32, DType::kU16,  DType::kU8};
}

std::vector<DType> SignedNumeric() {
  return {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI32, DType::kI16, DType::kI8};
}

std::vector<DType> FloatsAndInts() {
  return {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI32};
}

std::vector<DType> All() {
  std::vector<DType> v = Numeric();
  v.push_back(DType::kBool);
  return v;
}

std::string KernelName(std::string_view op) {
  return AsciiLower(op) + "_cpu";
}

Status InferBroadcast(InferContext& c, bool out_same_as_input0, DType out) {
  Shape shape;
  bool first = true;
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    if (first) {
      shape = c.input(i).shape;
      first = false;
      continue;
    }
    auto b = BroadcastShapes(shape, c.input(i).shape);
    if (!b.ok()) {
      return InvalidArgumentError(std::string(c.op_name()) + ": input " + std::to_string(i) + " of shape " +
                                  c.input(i).shape.ToString() + " does not broadcast with shape " +
                                  shape.ToString() + " of the inputs before it");
    }
    shape = *b;
  }
  c.SetOutput(0, out_same_as_input0 ? c.input(0).dtype : out, shape);
  return Status::Ok();
}

CostFn ElementwiseCost(double flops_per_element) {
  return [flops_per_element](const OpCall& c) {
    Cost cost;
    for (int i = 0; i < c.num_inputs(); ++i) {
      if (c.in(i).present) cost.bytes_read += c.in(i).bytes();
    }
    for (int i = 0; i < c.num_outputs(); ++i) cost.bytes_written += c.out(i).bytes();
    cost.flops = flops_per_element * static_cast<double>(c.num_outputs() ? c.out(0).numel() : 0);
    return cost;
  };
}

float RoundToOddFloat(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  // Truncate toward zero, then mark the lost bits in the last place.
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits |= 1u;
  std::memcpy(&f, &bits, sizeof bits);
  return f;
}

std::vector<double> BroadcastToDoubles(const Tensor& t, const Shape& out) {
  std::vector<double> src = kernels::ToDoubles(t);
  const int offset = out.rank() - t.rank();
  std::vector<double> v(out.numel());
  std::vector<int64_t> index(out.rank(), 0);
  for (int64_t flat = 0; flat < out.numel(); ++flat) {
    int64_t rest = flat;
    for (int d = out.rank() - 1; d >= 0; --d) {
      index[d] = rest % out[d];
      rest /= out[d];
    }
    int64_t src_flat = 0;
    for (int d = 0; d < t.rank(); ++d) {
      int64_t i = t.dim(d) == 1 ? 0 : index[d + offset];
      src_flat = src_flat * t.dim(d) + i;
    }
    v[flat] = src[src_flat];
  }
  return v;
}

namespace {

template <typename T>
T WrapFromDouble(double v) {
  if (!std::isfinite(v)) return T(0);
  double t = std::trunc(v);
  if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0)) {
    t = std::fmod(t, 18446744073709551616.0);  // 2^64; exact
    if (t >= 9223372036854775808.0) t -= 18446744073709551616.0;
    if (t < -9223372036854775808.0) t += 18446744073709551616.0;
  }
  return static_cast<T>(static_cast<int64_t>(t));  // modular for narrower types (C++20)
}

}  // namespace

void StoreReference(Tensor& out, const std::vector<double>& v) {
  switch (out.dtype()) {
    case DType::kBool: {
      bool* p = out.data<bool>();
      for (size_t i = 0; i < v.size(); ++i) p[i] = v[i] != 0.0;
      return;
    }
    case DType::kF64: {
      double* p = out.data<double>();
      for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
      return;
    }
    default: break;
  }
  OPSCOPE_SWITCH_INTEGER(out.dtype(), {
    scalar_t* p = out.data<scalar_t>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = WrapFromDouble<scalar_t>(v[i]);
    return;
  });
  kernels::FromDoubles(out, v);  // float outputs of a non-reference call
}

BroadcastPlan MakeBroadcastPlan(const Shape& out, const std::vector<const Tensor*>& operands) {
  const size_t n = operands.size();
  std::vector<std::vector<int64_t>> full(n);
  for (size_t k = 0; k < n; ++k) {
    full[k] = kernels::BroadcastStrides(operands[k]->shape(), operands[k]->strides(), out);
  }
  // Drop size-1 dims, then merge dim d into d+1 when every operand's stride
  // steps over d+1 exactly (stride[d] == stride[d+1] * size[d+1]).
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> st(n);
  for (int d = 0; d < out.rank(); ++d) {
    if (out[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; k < n && merge; ++k) merge = st[k].back() == full[k][d] * out[d];
    if (merge) {
      dims.back() *= out[d];
      for (size_t k = 0; k < n; ++k) st[k].back() = full[k][d];
    } else {
      dims.push_back(out[d]);
      for (size_t k = 0; k < n; ++k) st[k].push_back(full[k][d]);
    }
  }
  if (out.numel() == 0) {  // keep a zero dim so the plan has no elements
    dims = {0};
    for (size_t k = 0; k < n; ++k) st[k] = {0};
  }
  return BroadcastPlan{Shape(dims), std::move(st)};
}

}  // namespace opscope::ew
