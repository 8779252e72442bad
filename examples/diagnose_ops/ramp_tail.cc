// ramp_tail: y[i] = start + step * i over x's shape. BUG: each block of 256
// runs i over [first, first + 256) and never clamps that end to n, so when n
// is not a multiple of 256 the last block writes on from y[n], past the end.
// With n a multiple of 256 the end never passes n and the kernel is right,
// which is why it passed its tests. `ops-debug check` finds it too (a block
// loop whose end is never clamped): with --source, the two clues agree.
//
//   ops-debug diagnose --plugin libdiagnose_ops.so --op ramp_tail --input-shapes "[1000]"
//   ops-debug diagnose --plugin libdiagnose_ops.so --op ramp_tail --input-shapes "[1000]" --device cuda
#include "diagnose_ptx.h"
#include "opscope/device.h"
#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

constexpr int64_t kBlock = 256;

Status RampCpu(KernelContext& ctx) {
  opscope::Tensor& y = ctx.out(0);
  if (y.dtype() != opscope::DType::kF32) return opscope::UnimplementedError("ramp_tail: float32 only");
  const int64_t n = y.numel();
  const float start = static_cast<float>(ctx.attrs().f("start", 0.0)), step = static_cast<float>(ctx.attrs().f("step", 1.0));
  float* out = y.data<float>();
  opscope::KernelLaunch k{.name = "ramp_tail_cpu",
                          .config = {.grid = {(n + kBlock - 1) / kBlock}, .block = {kBlock}},
                          .host = [=](const opscope::BlockContext& b) {
                            const int64_t first = b.linear_block() * kBlock;
                            const int64_t end = first + kBlock;  // the bug: std::min(first + kBlock, n)
                            for (int64_t i = first; i < end; ++i) out[i] = start + step * static_cast<float>(i);
                          }};
  return ctx.Launch(k);
}

// The same bug on the GPU (diagnose_ptx.h): one thread per element, no guard.
Status RampCuda(KernelContext& ctx) {
  opscope::Tensor& y = ctx.out(0);
  if (y.dtype() != opscope::DType::kF32) return opscope::UnimplementedError("ramp_tail: float32 only");
  uint64_t n = static_cast<uint64_t>(y.numel());
  if (n == 0) return Status::Ok();
  OPSCOPE_ASSIGN_OR_RETURN(const void* fn, ctx.device()->LoadKernel("ptx", kDiagnosePtx, "ramp_tail_f32"));
  void* out = y.raw_data();
  float start = static_cast<float>(ctx.attrs().f("start", 0.0)), step = static_cast<float>(ctx.attrs().f("step", 1.0));
  void* args[] = {&out, &n, &start, &step};
  opscope::KernelLaunch k{.name = "ramp_tail_cuda",
                          .config = {.grid = {static_cast<int64_t>((n + kBlock - 1) / kBlock)}, .block = {kBlock}},
                          .device = {.function = fn, .args = args}};
  return ctx.Launch(k);
}

Status RampReference(KernelContext& ctx) {
  const double start = ctx.attrs().f("start", 0.0), step = ctx.attrs().f("step", 1.0);
  for (int64_t i = 0; i < ctx.out(0).numel(); ++i) ctx.out(0).FlatSetFromDouble(i, start + step * static_cast<double>(i));
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("ramp_tail")
    .Doc("y = start + step * flat index, x's shape (BUG: writes one past the end when n % 256 != 0)")
    .Input("x").Output("y")
    .Attr("start", 0.0f).Attr("step", 1.0f)
    .TypeConstraint("T", {opscope::DType::kF32})
    .SameShape()
    .Reference(RampReference)
    .Kernel("cpu", RampCpu)
    .Kernel("cuda", RampCuda);
