// Fixture for ops-debug check: byte_offset.cc with the element size in the
// byte offset and in the byte count. No finding expected.
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
      y[i] = *reinterpret_cast<const float*>(raw + i * sizeof(float));
    }
  });
}

Status CopyRowCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  return ctx.ParallelFor("copy_row_cpu", ctx.in(0).numel(), [&](int64_t b, int64_t e) {
    std::memcpy(y + b, x + b, static_cast<size_t>(e - b) * sizeof(float));
  });
}

}  // namespace

OPSCOPE_OP("fixture_bytes_to_double_fixed")
    .Input("x").Output("y")
    .Kernel("cpu", BytesToDoubleCpu);
OPSCOPE_OP("fixture_copy_row_fixed")
    .Input("x").Output("y")
    .Kernel("cpu", CopyRowCpu);
