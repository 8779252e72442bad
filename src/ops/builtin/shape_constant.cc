// Ops that make tensors from shapes and attributes rather than from data:
// Shape, ConstantOfShape, Constant, Range.
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "ops/builtin/shape_util.h"
#include "core/text_format.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

using shape_ops::IntsToString;

// ---- Shape ------------------------------------------------------------------------

// [start, end) of the dims Shape reports (opset 15: negative counts from the
// end, both clamp to [0, rank]).
std::pair<int, int> ShapeRange(const Attrs& a, int rank) {
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return static_cast<int>(std::clamp<int64_t>(v, 0, rank));
  };
  int start = clamp(a.i("start", 0));
  int end = a.has("end") ? clamp(a.i("end")) : rank;
  return {start, std::max(start, end)};
}

Status InferShape(InferContext& c) {
  auto [start, end] = ShapeRange(c.attrs(), c.input(0).shape.rank());
  c.SetOutput(0, DType::kI64, Shape({end - start}));
  return Status::Ok();
}

Status ShapeCpu(KernelContext& ctx) {
  auto [start, end] = ShapeRange(ctx.attrs(), ctx.in(0).rank());
  std::memcpy(ctx.out(0).raw_data(), ctx.in(0).shape().dims().data() + start,
              static_cast<size_t>(end - start) * sizeof(int64_t));
  return Status::Ok();
}

Status ShapeReference(KernelContext& ctx) {
  const Shape& s = ctx.in(0).shape();
  int64_t start = ctx.attrs().i("start", 0), end = ctx.attrs().has("end") ? ctx.attrs().i("end") : s.rank();
  if (start < 0) start += s.rank();
  if (end < 0) end += s.rank();
  int64_t* out = ctx.out(0).data<int64_t>();
  int64_t k = 0;
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (i >= start && i < end) out[k++] = s[static_cast<int>(i)];
  }
  return Status::Ok();
}

// ---- ConstantOfShape -------------------------------------------------------------

StatusOr<std::vector<int64_t>> OutputDims(const InferContext& c) {
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> dims, shape_ops::ValueInts(c, 0, "input"));
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgumentError("ConstantOfShape: shape " + IntsToString(dims) + " has a negative dim");
  }
  return dims;
}

Status CheckFillValue(const Attrs& a) {
  const Tensor* v = a.tensor("value");
  if (v != nullptr && v->numel() != 1) {
    return InvalidArgumentError("ConstantOfShape: attribute 'value' must hold exactly one element, got " +
                                v->Describe());
  }
  return Status::Ok();
}

Status InferConstantOfShape(InferContext& c) {
  OPSCOPE_RETURN_IF_ERROR(CheckFillValue(c.attrs()));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> dims, OutputDims(c));
  const Tensor* v = c.attrs().tensor("value");
  c.SetOutput(0, v ? v->dtype() : DType::kF32, Shape(dims));
  return Status::Ok();
}

Status ConstantOfShapeCpu(KernelContext& ctx) {
  Tensor& y = ctx.out(0);
  const Tensor* v = ctx.attrs().tensor("value");
  std::vector<char> value(y.element_size(), 0);
  if (v != nullptr) {
    OPSCOPE_ASSIGN_OR_RETURN(Tensor c, v->Contiguous());
    std::memcpy(value.data(), c.raw_data(), value.size());
  }
  char* out = static_cast<char*>(y.raw_data());
  const size_t es = y.element_size();
  return ctx.ParallelFor("constant_of_shape_cpu", y.numel(), [&](int64_t b, int64_t e) {
    shape_ops::FillElements(out + b * static_cast<int64_t>(es), e - b, value.data(), es);
  }, 1 << 16);
}

Status ConstantOfShapeReference(KernelContext& ctx) {
  const Tensor* v = ctx.attrs().tensor("value");
  double value = v ? v->FlatGetAsDouble(0) : 0.0;
  std::vector<double> out(ctx.out(0).numel(), value);
  kernels::FromDoubles(ctx.out(0), out);
  return Status::Ok();
}

// ---- Constant --------------------------------------------------------------------

// The one value attribute given, as a tensor.
StatusOr<Tensor> ConstantValue(const Attrs& a) {
  static const char* kNames[] = {"value", "value_float", "value_floats", "value_int", "value_ints",
                                 "value_string", "value_strings"};
  std::vector<std::string> given;
  for (const char* n : kNames) if (a.has(n)) given.push_back(n);
  if (given.size() != 1) {
    const std::string list = JoinMapped(given, ", ", [](const auto& g) { return std::string(g); });
    return InvalidArgumentError("Constant: exactly one of value, value_float(s), value_int(s) must be given, got " +
                                (given.empty() ? std::string("none") : list));
  }
  const std::string& n = given[0];
  if (n == "value_string" || n == "value_strings") {
    return UnimplementedError("Constant: string tensors (attribute '" + n + "') are not supported");
  }
  if (n == "value") return *a.tensor("value");
  const bool is_float = n == "value_float" || n == "value_floats";
  const bool is_list = n == "value_floats" || n == "value_ints";
  std::vector<double> vals;
  if (n == "value_float") vals = {a.f(n)};
  if (n == "value_floats") vals = a.floats(n);
  if (n == "value_int") vals = {static_cast<double>(a.i(n))};
  std::vector<int64_t> ints = n == "value_ints" ? a.ints(n) : std::vector<int64_t>{};
  const int64_t count = n == "value_ints" ? static_cast<int64_t>(ints.size()) : static_cast<int64_t>(vals.size());
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(is_float ? DType::kF32 : DType::kI64,
                                                   is_list ? Shape({count}) : Shape()));
  if (n == "value_ints") {
    std::memcpy(t.raw_data(), ints.data(), ints.size() * sizeof(int64_t));  // exact beyond 2^53
  } else {
    kernels::FromDoubles(t, vals);
  }
  return t;
}

Status InferConstant(InferContext& c) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, ConstantValue(c.attrs()));
  c.SetOutput(0, t.dtype(), t.shape());
  return Status::Ok();
}

Status ConstantCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, ConstantValue(ctx.attrs()));
  return shape_ops::CopyInto(ctx, "constant_cpu", t, ctx.out(0));
}

Status ConstantReference(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, ConstantValue(ctx.attrs()));
  std::vector<int64_t> src(t.numel());
  std::iota(src.begin(), src.end(), int64_t{0});
  return shape_ops::ReferenceGather(t, src, ctx.out(0));
}

// ---- Range -------------------------------------------------------------------------

StatusOr<double> ScalarValue(const InferContext& c, int i, const char* name) {
  const Tensor* t = c.input_value(i);
  if (t == nullptr) {
    return InvalidArgumentError(std::string("Range: the value of input '") + name +
                                "' is needed to infer the output shape, but none was given");
  }
  if (t->numel() != 1) {
    return InvalidArgumentError(std::string("Range: input '") + name + "' must be a scalar, got shape " +
                                t->shape().ToString());
  }
  return t->FlatGetAsDouble(0);
}

// max(ceil((limit - start) / delta), 0), exactly for integer types.
StatusOr<int64_t> RangeCount(DType dt, const Tensor& start, const Tensor& limit, const Tensor& delta) {
  if (IsInteger(dt)) {
    int64_t s = kernels::ToInt64s(start)[0], l = kernels::ToInt64s(limit)[0], d = kernels::ToInt64s(delta)[0];
    if (d == 0) return InvalidArgumentError("Range: delta is 0");
    int64_t span = l - s;
    if ((span > 0) != (d > 0) || span == 0) return int64_t{0};
    return (span + d + (d > 0 ? -1 : 1)) / d;
  }
  double s = start.FlatGetAsDouble(0), l = limit.FlatGetAsDouble(0), d = delta.FlatGetAsDouble(0);
  if (d == 0) return InvalidArgumentError("Range: delta is 0");
  double n = std::ceil((l - s) / d);
  if (!(n > 0)) return int64_t{0};
  if (n > 1e15) return InvalidArgumentError("Range: start " + std::to_string(s) + ", limit " + std::to_string(l) +
                                            ", delta " + std::to_string(d) + " make too many elements");
  return static_cast<int64_t>(n);
}

Status InferRange(InferContext& c) {
  const char* names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) { OPSCOPE_RETURN_IF_ERROR(ScalarValue(c, i, names[i]).status()); }
  OPSCOPE_ASSIGN_OR_RETURN(int64_t n, RangeCount(c.input(0).dtype, *c.input_value(0), *c.input_value(1),
                                                 *c.input_value(2)));
  c.SetOutput(0, c.input(0).dtype, Shape({n}));
  return Status::Ok();
}

// Integers step exactly in int64; floats in double, rounded once per element.
template <typename T>
Status RangeTyped(KernelContext& ctx) {
  using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
  const Acc start = static_cast<Acc>(*ctx.in(0).data<T>());
  const Acc delta = static_cast<Acc>(*ctx.in(2).data<T>());
  T* out = ctx.out(0).data<T>();
  return ctx.ParallelFor("range_cpu", ctx.out(0).numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = static_cast<T>(start + static_cast<Acc>(i) * delta);
  }, 1 << 16);
}

Status RangeCpu(KernelContext& ctx) {
  switch (ctx.out(0).dtype()) {
    case DType::kF64: return RangeTyped<double>(ctx);
    case DType::kF32: return RangeTyped<float>(ctx);
    case DType::kI64: return RangeTyped<int64_t>(ctx);
    case DType::kI32: return RangeTyped<int32_t>(ctx);
    case DType::kI16: return RangeTyped<int16_t>(ctx);
    default: return UnimplementedError(std::string("Range: dtype ") + DTypeName(ctx.out(0).dtype()));
  }
}

Status RangeReference(KernelContext& ctx) {
  double start = ctx.in(0).FlatGetAsDouble(0), delta = ctx.in(2).FlatGetAsDouble(0);
  std::vector<double> out(ctx.out(0).numel());
  for (size_t i = 0; i < out.size(); ++i) out[i] = start + static_cast<double>(i) * delta;
  kernels::FromDoubles(ctx.out(0), out);
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("Shape")
    .Doc("The input's dims [start, end) as int64 (negative start/end count from the end and clamp)")
    .Input("data", "T").Output("shape", "T1")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("T1", {DType::kI64})
    .Attr("start", 0).OptionalAttr("end", AttrType::kInt)
    .Infer(InferShape)
    .Cost([](const OpCall& c) { return Cost{.bytes_read = 0, .bytes_written = c.out(0).bytes(), .flops = 0}; })
    .Reference(ShapeReference)
    .Kernel("cpu", ShapeCpu, "shape_cpu");

OPSCOPE_OP("ConstantOfShape")
    .Doc("A tensor of the given shape filled with the one-element 'value' (default float32 0)")
    .ValueInput("input", "T1").Output("output", "T2")
    .TypeConstraint("T1", {DType::kI64})
    .TypeConstraint("T2", {DType::kF16, DType::kF32, DType::kF64, DType::kBF16, DType::kI8, DType::kI16, DType::kI32,
                           DType::kI64, DType::kU8, DType::kBool})
    .OptionalAttr("value", AttrType::kTensor)
    .Infer(InferConstantOfShape)
    .Cost([](const OpCall& c) { return Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes()}; })
    .Tunable("block", {65536, 16384, 262144})
    .Reference(ConstantOfShapeReference)
    .Kernel("cpu", ConstantOfShapeCpu, "constant_of_shape_cpu");

OPSCOPE_OP("Constant")
    .Doc("The tensor given by one of value, value_float, value_floats, value_int, value_ints")
    .Output("output", "T")
    .TypeConstraint("T", AllDTypes())
    .OptionalAttr("value", AttrType::kTensor)
    .OptionalAttr("value_float", AttrType::kFloat).OptionalAttr("value_floats", AttrType::kFloats)
    .OptionalAttr("value_int", AttrType::kInt).OptionalAttr("value_ints", AttrType::kInts)
    .OptionalAttr("value_string", AttrType::kString).OptionalAttr("value_strings", AttrType::kStrings)
    .Infer(InferConstant)
    .Cost([](const OpCall& c) { return Cost{.bytes_read = c.out(0).bytes(), .bytes_written = c.out(0).bytes()}; })
    .Tunable("block", {65536, 16384, 262144})
    .Reference(ConstantReference)
    .Kernel("cpu", ConstantCpu, "constant_cpu");

OPSCOPE_OP("Range")
    .Doc("start, start+delta, ... while before limit: max(ceil((limit-start)/delta), 0) elements")
    .ValueInput("start", "T").ValueInput("limit", "T").ValueInput("delta", "T").Output("output", "T")
    .TypeConstraint("T", {DType::kF32, DType::kF64, DType::kI16, DType::kI32, DType::kI64})
    .Infer(InferRange)
    .Cost([](const OpCall& c) {
      return Cost{.bytes_read = 3 * c.in(0).bytes(), .bytes_written = c.out(0).bytes(),
                  .flops = 2.0 * c.out(0).numel()};
    })
    .Tunable("block", {65536, 16384, 262144})
    .Reference(RangeReference)
    .Kernel("cpu", RangeCpu, "range_cpu");

}  // namespace opscope
