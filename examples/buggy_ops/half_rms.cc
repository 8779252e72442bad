// half_rms: y[r] = sqrt(mean(x[r, :]^2)). The kernel squares in the storage
// type: in float16 any |x| > 255.9 squares past 65504 to Inf, and the row's
// result is Inf where the float64 reference (and a float32 kernel) gives a
// finite value. ops-debug reports it as Inf on the actual side only, with
// the rows.
#include <cmath>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;
using opscope::Tensor;

Status RmsInfer(opscope::InferContext& c) {
  const auto& x = c.input(0);
  if (x.shape.rank() != 2) return opscope::InvalidArgumentError("half_rms: x must be [R,L], got " + x.shape.ToString());
  c.SetOutput(0, x.dtype, opscope::Shape({x.shape.dim(0)}));
  return Status::Ok();
}

template <typename T>
Status RmsTyped(KernelContext& ctx, const Tensor& x, Tensor& y) {
  const int64_t R = x.dim(0), L = x.dim(1);
  const T* in = x.data<T>();
  return ctx.ParallelFor("half_rms_cpu", R, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float sum = 0;
      for (int64_t i = 0; i < L; ++i) {
        const T sq = static_cast<T>(static_cast<float>(in[r * L + i]) * static_cast<float>(in[r * L + i]));  // the bug
        sum += static_cast<float>(sq);
      }
      y.data<T>()[r] = static_cast<T>(std::sqrt(sum / static_cast<float>(L)));
    }
  }, /*default_block=*/8);
}

Status RmsCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (!x.is_contiguous()) return opscope::UnimplementedError("half_rms: the cpu kernel needs a contiguous x");
  switch (x.dtype()) {
    case opscope::DType::kF16: return RmsTyped<opscope::Half>(ctx, x, ctx.out(0));
    case opscope::DType::kF32: return RmsTyped<float>(ctx, x, ctx.out(0));
    default: return opscope::UnimplementedError("half_rms: float16 or float32");
  }
}

Status RmsReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t R = x.dim(0), L = x.dim(1);
  for (int64_t r = 0; r < R; ++r) {
    double s = 0;
    for (int64_t i = 0; i < L; ++i) s += x.FlatGetAsDouble(r * L + i) * x.FlatGetAsDouble(r * L + i);
    ctx.out(0).FlatSetFromDouble(r, std::sqrt(s / static_cast<double>(L)));
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("half_rms")
    .Doc("root mean square of each row (BUG: squares in the storage type, so float16 overflows)")
    .Domain("com.opscope.examples")  // examples/models/half_section.onnx runs it
    .Input("x").Output("y")
    .TypeConstraint("T", {opscope::DType::kF16, opscope::DType::kF32})
    .Infer(RmsInfer)
    .Reference(RmsReference)
    .Kernel("cpu", RmsCpu);
