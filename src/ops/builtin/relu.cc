// Relu: the pattern every built-in elementwise op follows. The kernel works in
// the dtype's compute type (float for f16/bf16) over blocks of the "block"
// tunable; the reference reads doubles and writes doubles.
#include <algorithm>

#include "ops/kernel_util.h"

namespace opscope {
namespace {

Status ReluCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  Status st = UnimplementedError(std::string("Relu: dtype ") + DTypeName(x.dtype()));
  OPSCOPE_SWITCH_NUMERIC(x.dtype(), {
    using C = typename ComputeTypeOf<scalar_t>::type;
    const scalar_t* in = x.data<scalar_t>();
    scalar_t* out = y.data<scalar_t>();
    st = ctx.ParallelFor("relu_cpu", x.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        C v = static_cast<C>(in[i]);
        out[i] = static_cast<scalar_t>(v < C(0) ? C(0) : v);  // NaN passes through
      }
    });
  });
  return st;
}

Status ReluReference(KernelContext& ctx) {
  std::vector<double> v = kernels::ToDoubles(ctx.in(0));
  for (double& d : v) d = d > 0 ? d : (d == d ? 0.0 : d);  // NaN stays NaN
  kernels::FromDoubles(ctx.out(0), v);
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("Relu")
    .Doc("y = max(x, 0)")
    .Input("X", "T").Output("Y", "T")
    .TypeConstraint("T", {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI32,
                          DType::kI16, DType::kI8})
    .SameShape()
    .Cost([](const OpCall& c) {
      return Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(), .flops = double(c.in(0).numel())};
    })
    .Tunable("block", {16384, 4096, 65536})
    .Reference(ReluReference)
    .Kernel("cpu", ReluCpu, "relu_cpu");

}  // namespace opscope
