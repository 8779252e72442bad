// mantissa: y = |x| scaled by a power of two into [1, 2), 0 for 0. BUG: the
// kernel normalises by hand and forgets the sign and zero: for x <= 0 the
// `v < 1` loop doubles v towards -inf (or keeps 0) and never exits.
//
//   ops-debug diagnose --plugin libdiagnose_ops.so --op mantissa --input-shapes "[4096]" --timeout 3s
//   ... --device cuda: the same loop in a GPU kernel (diagnose_ptx.h), which never finishes either
#include <cmath>

#include "diagnose_ptx.h"
#include "opscope/device.h"
#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

__attribute__((noinline)) float Normalise(float v) {
  while (v >= 2.0f) v *= 0.5f;
  while (v < 1.0f) v *= 2.0f;  // the bug: never ends for v <= 0
  return v;
}

Status MantissaCpu(KernelContext& ctx) {
  const opscope::Tensor& x = ctx.in(0);
  opscope::Tensor& y = ctx.out(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous()) {
    return opscope::UnimplementedError("mantissa: contiguous float32 only");
  }
  const float* in = x.data<float>();
  float* out = y.data<float>();
  return ctx.ParallelFor("mantissa_cpu", x.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = Normalise(in[i]);
  }, /*default_block=*/1024);
}

Status MantissaCuda(KernelContext& ctx) {
  const opscope::Tensor& x = ctx.in(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous()) {
    return opscope::UnimplementedError("mantissa: contiguous float32 only");
  }
  uint64_t n = static_cast<uint64_t>(x.numel());
  if (n == 0) return Status::Ok();
  OPSCOPE_ASSIGN_OR_RETURN(const void* fn, ctx.device()->LoadKernel("ptx", kDiagnosePtx, "mantissa_f32"));
  const void* in = x.raw_data();
  void* out = ctx.out(0).raw_data();
  void* args[] = {&in, &out, &n};
  constexpr int64_t kThreads = 256;
  opscope::KernelLaunch k{.name = "mantissa_cuda",
                          .config = {.grid = {static_cast<int64_t>((n + kThreads - 1) / kThreads)}, .block = {kThreads}},
                          .device = {.function = fn, .args = args}};
  return ctx.Launch(k);
}

Status MantissaReference(KernelContext& ctx) {
  for (int64_t i = 0; i < ctx.in(0).numel(); ++i) {
    const double v = std::fabs(ctx.in(0).FlatGetAsDouble(i));
    int e = 0;
    const double m = v == 0 ? 0 : std::frexp(v, &e) * 2;  // frexp: [0.5, 1)
    ctx.out(0).FlatSetFromDouble(i, m);
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("mantissa")
    .Doc("|x| scaled into [1, 2) by a power of two, 0 for 0 (BUG: spins forever on x <= 0)")
    .Input("x").Output("y")
    .TypeConstraint("T", {opscope::DType::kF32})
    .SameShape()
    .Reference(MantissaReference)
    .Kernel("cpu", MantissaCpu)
    .Kernel("cuda", MantissaCuda);
