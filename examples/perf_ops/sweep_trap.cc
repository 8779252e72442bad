// sweep_trap: y = x + 1, float32, with the tunable "block" (64, 128, 256, 512,
// 1024) whose value 512 is fast and WRONG: with block=512 the kernel skips
// every odd-numbered block, so it does half the work. A sweep must check every
// candidate against the reference and refuse this one however fast it is;
// every other value is right. A skipped block leaves its part of y as the
// memory was (zeros when fresh, a previous run's right answer when the
// allocator hands the same memory back) except its first element, which it
// sets to 0: so the trap is wrong whatever memory it gets.
//
//   ops-debug run --plugin build/lib/libperf_ops.so --op sweep_trap --input-shapes '[1024,1024]' --tunables block=512   (fails)
#include <algorithm>

#include "opscope/op.h"
#include "perf_launch.h"

namespace {

using opscope::KernelContext;
using opscope::Status;
using opscope::Tensor;

constexpr int64_t kTrapBlock = 512;

Status SweepTrapCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous()) {
    return opscope::UnimplementedError("sweep_trap: the cpu kernel takes contiguous float32");
  }
  const int64_t n = x.numel();
  if (n == 0) return Status::Ok();
  const int64_t block = std::max<int64_t>(1, ctx.tunable("block", 64));
  const float* in = x.data<float>();
  float* out = ctx.out(0).data<float>();
  opscope::KernelLaunch k{
      .name = "sweep_trap_cpu",
      .config = perf_ops::Config1D(n, block),
      .host = [&](const opscope::BlockContext& b) {
        const int64_t begin = b.linear_block() * block, end = std::min(n, begin + block);
        if (block == kTrapBlock && b.linear_block() % 2 == 1) {  // the trap
          out[begin] = 0.0f;
          return;
        }
        for (int64_t i = begin; i < end; ++i) out[i] = in[i] + 1.0f;
      }};
  return perf_ops::LaunchAndWait(ctx, k);
}

Status SweepTrapReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  for (int64_t i = 0; i < x.numel(); ++i) ctx.out(0).FlatSetFromDouble(i, x.FlatGetAsDouble(i) + 1.0);
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("sweep_trap")
    .Doc("y = x + 1 (TRAP: block=512 skips every other block: fast and wrong)")
    .Input("x").Output("y")
    .TypeConstraint("T", {opscope::DType::kF32})
    .SameShape()
    .Cost([](const opscope::OpCall& c) {
      return opscope::Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(),
                           .flops = static_cast<double>(c.in(0).numel())};
    })
    .Tunable("block", perf_ops::BlockChoices())
    .Reference(SweepTrapReference)
    .Kernel("cpu", SweepTrapCpu, "sweep_trap_cpu");
