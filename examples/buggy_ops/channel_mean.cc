// channel_mean: y[n, c] = mean over h, w of x[n, c, h, w], as [N, C, 1, 1]
// (GlobalAveragePool's result). It declares that it wants NHWC data, so the
// compiler's layout pass feeds it NHWC and sets its "layout" attribute. The
// NCHW kernel sums in double; the NHWC kernel, written for speed, sums each
// channel in float16 (the bug): over 1,024 elements the running sum loses
// about 1e-3 of the mean, far past float32's tolerance.
// `inspector-cli accuracy` names it, with "layout: runs on NHWC data", and
// with `--disable-pass layout` the same model is clean
// (examples/models/nhwc_mean.onnx).
#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;
using opscope::Tensor;

bool Nhwc(const opscope::Attrs& a) { return a.s("layout") == "NHWC"; }

Status MeanInfer(opscope::InferContext& c) {
  const auto& x = c.input(0);
  if (x.shape.rank() != 4) return opscope::InvalidArgumentError("channel_mean: x must be 4-d, got " + x.shape.ToString());
  const int64_t n = x.shape.dim(0);
  c.SetOutput(0, x.dtype,
              Nhwc(c.attrs()) ? opscope::Shape({n, 1, 1, x.shape.dim(3)}) : opscope::Shape({n, x.shape.dim(1), 1, 1}));
  return Status::Ok();
}

double AsDouble(double v) { return v; }
double AsDouble(opscope::Half v) { return static_cast<float>(v); }

// Every (n, c)'s elements, in either layout, summed with `Acc` and stored as float.
template <typename Acc>
Status Mean(KernelContext* ctx, const Tensor& x, Tensor& y, bool nhwc) {
  const int64_t N = x.dim(0), C = nhwc ? x.dim(3) : x.dim(1), HW = nhwc ? x.dim(1) * x.dim(2) : x.dim(2) * x.dim(3);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      Acc sum = Acc(0);
      for (int64_t i = 0; i < HW; ++i) {
        const int64_t at = nhwc ? (n * HW + i) * C + c : (n * C + c) * HW + i;
        sum = static_cast<Acc>(AsDouble(sum) + x.FlatGetAsDouble(at));
      }
      y.FlatSetFromDouble(n * C + c, AsDouble(sum) / static_cast<double>(HW));
    }
  }
  (void)ctx;
  return Status::Ok();
}

Status MeanCpu(KernelContext& ctx) {
  const bool nhwc = Nhwc(ctx.attrs());
  if (nhwc) return Mean<opscope::Half>(&ctx, ctx.in(0), ctx.out(0), true);  // the bug: a float16 running sum
  return Mean<double>(&ctx, ctx.in(0), ctx.out(0), false);
}

Status MeanReference(KernelContext& ctx) { return Mean<double>(&ctx, ctx.in(0), ctx.out(0), Nhwc(ctx.attrs())); }

}  // namespace

OPSCOPE_OP("channel_mean")
    .Doc("mean of each channel (BUG: the NHWC kernel the layout pass picks sums in float16)")
    .Domain("com.opscope.examples")
    .PrefersLayout("NHWC")
    .Input("x").Output("y")
    .Attr("layout", "NCHW", {"NCHW", "NHWC"})
    .TypeConstraint("T", {opscope::DType::kF32})
    .Infer(MeanInfer)
    .Reference(MeanReference)
    .Kernel("cpu", MeanCpu);
