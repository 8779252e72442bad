// perf_launch.h: what the perf_ops kernels share: the "block" tunable every
// one of them declares, and a launch of `items` work items in blocks of it.
#pragma once

#include <cstdint>
#include <vector>

#include "opscope/op.h"

namespace perf_ops {

// Work items per block. The first (the default) is deliberately small, so
// that a sweep has something to find.
inline const std::vector<int64_t>& BlockChoices() {
  static const std::vector<int64_t> kChoices = {64, 128, 256, 512, 1024};
  return kChoices;
}

// A 1-D launch config: `items` work items, `block` per block.
inline opscope::LaunchConfig Config1D(int64_t items, int64_t block, int vector_width = 1) {
  return {.grid = {(items + block - 1) / block, 1, 1}, .block = {block, 1, 1}, .vector_width = vector_width};
}

// Launches and waits: the body borrows the caller's locals, and the next
// launch may read what this one wrote.
inline opscope::Status LaunchAndWait(opscope::KernelContext& ctx, const opscope::KernelLaunch& k) {
  OPSCOPE_RETURN_IF_ERROR(ctx.Launch(k));
  if (ctx.stream() != nullptr) OPSCOPE_RETURN_IF_ERROR(ctx.stream()->Synchronize());
  return opscope::Status::Ok();
}

}  // namespace perf_ops
