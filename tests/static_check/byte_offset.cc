// Fixture for ops-debug check (byte-offset-without-element-size): a cast
// kernel that walks its input through a byte pointer and forgets that an
// element is four bytes wide. tests/static_check_cli_test.cc and
// src/analysis/static_check/static_check_test.cc expect a finding at the
// marked lines; byte_offset_fixed.cc is the same kernel done right.
#include <cstdint>
#include <cstring>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

Status BytesToDoubleCpu(KernelContext& ctx) {
  const char* raw = static_cast<const char*>(ctx.in(0).raw_data());
  double* y = ctx.out(0).data<double>();
  return ctx.ParallelFor("bytes_to_double_cpu", ctx.in(0).numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      y[i] = *reinterpret_cast<const float*>(raw + i);  // BUG: i elements, not i * 4 bytes
    }
  });
}

Status CopyRowCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  return ctx.ParallelFor("copy_row_cpu", ctx.in(0).numel(), [&](int64_t b, int64_t e) {
    std::memcpy(y + b, x + b, e - b);  // BUG: copies e - b bytes, a quarter of the floats
  });
}

}  // namespace

OPSCOPE_OP("fixture_bytes_to_double")
    .Input("x").Output("y")
    .Kernel("cpu", BytesToDoubleCpu);
OPSCOPE_OP("fixture_copy_row")
    .Input("x").Output("y")
    .Kernel("cpu", CopyRowCpu);
