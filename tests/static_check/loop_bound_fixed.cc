// Fixture for ops-debug check: loop_bound.cc with exclusive bounds, and an
// inclusive bound that is right (a window's last tap, written as such). No
// finding expected.
#include <algorithm>
#include <cstdint>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

Status CumsumCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  const int64_t n = ctx.in(0).numel();
  float running = 0;
  for (int64_t i = 0; i < n; ++i) {
    running += x[i];
    y[i] = running;
  }
  return Status::Ok();
}

Status SquareCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  return ctx.ParallelFor("square_cpu", ctx.in(0).numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = x[i] * x[i];
  });
}

Status Window3Cpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  const int64_t n = ctx.in(0).numel();
  for (int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int64_t j = std::max<int64_t>(0, i - 1); j <= std::min(n - 1, i + 1); ++j) s += x[j];
    y[i] = s;
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("fixture_cumsum_fixed").Input("x").Output("y").Kernel("cpu", CumsumCpu);
OPSCOPE_OP("fixture_square_fixed").Input("x").Output("y").Kernel("cpu", SquareCpu);
OPSCOPE_OP("fixture_window3_fixed").Input("x").Output("y").Kernel("cpu", Window3Cpu);
