// Kernels wrong the way kernel authors really get them wrong, one per family
// of cause `ops-debug run` names (docs/ops-debug.md, "Causes, named"). Each
// takes `bug` (default 1); with bug=0 the kernel is right, and ops-debug must
// then claim nothing.
//   bug_leaky_relu x        the negative slope 10x too large: errors only where x < 0
//   bug_quantize x, scale   rounds half away from zero, the reference half to even:
//                           errors only where x/scale is an exact half
//   bug_variance x[R,N]     divides by N where the unbiased variance divides by N-1:
//                           actual = (N-1)/N x expected everywhere
//   bug_skip_channels x[B,C,L]  a copy whose grid stops 4 channels short of 100:
//                           y[:, 96:100, :] never written by the kernel
//   bug_block_copy x[N]     a copy launched with half the blocks of 512, each
//                           thread block striding by 2: every other block unwritten
//   bug_copy_overrun x[N]   a copy whose loop runs to i <= N: one element written
//                           past the end of y, every element inside right
//   bug_relu_mask x         y = relu(x) and a mask its schema says is written only
//                           when training=1; the bug never writes it: with
//                           training=1 "mask[...] never written", with training=0
//                           not compared, by design
#include <cmath>

#include "opscope/op.h"

namespace {

using opscope::DType;
using opscope::KernelContext;
using opscope::Status;
using opscope::Tensor;

bool Buggy(KernelContext& ctx) { return ctx.attrs().i("bug") != 0; }

Status SameShape(opscope::InferContext& c) {
  c.SetOutput(0, c.input(0).dtype, c.input(0).shape);
  return Status::Ok();
}

Status NeedF32(const Tensor& x, const char* op) {
  if (x.dtype() != DType::kF32 || !x.is_contiguous()) {
    return opscope::UnimplementedError(std::string(op) + ": the cpu kernel takes contiguous float32");
  }
  return Status::Ok();
}

// ---- bug_leaky_relu ----

Status LeakyCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  OPSCOPE_RETURN_IF_ERROR(NeedF32(x, "bug_leaky_relu"));
  const float slope = static_cast<float>(ctx.attrs().f("slope")) * (Buggy(ctx) ? 10.0f : 1.0f);
  const float* in = x.data<float>();
  float* out = ctx.out(0).data<float>();
  return ctx.ParallelFor("bug_leaky_relu_cpu", x.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = in[i] > 0 ? in[i] : slope * in[i];
  });
}

Status LeakyReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const double slope = ctx.attrs().f("slope");
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.FlatGetAsDouble(i);
    ctx.out(0).FlatSetFromDouble(i, v > 0 ? v : slope * v);
  }
  return Status::Ok();
}

// ---- bug_quantize ----

Status QuantizeInfer(opscope::InferContext& c) {
  if (c.input(1).shape.numel() != 1) {
    return opscope::InvalidArgumentError("bug_quantize: scale must hold one element, got " + c.input(1).shape.ToString());
  }
  c.SetOutput(0, DType::kI32, c.input(0).shape);
  return Status::Ok();
}

Status QuantizeCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  OPSCOPE_RETURN_IF_ERROR(NeedF32(x, "bug_quantize"));
  const float scale = static_cast<float>(ctx.in(1).FlatGetAsDouble(0));
  const bool bug = Buggy(ctx);
  const float* in = x.data<float>();
  int32_t* out = ctx.out(0).data<int32_t>();
  return ctx.ParallelFor("bug_quantize_cpu", x.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float q = in[i] / scale;
      out[i] = static_cast<int32_t>(bug ? std::round(q) : std::nearbyint(q));  // round: ties away from zero
    }
  });
}

Status QuantizeReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const double scale = ctx.in(1).FlatGetAsDouble(0);
  for (int64_t i = 0; i < x.numel(); ++i) ctx.out(0).FlatSetFromDouble(i, std::nearbyint(x.FlatGetAsDouble(i) / scale));
  return Status::Ok();
}

// ---- bug_variance ----

Status VarianceInfer(opscope::InferContext& c) {
  const auto& x = c.input(0);
  if (x.shape.rank() != 2 || x.shape.dim(1) < 2) {
    return opscope::InvalidArgumentError("bug_variance: x must be [R,N] with N >= 2, got " + x.shape.ToString());
  }
  c.SetOutput(0, x.dtype, opscope::Shape({x.shape.dim(0)}));
  return Status::Ok();
}

Status VarianceCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  OPSCOPE_RETURN_IF_ERROR(NeedF32(x, "bug_variance"));
  const int64_t R = x.dim(0), N = x.dim(1);
  const float divisor = static_cast<float>(Buggy(ctx) ? N : N - 1);
  const float* in = x.data<float>();
  float* out = ctx.out(0).data<float>();
  return ctx.ParallelFor("bug_variance_cpu", R, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      double mean = 0, ss = 0;
      for (int64_t i = 0; i < N; ++i) mean += in[r * N + i];
      mean /= static_cast<double>(N);
      for (int64_t i = 0; i < N; ++i) ss += (in[r * N + i] - mean) * (in[r * N + i] - mean);
      out[r] = static_cast<float>(ss) / divisor;
    }
  }, /*default_block=*/16);
}

Status VarianceReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t R = x.dim(0), N = x.dim(1);
  for (int64_t r = 0; r < R; ++r) {
    double mean = 0, ss = 0;
    for (int64_t i = 0; i < N; ++i) mean += x.FlatGetAsDouble(r * N + i);
    mean /= static_cast<double>(N);
    for (int64_t i = 0; i < N; ++i) ss += std::pow(x.FlatGetAsDouble(r * N + i) - mean, 2);
    ctx.out(0).FlatSetFromDouble(r, ss / static_cast<double>(N - 1));
  }
  return Status::Ok();
}

// ---- bug_skip_channels ----

Status SkipInfer(opscope::InferContext& c) {
  const auto& x = c.input(0);
  if (x.shape.rank() != 3) return opscope::InvalidArgumentError("bug_skip_channels: x must be [B,C,L], got " + x.shape.ToString());
  c.SetOutput(0, x.dtype, x.shape);
  return Status::Ok();
}

Status SkipCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  OPSCOPE_RETURN_IF_ERROR(NeedF32(x, "bug_skip_channels"));
  const int64_t B = x.dim(0), C = x.dim(1), L = x.dim(2);
  const bool bug = Buggy(ctx);
  const float* in = x.data<float>();
  float* out = ctx.out(0).data<float>();
  return ctx.ParallelFor("bug_skip_channels_cpu", B * C, [&](int64_t b, int64_t e) {
    for (int64_t bc = b; bc < e; ++bc) {
      const int64_t c = bc % C;
      if (bug && c >= 96 && c < 100) continue;  // a grid sized for 96 channels, then the tail loop from 100
      for (int64_t i = 0; i < L; ++i) out[bc * L + i] = in[bc * L + i];
    }
  });
}

// ---- bug_block_copy ----

Status BlockCopyCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  OPSCOPE_RETURN_IF_ERROR(NeedF32(x, "bug_block_copy"));
  const int64_t n = x.numel(), blocks = (n + 511) / 512;
  const bool bug = Buggy(ctx);
  const float* in = x.data<float>();
  float* out = ctx.out(0).data<float>();
  // One "thread block" per 512 elements; the bug strides the block index by 2.
  return ctx.ParallelFor("bug_block_copy_cpu", bug ? (blocks + 1) / 2 : blocks, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t block = bug ? 2 * k : k;
      for (int64_t i = block * 512; i < std::min(n, (block + 1) * 512); ++i) out[i] = in[i];
    }
  });
}

// ---- bug_copy_overrun ----

Status OverrunCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  OPSCOPE_RETURN_IF_ERROR(NeedF32(x, "bug_copy_overrun"));
  const int64_t n = x.numel();
  const float* in = x.data<float>();
  float* out = ctx.out(0).data<float>();
  for (int64_t i = 0; i < n; ++i) out[i] = in[i];
  if (Buggy(ctx)) out[n] = 0.75f;  // the `i <= n` of the loop's last trip
  return Status::Ok();
}

// ---- bug_relu_mask ----
// y = relu(x), and mask (1 where x > 0, else 0) for a backward pass: written
// only in training. The schema says so, so a call with training=0 leaves mask
// alone by design.

bool Training(const opscope::Attrs& attrs) { return attrs.i("training") == 1; }

Status ReluMaskInfer(opscope::InferContext& c) {
  c.SetOutput(0, c.input(0).dtype, c.input(0).shape);
  c.SetOutput(1, c.input(0).dtype, c.input(0).shape);
  return Status::Ok();
}

Status ReluMaskCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  OPSCOPE_RETURN_IF_ERROR(NeedF32(x, "bug_relu_mask"));
  // The bug: a refactor tests training == 2, so the mask is never written.
  const bool write_mask = ctx.attrs().i("training") == (Buggy(ctx) ? 2 : 1);
  const float* in = x.data<float>();
  float* y = ctx.out(0).data<float>();
  float* mask = ctx.out(1).data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    y[i] = in[i] > 0 ? in[i] : 0.0f;
    if (write_mask) mask[i] = in[i] > 0 ? 1.0f : 0.0f;
  }
  return Status::Ok();
}

Status ReluMaskReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const bool training = Training(ctx.attrs());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.FlatGetAsDouble(i);
    ctx.out(0).FlatSetFromDouble(i, v > 0 ? v : 0.0);
    if (training) ctx.out(1).FlatSetFromDouble(i, v > 0 ? 1.0 : 0.0);
  }
  return Status::Ok();
}

Status CopyReference(KernelContext& ctx) {
  for (int64_t i = 0; i < ctx.in(0).numel(); ++i) ctx.out(0).FlatSetFromDouble(i, ctx.in(0).FlatGetAsDouble(i));
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("bug_leaky_relu")
    .Doc("leaky ReLU (BUG with bug=1: the negative slope 10x too large)")
    .Input("x").Output("y")
    .Attr("slope", 0.01).Attr("bug", int64_t{1})
    .TypeConstraint("T", {DType::kF32})
    .Infer(SameShape).Reference(LeakyReference).Kernel("cpu", LeakyCpu);

OPSCOPE_OP("bug_quantize")
    .Doc("y = round(x / scale) to int32, ties to even (BUG with bug=1: ties away from zero)")
    .Input("x").Input("scale").Output("y")
    .Attr("bug", int64_t{1})
    .TypeConstraint("T", {DType::kF32})
    .Infer(QuantizeInfer).Reference(QuantizeReference).Kernel("cpu", QuantizeCpu);

OPSCOPE_OP("bug_variance")
    .Doc("unbiased variance of each row (BUG with bug=1: divides by N, not N-1)")
    .Input("x").Output("y")
    .Attr("bug", int64_t{1})
    .TypeConstraint("T", {DType::kF32})
    .Infer(VarianceInfer).Reference(VarianceReference).Kernel("cpu", VarianceCpu);

OPSCOPE_OP("bug_skip_channels")
    .Doc("copy of x[B,C,L] (BUG with bug=1: channels 96-99 never written)")
    .Input("x").Output("y")
    .Attr("bug", int64_t{1})
    .TypeConstraint("T", {DType::kF32})
    .Infer(SkipInfer).Reference(CopyReference).Kernel("cpu", SkipCpu);

OPSCOPE_OP("bug_block_copy")
    .Doc("copy of x (BUG with bug=1: every other block of 512 never written)")
    .Input("x").Output("y")
    .Attr("bug", int64_t{1})
    .TypeConstraint("T", {DType::kF32})
    .Infer(SameShape).Reference(CopyReference).Kernel("cpu", BlockCopyCpu);

OPSCOPE_OP("bug_copy_overrun")
    .Doc("copy of x (BUG with bug=1: writes one element past the end of y)")
    .Input("x").Output("y")
    .Attr("bug", int64_t{1})
    .TypeConstraint("T", {DType::kF32})
    .Infer(SameShape).Reference(CopyReference).Kernel("cpu", OverrunCpu);

OPSCOPE_OP("bug_relu_mask")
    .Doc("y = relu(x); mask = (x > 0), written only when training=1 (BUG with bug=1: mask never written)")
    .Input("x").Output("y")
    .OutputWrittenOnlyWhen("mask", "training=1",
                           [](const opscope::Attrs& attrs, const std::vector<opscope::TensorDesc>&) { return Training(attrs); })
    .Attr("training", int64_t{0}).Attr("bug", int64_t{1})
    .TypeConstraint("T", {DType::kF32})
    .Infer(ReluMaskInfer).Reference(ReluMaskReference).Kernel("cpu", ReluMaskCpu);
