// racy_sum: y[r] = sum of x[r, :]. Blocks of 512 elements are summed in
// parallel and each block's partial is added into y[r] atomically, in the
// order the blocks finish: float addition is not associative, so the last
// bits depend on thread timing. `ops-debug run --repeat 20` catches it.
#include <atomic>
#include <vector>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;
using opscope::Tensor;

constexpr int64_t kBlock = 512;

Status SumInfer(opscope::InferContext& c) {
  const auto& x = c.input(0);
  if (x.shape.rank() != 2) return opscope::InvalidArgumentError("racy_sum: x must be [R,L], got " + x.shape.ToString());
  c.SetOutput(0, x.dtype, opscope::Shape({x.shape.dim(0)}));
  return Status::Ok();
}

void AtomicAdd(std::atomic<float>& target, float v) {
  float old = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
  }
}

Status SumCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous()) {
    return opscope::UnimplementedError("racy_sum: the cpu kernel takes contiguous float32");
  }
  const int64_t R = x.dim(0), L = x.dim(1), per_row = (L + kBlock - 1) / kBlock;
  std::vector<std::atomic<float>> acc(static_cast<size_t>(R));
  for (auto& a : acc) a.store(0.0f);
  const float* in = x.data<float>();
  OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("racy_sum_cpu", R * per_row, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      const int64_t r = task / per_row, begin = (task % per_row) * kBlock, end = std::min(L, begin + kBlock);
      float s = 0;
      for (int64_t i = begin; i < end; ++i) s += in[r * L + i];
      AtomicAdd(acc[static_cast<size_t>(r)], s);
    }
  }, /*default_block=*/1));
  for (int64_t r = 0; r < R; ++r) ctx.out(0).data<float>()[r] = acc[static_cast<size_t>(r)].load();
  return Status::Ok();
}

Status SumReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t R = x.dim(0), L = x.dim(1);
  for (int64_t r = 0; r < R; ++r) {
    double s = 0;
    for (int64_t i = 0; i < L; ++i) s += x.FlatGetAsDouble(r * L + i);
    ctx.out(0).FlatSetFromDouble(r, s);
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("racy_sum")
    .Doc("row sums; block partials added atomically in finishing order (BUG: the result depends on thread timing)")
    .Input("x").Output("y")
    .TypeConstraint("T", {opscope::DType::kF32})
    .Infer(SumInfer)
    .Reference(SumReference)
    .Kernel("cpu", SumCpu);
