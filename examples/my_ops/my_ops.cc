// my_ops.cc: an example plugin, built into libmy_ops.so.
//
//   ops-debug run --plugin build/lib/libmy_ops.so --op my_norm --input-shapes "[4, 256, 64]" --attrs eps=1e-6,axis=-1
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

// ---- my_norm: y = x / sqrt(mean(x^2 over `axis`) + eps) -------------------------
// A contiguous x seen as [outer, n, inner] around `axis`: each of the
// outer * inner lines of n elements, `inner` apart, is normalised alone.

constexpr int kMaxVec = 8;

struct NormLines {
  int64_t n = 1, inner = 1, lines = 0;
};

opscope::StatusOr<NormLines> LinesOf(const opscope::Shape& shape, int64_t axis_attr) {
  NormLines l;
  if (shape.rank() == 0) {
    l.lines = 1;
    return l;
  }
  OPSCOPE_ASSIGN_OR_RETURN(int axis, opscope::NormalizeAxis(axis_attr, shape.rank()));
  l.n = shape.dim(axis);
  for (int d = axis + 1; d < shape.rank(); ++d) l.inner *= shape.dim(d);
  l.lines = l.n == 0 ? 0 : shape.numel() / l.n;
  return l;
}

// The first element of line `k` of n elements `inner` apart.
inline int64_t LineStart(const NormLines& l, int64_t k) { return (k / l.inner) * l.n * l.inner + k % l.inner; }

Status MyNormInfer(opscope::InferContext& ctx) {
  const auto& x = ctx.input(0);
  auto lines = LinesOf(x.shape, ctx.attrs().i("axis"));
  if (!lines.ok()) return std::move(lines).status().WithContext("my_norm: attribute axis");
  ctx.SetOutput(0, x.dtype, x.shape);
  return Status::Ok();
}

template <typename T>
Status MyNormLines(KernelContext& ctx, const Tensor& x, Tensor& y, const NormLines& l, double eps) {
  using C = typename ComputeTypeOf<T>::type;
  const int64_t n = l.n, stride = l.inner;
  // "vec" lanes of partial sums, as a vectorised kernel would keep them.
  const int vec = static_cast<int>(std::clamp<int64_t>(ctx.tunable("vec", 1), 1, kMaxVec));
  const T* in = x.data<T>();
  T* out = y.data<T>();
  return ctx.ParallelFor("my_norm_cpu", l.lines, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t first = LineStart(l, k);
      const T* row = in + first;
      C lanes[kMaxVec] = {};
      int64_t i = 0;
      for (; i + vec <= n; i += vec) {
        for (int v = 0; v < vec; ++v) {
          C e = static_cast<C>(row[(i + v) * stride]);
          lanes[v] += e * e;
        }
      }
      for (; i < n; ++i) lanes[0] += static_cast<C>(row[i * stride]) * static_cast<C>(row[i * stride]);
      C sum = 0;
      for (int v = 0; v < vec; ++v) sum += lanes[v];
      const C inv = C(1) / std::sqrt(sum / static_cast<C>(n) + static_cast<C>(eps));
      for (int64_t j = 0; j < n; ++j) out[first + j * stride] = static_cast<T>(static_cast<C>(row[j * stride]) * inv);
    }
  }, /*default_block=*/64);  // lines per block unless the "block" tunable says otherwise
}

Status MyNormCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (!x.is_contiguous()) return opscope::UnimplementedError("my_norm: the cpu kernel needs a contiguous x");
  const double eps = ctx.attrs().f("eps");
  OPSCOPE_ASSIGN_OR_RETURN(NormLines lines, LinesOf(x.shape(), ctx.attrs().i("axis")));
  return opscope::DispatchFloat(x.dtype(), ctx.op_name(),
                                [&]<typename T>() { return MyNormLines<T>(ctx, x, ctx.out(0), lines, eps); });
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
  OPSCOPE_ASSIGN_OR_RETURN(NormLines lines, LinesOf(x.shape(), ctx.attrs().i("axis")));
  if (lines.inner != 1) {
    return opscope::UnimplementedError("my_norm: the cuda kernel normalises over the last axis only, got axis " +
                                       std::to_string(ctx.attrs().i("axis")));
  }
  uint64_t n = static_cast<uint64_t>(lines.n);
  uint64_t rows = static_cast<uint64_t>(lines.lines);
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
  OPSCOPE_ASSIGN_OR_RETURN(NormLines l, LinesOf(x.shape(), ctx.attrs().i("axis")));
  for (int64_t k = 0; k < l.lines; ++k) {
    const int64_t first = LineStart(l, k);
    double sum = 0;
    for (int64_t j = 0; j < l.n; ++j) {
      double v = x.FlatGetAsDouble(first + j * l.inner);
      sum += v * v;
    }
    const double inv = 1.0 / std::sqrt(sum / static_cast<double>(l.n) + eps);
    for (int64_t j = 0; j < l.n; ++j) {
      y.FlatSetFromDouble(first + j * l.inner, x.FlatGetAsDouble(first + j * l.inner) * inv);
    }
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
    .Doc("RMS norm over one axis: y = x / sqrt(mean(x^2 over axis) + eps)")
    .Input("x").Output("y")
    .Attr("eps", 1e-6).Attr("axis", -1)
    .Infer(MyNormInfer)
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
