// window_l2norm_v1 and window_l2norm_v2: one fused op in two versions that
// differ only in how much work one work item does, for ops-debug profile and
// sweep to be shown on. x float32 [N,C,H,W]:
//   a[n,c,h,w] = (sum of x[n,c,h-1..h+1,w-1..w+1], zero padded) / 9
//   y[n,c,h,w] = a[n,c,h,w] / sqrt(sum_{h,w} a[n,c,:,:]^2 + eps)
//
//   ops-debug run --plugin build/lib/libperf_ops.so --op window_l2norm_v1 --input-shapes '[4,64,128,128]' --repeat 20
//   ops-debug run --plugin build/lib/libperf_ops.so --op window_l2norm_v2 --input-shapes '[4,64,128,128]' --repeat 20
//
// Two launches each. The window launch writes a into y:
//   v1: one output element per work item; each reads its 9 taps, 3 rows
//       W floats apart, and a neighbouring work item reads 6 of them again.
//   v2: four horizontally adjacent outputs per work item (vector_width 4);
//       it loads the 3x6 window once, sums it per column, and every output
//       adds three column sums: 18 loads for 4 outputs instead of 36.
// The plane launch (the same for both) is one block per (n,c) plane: work item
// t sums a^2 over elements t, t+block, ... of the plane, the block adds the
// partial sums (in double: up to 1024 of them), and scales the plane.
// Both declare the tunable "block" (work items per block; 64 by default, a
// deliberately small one) and use it as both launches' block size.
//
// The cost model is the minimum traffic (x read once, y written once) and
// the nominal FLOPs; the kernels move more (y is written, read back and
// written again), which is what a roofline should show about them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "opscope/op.h"
#include "perf_launch.h"

namespace {

using opscope::BlockContext;
using opscope::KernelContext;
using opscope::KernelLaunch;
using opscope::Status;
using opscope::Tensor;

constexpr float kInvNine = 1.0f / 9.0f;

Status WindowInfer(opscope::InferContext& c) {
  const auto& x = c.input(0);
  if (x.shape.rank() != 4) {
    return opscope::InvalidArgumentError(std::string(c.op_name()) + ": x must be [N,C,H,W], got " + x.shape.ToString());
  }
  c.SetOutput(0, x.dtype, x.shape);
  return Status::Ok();
}

// 9 adds and 1 multiply per window average; per element a square, an add and
// the scaling multiply; per plane the eps add, the square root and the reciprocal.
opscope::Cost WindowCost(const opscope::OpCall& c) {
  const opscope::Shape& s = c.in(0).shape;
  const double numel = static_cast<double>(c.in(0).numel());
  const double planes = s.rank() == 4 ? static_cast<double>(s.dim(0) * s.dim(1)) : 0.0;
  return opscope::Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(),
                       .flops = (9 + 1 + 3) * numel + 3 * planes};
}

// y[n,c,h,w] reads its window x[n,c,h-1..h+1,w-1..w+1] (clamped where it
// crosses the border). It also depends on the whole plane, but only through
// one number per plane (the norm's energy): the map names the elements each
// output reads element by element, so that error localisation points at the
// window, and the hot chain sees the 3-row strided reads the kernels make.
std::vector<opscope::IndexBox> WindowRegion(const opscope::OpCall&, int, const std::vector<int64_t>& o) {
  return {opscope::IndexBox{{o[0], o[1], o[2] - 1, o[3] - 1}, {o[0] + 1, o[1] + 1, o[2] + 2, o[3] + 2}}};
}

struct Planes {
  const float* x;
  float* a;
  int64_t H, W;
};

// v1's work item: output element i.
void WindowOne(const Planes& p, int64_t i) {
  const int64_t w = i % p.W, h = (i / p.W) % p.H, plane = i / (p.W * p.H);
  const float* in = p.x + plane * p.H * p.W;
  float s = 0;
  if (h >= 1 && h + 1 < p.H && w >= 1 && w + 1 < p.W) {
    for (int64_t r = h - 1; r <= h + 1; ++r) {
      const float* row = in + r * p.W + w;
      s += row[-1] + row[0] + row[1];
    }
  } else {
    for (int64_t r = std::max<int64_t>(h - 1, 0); r <= std::min(h + 1, p.H - 1); ++r) {
      for (int64_t c = std::max<int64_t>(w - 1, 0); c <= std::min(w + 1, p.W - 1); ++c) s += in[r * p.W + c];
    }
  }
  p.a[i] = s * kInvNine;
}

// v2's work item: outputs w0 .. w0+3 of one row (fewer at the row's end),
// from the column sums of the 3x6 window x[h-1..h+1, w0-1..w0+4].
void WindowFour(const Planes& p, int64_t groups_per_row, int64_t item) {
  const int64_t w0 = 4 * (item % groups_per_row), row_index = item / groups_per_row;
  const int64_t h = row_index % p.H, plane = row_index / p.H;
  const float* in = p.x + plane * p.H * p.W;
  float col[6] = {};
  const bool interior_cols = w0 >= 1 && w0 + 4 < p.W;
  for (int64_t r = std::max<int64_t>(h - 1, 0); r <= std::min(h + 1, p.H - 1); ++r) {
    const float* row = in + r * p.W;
    if (interior_cols) {
      for (int k = 0; k < 6; ++k) col[k] += row[w0 - 1 + k];
    } else {
      for (int k = 0; k < 6; ++k) col[k] += w0 - 1 + k >= 0 && w0 - 1 + k < p.W ? row[w0 - 1 + k] : 0.0f;
    }
  }
  float* out = p.a + row_index * p.W + w0;
  const int n = static_cast<int>(std::min<int64_t>(4, p.W - w0));
  for (int k = 0; k < n; ++k) out[k] = (col[k] + col[k + 1] + col[k + 2]) * kInvNine;
}

template <int kOutputsPerItem>
Status WindowL2NormCpu(KernelContext& ctx) {
  static_assert(kOutputsPerItem == 1 || kOutputsPerItem == 4);
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  if (x.dtype() != opscope::DType::kF32 || !x.is_contiguous()) {
    return opscope::UnimplementedError(std::string(ctx.op_name()) + ": the cpu kernel takes contiguous float32");
  }
  const int64_t planes = x.dim(0) * x.dim(1), H = x.dim(2), W = x.dim(3), HW = H * W;
  if (planes * HW == 0) return Status::Ok();
  const int64_t block = std::max<int64_t>(1, ctx.tunable("block", 64));
  const Planes p{x.data<float>(), y.data<float>(), H, W};

  const int64_t groups_per_row = (W + kOutputsPerItem - 1) / kOutputsPerItem;
  const int64_t items = planes * H * groups_per_row;
  KernelLaunch window{
      .name = std::string(ctx.op_name()) + "_window",
      .config = perf_ops::Config1D(items, block, kOutputsPerItem),
      .host = [&](const BlockContext& b) {
        const int64_t begin = b.linear_block() * block, end = std::min(items, begin + block);
        for (int64_t item = begin; item < end; ++item) {
          if constexpr (kOutputsPerItem == 1) WindowOne(p, item);
          else WindowFour(p, groups_per_row, item);
        }
      }};
  OPSCOPE_RETURN_IF_ERROR(perf_ops::LaunchAndWait(ctx, window));

  const float eps = static_cast<float>(ctx.attrs().f("eps"));
  KernelLaunch norm{
      .name = "window_l2norm_plane",
      .config = {.grid = {planes, 1, 1}, .block = {block, 1, 1}},
      .host = [&](const BlockContext& b) {
        float* a = p.a + b.linear_block() * HW;
        // Work item t's partial sum; visited in memory order, the same sums as t's strided walk.
        std::vector<float> partial(static_cast<size_t>(block), 0.0f);
        for (int64_t base = 0; base < HW; base += block) {
          const int64_t n = std::min(block, HW - base);
          for (int64_t t = 0; t < n; ++t) partial[t] += a[base + t] * a[base + t];
        }
        double energy = 0;
        for (float s : partial) energy += s;
        const float scale = 1.0f / std::sqrt(static_cast<float>(energy) + eps);
        for (int64_t i = 0; i < HW; ++i) a[i] *= scale;
      }};
  return perf_ops::LaunchAndWait(ctx, norm);
}

Status WindowL2NormReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const int64_t planes = x.dim(0) * x.dim(1), H = x.dim(2), W = x.dim(3);
  const double eps = ctx.attrs().f("eps");
  std::vector<double> in(static_cast<size_t>(H * W)), a(in.size());
  for (int64_t pl = 0; pl < planes; ++pl) {
    const int64_t base = pl * H * W;
    for (int64_t i = 0; i < H * W; ++i) in[i] = x.FlatGetAsDouble(base + i);
    double energy = 0;
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t w = 0; w < W; ++w) {
        double s = 0;
        for (int64_t r = h - 1; r <= h + 1; ++r) {
          for (int64_t c = w - 1; c <= w + 1; ++c) s += r >= 0 && r < H && c >= 0 && c < W ? in[r * W + c] : 0.0;
        }
        a[h * W + w] = s / 9.0;
        energy += a[h * W + w] * a[h * W + w];
      }
    }
    const double norm = std::sqrt(energy + eps);
    for (int64_t i = 0; i < H * W; ++i) y.FlatSetFromDouble(base + i, a[i] / norm);
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("window_l2norm_v1")
    .Doc("3x3 window average (zero padded), then L2-normalize each (n,c) plane; one output per work item")
    .Input("x").Output("y")
    .TypeConstraint("T", {opscope::DType::kF32})
    .Attr("eps", 1e-6)
    .Infer(WindowInfer)
    .Cost(WindowCost)
    .InputRegion(WindowRegion)
    .Tunable("block", perf_ops::BlockChoices())
    .Reference(WindowL2NormReference)
    .Kernel("cpu", WindowL2NormCpu<1>, "window_l2norm_v1_cpu");

OPSCOPE_OP("window_l2norm_v2")
    .Doc("3x3 window average (zero padded), then L2-normalize each (n,c) plane; four adjacent outputs per work item")
    .Input("x").Output("y")
    .TypeConstraint("T", {opscope::DType::kF32})
    .Attr("eps", 1e-6)
    .Infer(WindowInfer)
    .Cost(WindowCost)
    .InputRegion(WindowRegion)
    .Tunable("block", perf_ops::BlockChoices())
    .Reference(WindowL2NormReference)
    .Kernel("cpu", WindowL2NormCpu<4>, "window_l2norm_v2_cpu");
