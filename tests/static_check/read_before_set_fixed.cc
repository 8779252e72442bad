// Fixture for ops-debug check: read_before_set.cc with both indices set
// where they are declared. No finding expected.
#include <cstdint>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

Status PickRowCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  const int64_t rows = ctx.in(0).dim(0), cols = ctx.in(0).dim(1);
  const int64_t want = ctx.attrs().i("row");
  int64_t row = 0;
  if (want >= 0 && want < rows) row = want;
  for (int64_t c = 0; c < cols; ++c) y[c] = x[row * cols + c];
  return Status::Ok();
}

Status TailCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  const int64_t n = ctx.in(0).numel();
  int64_t start = n / 2;
  for (int64_t i = start; i < n; ++i) y[i] = x[i];
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("fixture_pick_row_fixed").Input("x").Output("y").Attr("row", 0).Kernel("cpu", PickRowCpu);
OPSCOPE_OP("fixture_tail_fixed").Input("x").Output("y").Kernel("cpu", TailCpu);
