// my_ops.cc: an example plugin, built into libmy_ops.so.
//
//   ops-debug run --plugin build/lib/libmy_ops.so --op my_norm --input-shapes "[4,256,64]"
//   ops-debug run --plugin build/lib/libmy_ops.so --op my_bias_gelu --input-shapes "[4,256,64];[64]"
//
// Only the public headers are used, as in a project outside this tree. Each op
// has a kernel under test (cpu) that computes in the dtype's compute type and a
// reference that reads doubles and accumulates in double. The ops live in the
// domain com.opscope.examples: an ONNX node of that domain runs them
// (inspector-cli run examples/models/custom_op.onnx --plugin build/lib/libmy_ops.so).
#include <algorithm>
#include <cmath>

#include "my_norm_ptx.h"
#include "opscope/device.h"
#include "opscope/op.h"

namespace {

using opscope::ComputeTypeOf;
using opscope::DType;
using opscope::KernelContext;
using opscope::Status;
using opscope::Tensor;

// ---- my_norm: y = x / sqrt(mean(x^2 over the last axis) + eps) -------------------

constexpr int kMaxVec = 8;

template <typename T>
Status MyNormRows(KernelContext& ctx, const Tensor& x, Tensor& y, double eps) {
  using C = typename ComputeTypeOf<T>::type;
  const int64_t n = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  // "vec" lanes of partial sums, as a vectorised kernel would keep them.
  const int vec = static_cast<int>(std::clamp<int64_t>(ctx.tunable("vec", 1), 1, kMaxVec));
  const T* in = x.data<T>();
  T* out = y.data<T>();
  return ctx.ParallelFor("my_norm_cpu", rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* row = in + r * n;
      C lanes[kMaxVec] = {};
      int64_t i = 0;
      for (; i + vec <= n; i += vec) {
        for (int l = 0; l < vec; ++l) {
          C v = static_cast<C>(row[i + l]);
          lanes[l] += v * v;
        }
      }
      for (; i < n; ++i) lanes[0] += static_cast<C>(row[i]) * static_cast<C>(row[i]);
      C sum = 0;
      for (int l = 0; l < vec; ++l) sum += lanes[l];
      const C inv = C(1) / std::sqrt(sum / static_cast<C>(n) + static_cast<C>(eps));
      for (int64_t j = 0; j < n; ++j) out[r * n + j] = static_cast<T>(static_cast<C>(row[j]) * inv);
    }
  }, /*default_block=*/64);  // rows per block unless the "block" tunable says otherwise
}

Status MyNormCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (!x.is_contiguous()) return opscope::UnimplementedError("my_norm: the cpu kernel needs a contiguous x");
  const double eps = ctx.attrs().f("eps");
  return opscope::DispatchFloat(x.dtype(), ctx.op_name(),
                                [&]<typename T>() { return MyNormRows<T>(ctx, x, ctx.out(0), eps); });
}

// The cuda kernel (float32): the PTX of my_norm_ptx.h, JIT-compiled by the
// driver on first use; one thread per row, "block" rows per block as on cpu.
Status MyNormCuda(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kF32) {
    return opscope::UnimplementedError("my_norm: the cuda kernel takes float32, got " +
                                       std::string(opscope::DTypeName(x.dtype())));
  }
  if (!x.is_contiguous()) return opscope::UnimplementedError("my_norm: the cuda kernel needs a contiguous x");
  uint64_t n = x.rank() == 0 ? 1 : static_cast<uint64_t>(x.dim(x.rank() - 1));
  uint64_t rows = n == 0 ? 0 : static_cast<uint64_t>(x.numel()) / n;
  if (rows == 0) return Status::Ok();
  OPSCOPE_ASSIGN_OR_RETURN(const void* fn, ctx.device()->LoadKernel("ptx", kMyNormPtx, "my_norm_f32"));
  const int64_t block = ctx.tunable("block", 64);
  const void* in = x.raw_data();
  void* out = ctx.out(0).raw_data();
  float eps = static_cast<float>(ctx.attrs().f("eps"));
  void* args[] = {&in, &out, &rows, &n, &eps};  // as the PTX entry declares them; copied by the launch
  opscope::KernelLaunch k{.name = "my_norm_cuda",
                          .config = {.grid = {static_cast<int64_t>((rows + block - 1) / block)}, .block = {block}},
                          .device = {.function = fn, .args = args}};
  return ctx.Launch(k);
}

Status MyNormReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const double eps = ctx.attrs().f("eps");
  const int64_t n = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      double v = x.FlatGetAsDouble(r * n + j);
      sum += v * v;
    }
    const double inv = 1.0 / std::sqrt(sum / static_cast<double>(n) + eps);
    for (int64_t j = 0; j < n; ++j) y.FlatSetFromDouble(r * n + j, x.FlatGetAsDouble(r * n + j) * inv);
  }
  return Status::Ok();
}

// ---- my_bias_gelu: y = gelu_tanh(x + bias), bias along the last axis ---------------

double GeluTanh(double v) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * v * (1.0 + std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v)));
}

Status BiasGeluInfer(opscope::InferContext& ctx) {
  const auto& x = ctx.input(0);
  const auto& b = ctx.input(1);
  if (x.shape.rank() < 1) return opscope::InvalidArgumentError("my_bias_gelu: x must have rank >= 1, got a scalar");
  const int64_t c = x.shape.dim(x.shape.rank() - 1);
  if (b.shape.rank() != 1 || b.shape.dim(0) != c) {
    return opscope::InvalidArgumentError("my_bias_gelu: bias must have shape [" + std::to_string(c) +
                                         "] (x's last dim), got " + b.shape.ToString());
  }
  ctx.SetOutput(0, x.dtype, x.shape);
  return Status::Ok();
}

template <typename T>
Status BiasGeluTyped(KernelContext& ctx, const Tensor& x, const Tensor& bias, Tensor& y) {
  using C = typename ComputeTypeOf<T>::type;
  const int64_t c = x.dim(x.rank() - 1);
  const T* in = x.data<T>();
  const T* b = bias.data<T>();
  T* out = y.data<T>();
  return ctx.ParallelFor("my_bias_gelu_cpu", x.numel(), [&](int64_t begin, int64_t end) {
    constexpr C kSqrt2OverPi = C(0.7978845608028654);
    for (int64_t i = begin; i < end; ++i) {
      C v = static_cast<C>(in[i]) + static_cast<C>(b[i % c]);
      out[i] = static_cast<T>(C(0.5) * v * (C(1) + std::tanh(kSqrt2OverPi * (v + C(0.044715) * v * v * v))));
    }
  });
}

Status BiasGeluCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& b = ctx.in(1);
  if (!x.is_contiguous() || !b.is_contiguous()) {
    return opscope::UnimplementedError("my_bias_gelu: the cpu kernel needs contiguous inputs");
  }
  return opscope::DispatchFloat(x.dtype(), ctx.op_name(),
                                [&]<typename T>() { return BiasGeluTyped<T>(ctx, x, b, ctx.out(0)); });
}

Status BiasGeluReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& b = ctx.in(1);
  const int64_t c = x.dim(x.rank() - 1);
  for (int64_t i = 0; i < x.numel(); ++i) {
    ctx.out(0).FlatSetFromDouble(i, GeluTanh(x.FlatGetAsDouble(i) + b.FlatGetAsDouble(i % c)));
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("my_norm")
    .Domain("com.opscope.examples")
    .Doc("RMS norm over the last axis: y = x / sqrt(mean(x^2) + eps)")
    .Input("x").Output("y")
    .Attr("eps", 1e-6)
    .SameShape()
    .Cost([](const opscope::OpCall& c) {
      return opscope::Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(),
                           .flops = 3.0 * static_cast<double>(c.in(0).numel())};
    })
    .Tunable("block", {64, 128, 256, 512}).Tunable("vec", {1, 2, 4})
    .Reference(MyNormReference)
    .Kernel("cpu", MyNormCpu, "my_norm_cpu")
    .Kernel("cuda", MyNormCuda, "my_norm_cuda");

OPSCOPE_OP("my_bias_gelu")
    .Domain("com.opscope.examples")
    .Doc("y = gelu_tanh(x + bias), bias broadcast along the last axis")
    .Input("x").Input("bias").Output("y")
    .Infer(BiasGeluInfer)
    .Cost([](const opscope::OpCall& c) {
      return opscope::Cost{.bytes_read = c.in(0).bytes() + c.in(1).bytes(), .bytes_written = c.out(0).bytes(),
                           .flops = 10.0 * static_cast<double>(c.in(0).numel())};
    })
    .Tunable("block", {16384, 4096, 65536})
    .Reference(BiasGeluReference)
    .Kernel("cpu", BiasGeluCpu, "my_bias_gelu_cpu");
