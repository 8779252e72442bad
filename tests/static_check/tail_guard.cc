// Fixture for ops-debug check (missing-tail-guard): a kernel launched in
// blocks of `block` items whose last block runs past the tensor when its size
// is not a multiple of the block. The tests expect a finding on the marked
// line; tail_guard_fixed.cc clamps the end.
#include <cstdint>

#include "opscope/op.h"

namespace {

using opscope::BlockContext;
using opscope::KernelContext;
using opscope::KernelLaunch;
using opscope::Status;

Status ScaleCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  const int64_t n = ctx.in(0).numel(), block = 256;
  KernelLaunch launch{
      .name = "fixture_scale_cpu",
      .config = {.grid = {(n + block - 1) / block, 1, 1}, .block = {block, 1, 1}},
      .host = [&](const BlockContext& b) {
        const int64_t begin = b.block_idx.x * block;
        for (int64_t i = begin; i < begin + block; ++i) y[i] = 2 * x[i];  // BUG: no min(n, ...)
      }};
  return ctx.Launch(launch);
}

}  // namespace

OPSCOPE_OP("fixture_scale").Input("x").Output("y").Kernel("cpu", ScaleCpu);
