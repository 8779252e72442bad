// log2_histogram: counts[k] = how many x fall in [2^(k-16), 2^(k-15)), for
// positive finite x, 32 bins. Correct for the inputs it was written for; it
// trusts them: an Inf, a 0 or a NaN gives an exponent far outside the bins
// and the count is written far outside `counts`. Fed by an Exp that
// overflowed (examples/diagnose_ops/exp_histogram.onnx), it crashes here while
// the fault is upstream: diagnose names the Exp.
#include <cmath>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

constexpr int64_t kBins = 32, kOffset = 16;

Status HistInfer(opscope::InferContext& c) {
  c.SetOutput(0, opscope::DType::kF32, opscope::Shape({kBins}));
  return Status::Ok();
}

Status HistCpu(KernelContext& ctx) {
  const opscope::Tensor& x = ctx.in(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous()) return opscope::UnimplementedError("log2_histogram: float32");
  float* counts = ctx.out(0).data<float>();
  for (int64_t k = 0; k < kBins; ++k) counts[k] = 0;
  const float* in = x.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) counts[std::ilogb(in[i]) + kOffset] += 1;  // trusts ilogb's range
  return Status::Ok();
}

Status HistReference(KernelContext& ctx) {
  const opscope::Tensor& x = ctx.in(0);
  for (int64_t k = 0; k < kBins; ++k) ctx.out(0).FlatSetFromDouble(k, 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.FlatGetAsDouble(i);
    if (!(v > 0) || !std::isfinite(v)) return opscope::InvalidArgumentError("log2_histogram: x must be positive and finite");
    const int64_t k = std::clamp<int64_t>(std::ilogb(v) + kOffset, 0, kBins - 1);
    ctx.out(0).FlatSetFromDouble(k, ctx.out(0).FlatGetAsDouble(k) + 1);
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("log2_histogram")
    .Doc("32-bin histogram of log2(x) for positive finite x (trusts its input: no range check)")
    .Domain("com.opscope.examples")
    .Input("x").Output("counts")
    .TypeConstraint("T", {opscope::DType::kF32})
    .Infer(HistInfer)
    .Reference(HistReference)
    .Kernel("cpu", HistCpu);
