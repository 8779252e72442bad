// bug_avgpool2d: 2-D average pooling, stride 1, zero padding counted in the
// average (count_include_pad). The kernel's bug: a tap in the padding reads
// the nearest edge value instead of zero, so only the border is wrong.
//   ops-debug run --plugin build/lib/libbuggy_ops.so --op bug_avgpool2d --input-shapes "[2,32,96,96]" --repro-dir repro
// It declares its index map (InputRegion), so ops-debug need not search for
// the input region by perturbation.
#include <algorithm>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;
using opscope::Tensor;

Status PoolInfer(opscope::InferContext& c) {
  const auto& x = c.input(0);
  const int64_t k = c.attrs().i("kernel"), p = c.attrs().i("pad");
  if (x.shape.rank() != 4) return opscope::InvalidArgumentError("bug_avgpool2d: x must be [N,C,H,W], got " + x.shape.ToString());
  if (k < 1 || p < 0 || p >= k) return opscope::InvalidArgumentError("bug_avgpool2d: need kernel >= 1 and 0 <= pad < kernel");
  const int64_t h = x.shape.dim(2) + 2 * p - k + 1, w = x.shape.dim(3) + 2 * p - k + 1;
  if (h < 1 || w < 1) return opscope::InvalidArgumentError("bug_avgpool2d: x " + x.shape.ToString() + " is smaller than the window");
  c.SetOutput(0, x.dtype, opscope::Shape({x.shape.dim(0), x.shape.dim(1), h, w}));
  return Status::Ok();
}

// `edge`: clamp taps into the image (the bug) instead of reading zero.
template <bool kEdge>
void Pool(const float* x, float* y, int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t k, int64_t p,
          int64_t plane_begin, int64_t plane_end) {
  const float inv = 1.0f / static_cast<float>(k * k);
  for (int64_t pl = plane_begin; pl < plane_end && pl < planes; ++pl) {
    const float* in = x + pl * H * W;
    float* out = y + pl * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        float sum = 0;
        for (int64_t i = 0; i < k; ++i) {
          for (int64_t j = 0; j < k; ++j) {
            int64_t h = oh - p + i, w = ow - p + j;
            if (h < 0 || h >= H || w < 0 || w >= W) {
              if (!kEdge) continue;
              h = std::clamp<int64_t>(h, 0, H - 1), w = std::clamp<int64_t>(w, 0, W - 1);
            }
            sum += in[h * W + w];
          }
        }
        out[oh * OW + ow] = sum * inv;
      }
    }
  }
}

Status PoolCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous()) {
    return opscope::UnimplementedError("bug_avgpool2d: the cpu kernel takes contiguous float32");
  }
  const int64_t planes = x.dim(0) * x.dim(1), H = x.dim(2), W = x.dim(3), OH = y.dim(2), OW = y.dim(3);
  const int64_t k = ctx.attrs().i("kernel"), p = ctx.attrs().i("pad");
  return ctx.ParallelFor("bug_avgpool2d_cpu", planes, [&](int64_t b, int64_t e) {
    Pool<true>(x.data<float>(), y.data<float>(), planes, H, W, OH, OW, k, p, b, e);
  }, /*default_block=*/4);
}

Status PoolReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const int64_t planes = x.dim(0) * x.dim(1), H = x.dim(2), W = x.dim(3), OH = y.dim(2), OW = y.dim(3);
  const int64_t k = ctx.attrs().i("kernel"), p = ctx.attrs().i("pad");
  for (int64_t pl = 0; pl < planes; ++pl) {
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        double sum = 0;
        for (int64_t i = 0; i < k; ++i) {
          for (int64_t j = 0; j < k; ++j) {
            const int64_t h = oh - p + i, w = ow - p + j;
            if (h >= 0 && h < H && w >= 0 && w < W) sum += x.FlatGetAsDouble((pl * H + h) * W + w);
          }
        }
        y.FlatSetFromDouble((pl * OH + oh) * OW + ow, sum / static_cast<double>(k * k));
      }
    }
  }
  return Status::Ok();
}

// y[n,c,oh,ow] reads x[n, c, oh-pad .. oh-pad+kernel, ow-pad .. ow-pad+kernel] (clamped by the caller).
std::vector<opscope::IndexBox> PoolRegion(const opscope::OpCall& call, int, const std::vector<int64_t>& o) {
  const int64_t k = call.attrs().i("kernel"), p = call.attrs().i("pad");
  return {opscope::IndexBox{{o[0], o[1], o[2] - p, o[3] - p}, {o[0] + 1, o[1] + 1, o[2] - p + k, o[3] - p + k}}};
}

}  // namespace

OPSCOPE_OP("bug_avgpool2d")
    .Doc("average pooling, stride 1, zero padding counted (BUG: padding reads the edge value)")
    .Input("x").Output("y")
    .TypeConstraint("T", {opscope::DType::kF32})
    .Attr("kernel", 3).Attr("pad", 1)
    .Infer(PoolInfer)
    .InputRegion(PoolRegion)
    .Reference(PoolReference)
    .Kernel("cpu", PoolCpu);
