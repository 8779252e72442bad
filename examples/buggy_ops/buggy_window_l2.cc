// bug_window_l2: a fused window-average + L2-normalize over x[N,C,L]:
//   a[n,c,l] = mean(x[n,c,l-w/2 .. l+w/2])  (zero padded)
//   y[n,c,l] = a[n,c,l] / sqrt(energy[n,c] + eps),  energy[n,c] = sum_l a[n,c,l]^2
// and the energy as a second output (the way fused norms hand back their statistics).
// The kernel works on tiles of 128 channels. Its bug: past the first tile the
// energy accumulator is not reset per channel, so it sums over the channels
// of the tile so far (a channel sum) instead of this channel's window sums;
// the error appears at channel 129 and grows with the channel index.
// Both sides trace the scale 1/sqrt(energy + eps): `ops-debug run --trace` shows where they part.
#include <cmath>
#include <vector>

#include "opscope/op.h"
#include "opscope/trace.h"

namespace {

using opscope::KernelContext;
using opscope::Status;
using opscope::Tensor;

constexpr int64_t kTile = 128;

Status WindowInfer(opscope::InferContext& c) {
  const auto& x = c.input(0);
  if (x.shape.rank() != 3) return opscope::InvalidArgumentError("bug_window_l2: x must be [N,C,L], got " + x.shape.ToString());
  if (c.attrs().i("window") < 1 || c.attrs().i("window") % 2 == 0) {
    return opscope::InvalidArgumentError("bug_window_l2: window must be odd and >= 1");
  }
  c.SetOutput(0, x.dtype, x.shape);
  c.SetOutput(1, x.dtype, opscope::Shape({x.shape.dim(0), x.shape.dim(1)}));
  return Status::Ok();
}

Status WindowCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous()) {
    return opscope::UnimplementedError("bug_window_l2: the cpu kernel takes contiguous float32");
  }
  const int64_t N = x.dim(0), C = x.dim(1), L = x.dim(2), half = ctx.attrs().i("window") / 2;
  const float inv_w = 1.0f / static_cast<float>(2 * half + 1), eps = static_cast<float>(ctx.attrs().f("eps"));
  Tensor& energy = ctx.out(1);
  OPSCOPE_ASSIGN_OR_RETURN(Tensor scale, Tensor::Empty(opscope::DType::kF32, opscope::Shape({N, C})));
  const int64_t tiles = (C + kTile - 1) / kTile;
  Status st = ctx.ParallelFor("bug_window_l2_cpu", N * tiles, [&](int64_t b, int64_t e) {
    std::vector<float> a(static_cast<size_t>(L));
    for (int64_t task = b; task < e; ++task) {
      const int64_t n = task / tiles, tile = task % tiles;
      float running = 0;  // the tail tiles' accumulator: never reset per channel (the bug)
      for (int64_t c = tile * kTile; c < std::min(C, (tile + 1) * kTile); ++c) {
        const float* in = x.data<float>() + (n * C + c) * L;
        float energy_c = 0;
        for (int64_t l = 0; l < L; ++l) {
          float s = 0;
          for (int64_t j = std::max<int64_t>(0, l - half); j <= std::min(L - 1, l + half); ++j) s += in[j];
          a[l] = s * inv_w;
          energy_c += a[l] * a[l];
        }
        running += energy_c;
        const float en = tile == 0 ? energy_c : running;
        energy.data<float>()[n * C + c] = en;
        const float s = 1.0f / std::sqrt(en + eps);
        scale.data<float>()[n * C + c] = s;
        float* out = y.data<float>() + (n * C + c) * L;
        for (int64_t l = 0; l < L; ++l) out[l] = a[l] * s;
      }
    }
  }, /*default_block=*/1);
  OPSCOPE_RETURN_IF_ERROR(st);
  OPSCOPE_TRACE(ctx, "scale", scale);
  return Status::Ok();
}

Status WindowReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const int64_t N = x.dim(0), C = x.dim(1), L = x.dim(2), half = ctx.attrs().i("window") / 2;
  const double eps = ctx.attrs().f("eps");
  Tensor& energy = ctx.out(1);
  OPSCOPE_ASSIGN_OR_RETURN(Tensor scale, Tensor::Empty(opscope::DType::kF64, opscope::Shape({N, C})));
  std::vector<double> a(static_cast<size_t>(L));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      const int64_t base = (n * C + c) * L;
      double en = 0;
      for (int64_t l = 0; l < L; ++l) {
        double s = 0;
        for (int64_t j = l - half; j <= l + half; ++j) s += j >= 0 && j < L ? x.FlatGetAsDouble(base + j) : 0.0;
        a[l] = s / static_cast<double>(2 * half + 1);
        en += a[l] * a[l];
      }
      energy.FlatSetFromDouble(n * C + c, en);
      scale.data<double>()[n * C + c] = 1.0 / std::sqrt(en + eps);
      for (int64_t l = 0; l < L; ++l) y.FlatSetFromDouble(base + l, a[l] / std::sqrt(en + eps));
    }
  }
  OPSCOPE_TRACE(ctx, "scale", scale);
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("bug_window_l2")
    .Doc("window average along L, then L2-normalize each channel (BUG: channel tiles past the first sum energy across channels)")
    .Input("x").Output("y").Output("energy")
    .TypeConstraint("T", {opscope::DType::kF32})
    .Attr("window", 5).Attr("eps", 1e-6)
    .Infer(WindowInfer)
    .Reference(WindowReference)
    .Kernel("cpu", WindowCpu);
