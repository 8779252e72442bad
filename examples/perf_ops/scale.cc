// contiguous_scale and strided_scale: y = alpha * x, float32, any shape, with
// the same arithmetic and two access patterns, for ops-debug profile to tell
// apart. View x as rows x cols (cols = the last dim):
//   contiguous_scale: work item i handles element i; a block is consecutive elements.
//   strided_scale:    work item i handles element (i % rows) * cols + i / rows,
//                     walking the tensor column by column, as a naive
//                     transpose-minded kernel does: neighbouring work items
//                     are a whole row apart in memory.
//
//   ops-debug run --plugin build/lib/libperf_ops.so --op strided_scale --input-shapes '[4096,4096]' --repeat 20
//
// Both have the minimal-traffic cost model (x read once, y written once) and
// the tunable "block" (work items per block).
#include <algorithm>

#include "opscope/op.h"
#include "perf_launch.h"

namespace {

using opscope::KernelContext;
using opscope::Status;
using opscope::Tensor;

opscope::Cost ScaleCost(const opscope::OpCall& c) {
  return opscope::Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(),
                       .flops = static_cast<double>(c.in(0).numel())};
}

template <bool kStrided>
Status ScaleCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous()) {
    return opscope::UnimplementedError(std::string(ctx.op_name()) + ": the cpu kernel takes contiguous float32");
  }
  const int64_t n = x.numel();
  if (n == 0) return Status::Ok();
  const int64_t cols = x.rank() == 0 ? 1 : x.dim(x.rank() - 1), rows = n / cols;
  const int64_t block = std::max<int64_t>(1, ctx.tunable("block", 64));
  const float alpha = static_cast<float>(ctx.attrs().f("alpha"));
  const float* in = x.data<float>();
  float* out = ctx.out(0).data<float>();
  opscope::KernelLaunch k{
      .name = std::string(ctx.op_name()) + "_cpu",
      .config = perf_ops::Config1D(n, block),
      .host = [&](const opscope::BlockContext& b) {
        const int64_t begin = b.linear_block() * block, end = std::min(n, begin + block);
        for (int64_t i = begin; i < end; ++i) {
          const int64_t e = kStrided ? (i % rows) * cols + i / rows : i;
          out[e] = alpha * in[e];
        }
      }};
  return perf_ops::LaunchAndWait(ctx, k);
}

Status ScaleReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const double alpha = ctx.attrs().f("alpha");
  for (int64_t i = 0; i < x.numel(); ++i) ctx.out(0).FlatSetFromDouble(i, alpha * x.FlatGetAsDouble(i));
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("contiguous_scale")
    .Doc("y = alpha * x; work item i handles element i")
    .Input("x").Output("y")
    .TypeConstraint("T", {opscope::DType::kF32})
    .Attr("alpha", 2.0)
    .SameShape()
    .Cost(ScaleCost)
    .Tunable("block", perf_ops::BlockChoices())
    .Reference(ScaleReference)
    .Kernel("cpu", ScaleCpu<false>, "contiguous_scale_cpu");

OPSCOPE_OP("strided_scale")
    .Doc("y = alpha * x; work item i handles element (i % rows) * cols + i / rows (column-wise walk)")
    .Input("x").Output("y")
    .TypeConstraint("T", {opscope::DType::kF32})
    .Attr("alpha", 2.0)
    .SameShape()
    .Cost(ScaleCost)
    .Tunable("block", perf_ops::BlockChoices())
    .Reference(ScaleReference)
    .Kernel("cpu", ScaleCpu<true>, "strided_scale_cpu");
