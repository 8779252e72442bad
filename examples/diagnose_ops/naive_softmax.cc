// naive_softmax: y[r, :] = exp(x[r, :]) / sum(exp(x[r, :])) over the last dim.
// BUG: the kernel does not subtract the row's max first, so a row reaching
// past 88.7 overflows exp to Inf in float32, the sum is Inf, and Inf/Inf is
// NaN where the reference (max subtracted, in double) is a fine
// distribution. The row also holds 0, which is no division by zero here.
//
//   ops-debug diagnose --plugin libdiagnose_ops.so --op naive_softmax --input-shapes "[4,256]" --fill sequential
#include <cmath>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

Status SoftmaxCpu(KernelContext& ctx) {
  const opscope::Tensor& x = ctx.in(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous() || x.rank() < 1) {
    return opscope::UnimplementedError("naive_softmax: contiguous float32 of rank >= 1");
  }
  const int64_t L = x.dim(x.rank() - 1), R = L ? x.numel() / L : 0;
  const float* in = x.data<float>();
  float* out = ctx.out(0).data<float>();
  return ctx.ParallelFor("naive_softmax_cpu", R, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float sum = 0;
      for (int64_t i = 0; i < L; ++i) sum += std::exp(in[r * L + i]);  // the bug: no max subtracted
      for (int64_t i = 0; i < L; ++i) out[r * L + i] = std::exp(in[r * L + i]) / sum;
    }
  }, /*default_block=*/4);
}

Status SoftmaxReference(KernelContext& ctx) {
  const opscope::Tensor& x = ctx.in(0);
  const int64_t L = x.dim(x.rank() - 1), R = L ? x.numel() / L : 0;
  for (int64_t r = 0; r < R; ++r) {
    double max = -INFINITY, sum = 0;
    for (int64_t i = 0; i < L; ++i) max = std::fmax(max, x.FlatGetAsDouble(r * L + i));
    for (int64_t i = 0; i < L; ++i) sum += std::exp(x.FlatGetAsDouble(r * L + i) - max);
    for (int64_t i = 0; i < L; ++i) ctx.out(0).FlatSetFromDouble(r * L + i, std::exp(x.FlatGetAsDouble(r * L + i) - max) / sum);
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("naive_softmax")
    .Doc("softmax over the last dim (BUG: no max subtracted before exp: a row past 88.7 gives NaN)")
    .Input("x").Output("y")
    .TypeConstraint("T", {opscope::DType::kF32})
    .SameShape()
    .Reference(SoftmaxReference)
    .Kernel("cpu", SoftmaxCpu);
