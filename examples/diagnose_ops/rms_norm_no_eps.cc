// rms_norm_no_eps: y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps). BUG: the
// kernel leaves eps out, so a row of zeros divides 0 by 0 and comes out NaN
// where the reference gives 0.
//
//   ops-debug diagnose --plugin libdiagnose_ops.so --op rms_norm_no_eps --inputs examples/diagnose_ops/zero_row.npy
#include <cmath>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

Status NormCpu(KernelContext& ctx) {
  const opscope::Tensor& x = ctx.in(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous() || x.rank() < 1) {
    return opscope::UnimplementedError("rms_norm_no_eps: contiguous float32 of rank >= 1");
  }
  const int64_t L = x.dim(x.rank() - 1), R = L ? x.numel() / L : 0;
  const float* in = x.data<float>();
  float* out = ctx.out(0).data<float>();
  return ctx.ParallelFor("rms_norm_no_eps_cpu", R, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float sum = 0;
      for (int64_t i = 0; i < L; ++i) sum += in[r * L + i] * in[r * L + i];
      const float rms = std::sqrt(sum / static_cast<float>(L));  // the bug: + eps
      for (int64_t i = 0; i < L; ++i) out[r * L + i] = in[r * L + i] / rms;
    }
  }, /*default_block=*/4);
}

Status NormReference(KernelContext& ctx) {
  const opscope::Tensor& x = ctx.in(0);
  const double eps = ctx.attrs().f("eps", 1e-6);
  const int64_t L = x.dim(x.rank() - 1), R = L ? x.numel() / L : 0;
  for (int64_t r = 0; r < R; ++r) {
    double sum = 0;
    for (int64_t i = 0; i < L; ++i) sum += x.FlatGetAsDouble(r * L + i) * x.FlatGetAsDouble(r * L + i);
    const double rms = std::sqrt(sum / static_cast<double>(L) + eps);
    for (int64_t i = 0; i < L; ++i) ctx.out(0).FlatSetFromDouble(r * L + i, x.FlatGetAsDouble(r * L + i) / rms);
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("rms_norm_no_eps")
    .Doc("x / sqrt(mean(x^2) + eps) over the last dim (BUG: the kernel drops eps: a zero row gives NaN)")
    .Input("x").Output("y")
    .Attr("eps", 1e-6f)
    .TypeConstraint("T", {opscope::DType::kF32})
    .SameShape()
    .Reference(NormReference)
    .Kernel("cpu", NormCpu);
