// Fixture for ops-debug check (index-read-before-set): a gather whose row
// index is only set on one branch, and a loop that starts from a counter
// nothing set. The tests expect a finding on each marked line;
// read_before_set_fixed.cc sets both first.
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
  int64_t row;
  if (want >= 0 && want < rows) row = want;
  for (int64_t c = 0; c < cols; ++c) y[c] = x[row * cols + c];  // BUG: row unset when want is out of range
  return Status::Ok();
}

Status TailCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  const int64_t n = ctx.in(0).numel();
  int64_t start;
  for (int64_t i = start; i < n; ++i) y[i] = x[i];  // BUG: start never set
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("fixture_pick_row").Input("x").Output("y").Attr("row", 0).Kernel("cpu", PickRowCpu);
OPSCOPE_OP("fixture_tail").Input("x").Output("y").Kernel("cpu", TailCpu);
