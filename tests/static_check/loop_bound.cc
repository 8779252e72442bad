// Fixture for ops-debug check (loop-bound-inclusive): two kernels whose loops
// run one element past their buffers. The tests expect a finding on each
// marked line; loop_bound_fixed.cc is the same kernels done right.
#include <cstdint>
#include <vector>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

Status CumsumCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  const int64_t n = ctx.in(0).numel();
  float running = 0;
  for (int64_t i = 0; i <= n; ++i) {  // BUG: i == n is past the end
    running += x[i];
    y[i] = running;
  }
  return Status::Ok();
}

Status SquareCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  return ctx.ParallelFor("square_cpu", ctx.in(0).numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i <= e; ++i) y[i] = x[i] * x[i];  // BUG: e is the end, not the last
  });
}

}  // namespace

OPSCOPE_OP("fixture_cumsum").Input("x").Output("y").Kernel("cpu", CumsumCpu);
OPSCOPE_OP("fixture_square").Input("x").Output("y").Kernel("cpu", SquareCpu);
