// Fixture for ops-debug check: tail_guard.cc with the block's end clamped
// to the size. No finding expected.
#include <algorithm>
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
        const int64_t begin = b.block_idx.x * block, end = std::min(n, begin + block);
        for (int64_t i = begin; i < end; ++i) y[i] = 2 * x[i];
      }};
  return ctx.Launch(launch);
}

}  // namespace

OPSCOPE_OP("fixture_scale_fixed").Input("x").Output("y").Kernel("cpu", ScaleCpu);
