// Softmax and LogSoftmax (ONNX opset 13: along one axis, default -1). The
// kernel subtracts the maximum before exponentiating (so large inputs do not
// overflow); when the axis is not the last dim it sweeps whole rows of the
// inner dims at once to keep memory access contiguous. Rows along the last
// axis in float (and float16/bfloat16, computed in float) are exponentiated
// once per element through ew_vecmath.h's exp where the CPU has AVX2;
// float rows go whole through its softmax_row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/builtin/dense_util.h"
#include "ops/builtin/ew_unary.h"
#include "ops/builtin/ew_vecmath.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

const std::vector<DType> kSoftmaxTypes = {DType::kF16, DType::kF32, DType::kF64, DType::kBF16};

Status SoftmaxInfer(InferContext& c) {
  const Shape& x = c.input(0).shape;
  const int64_t axis = c.attrs().i("axis", -1);
  if (!NormalizeAxis(axis, std::max(1, x.rank())).ok()) {
    return InvalidArgumentError(std::string(c.op_name()) + ": attribute axis=" + std::to_string(axis) +
                                " is out of range for input " + x.ToString() + " (rank " +
                                std::to_string(x.rank()) + ")");
  }
  c.SetOutput(0, c.input(0).dtype, x);
  return Status::Ok();
}

kernels::AxisSplit Split(const Tensor& x, const Attrs& attrs) {
  if (x.rank() == 0) return kernels::AxisSplit{};
  return kernels::SplitAtAxis(x.shape(), *NormalizeAxis(attrs.i("axis", -1), x.rank()));
}

template <typename T, bool kLog>
Status SoftmaxTyped(KernelContext& ctx) {
  using C = dense::AccOf<T>;
  OPSCOPE_ASSIGN_OR_RETURN(const Tensor x, ctx.in(0).Contiguous());
  const kernels::AxisSplit s = Split(x, ctx.attrs());
  const T* xp = x.data<T>();
  T* yp = ctx.out(0).data<T>();
  const char* name = kLog ? "logsoftmax" : "softmax";
  // Rows exponentiated once, eight lanes at a time (ew_vecmath.h), where the CPU has AVX2.
  const ew::VecMath* vm = nullptr;
  if constexpr (std::is_same_v<C, float>) vm = ew::Avx2VecMath();
  if constexpr (std::is_same_v<T, float>) {
    if (s.inner == 1 && vm != nullptr) {
      return ctx.ParallelFor(name, s.outer, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) vm->softmax_row(xp + o * s.axis, yp + o * s.axis, s.axis, kLog);
      }, 64);
    }
  }
  if (s.inner == 1 && vm != nullptr) {  // float16 and bfloat16 rows, computed in float
    return ctx.ParallelFor(name, s.outer, [&](int64_t begin, int64_t end) {
      std::vector<float> e(s.axis), ex(s.axis);
      const ew::UnaryParams none;
      for (int64_t o = begin; o < end; ++o) {
        const T* p = xp + o * s.axis;
        T* q = yp + o * s.axis;
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t k = 0; k < s.axis; ++k) mx = std::max(mx, static_cast<float>(p[k]));
        for (int64_t k = 0; k < s.axis; ++k) e[k] = static_cast<float>(p[k]) - mx;
        vm->exp(e.data(), ex.data(), s.axis, none);
        float sum = 0;
        for (int64_t k = 0; k < s.axis; ++k) sum += ex[k];
        if constexpr (kLog) {
          const float ls = std::log(sum);
          for (int64_t k = 0; k < s.axis; ++k) q[k] = static_cast<T>(e[k] - ls);
        } else {
          const float inv = 1.0f / sum;
          for (int64_t k = 0; k < s.axis; ++k) q[k] = static_cast<T>(ex[k] * inv);
        }
      }
    }, 64);
  }
  if (s.inner == 1) {
    return ctx.ParallelFor(name, s.outer, [&](int64_t begin, int64_t end) {
      std::vector<C> e(s.axis);
      for (int64_t o = begin; o < end; ++o) {
        const T* p = xp + o * s.axis;
        T* q = yp + o * s.axis;
        C mx = -std::numeric_limits<C>::infinity();
        for (int64_t k = 0; k < s.axis; ++k) mx = std::max(mx, static_cast<C>(p[k]));
        C sum = 0;
        for (int64_t k = 0; k < s.axis; ++k) {
          e[k] = static_cast<C>(p[k]) - mx;
          sum += std::exp(e[k]);
        }
        if constexpr (kLog) {
          const C ls = std::log(sum);
          for (int64_t k = 0; k < s.axis; ++k) q[k] = static_cast<T>(e[k] - ls);
        } else {
          const C inv = C(1) / sum;
          for (int64_t k = 0; k < s.axis; ++k) q[k] = static_cast<T>(std::exp(e[k]) * inv);
        }
      }
    }, 64);
  }
  // Axis in the middle: for each outer slice, reduce over the axis for all
  // inner positions at once (rows of `inner` contiguous elements).
  return ctx.ParallelFor(name, s.outer, [&](int64_t begin, int64_t end) {
    std::vector<C> mx(s.inner), sum(s.inner);
    for (int64_t o = begin; o < end; ++o) {
      const T* p = xp + o * s.axis * s.inner;
      T* q = yp + o * s.axis * s.inner;
      std::fill(mx.begin(), mx.end(), -std::numeric_limits<C>::infinity());
      std::fill(sum.begin(), sum.end(), C(0));
      for (int64_t k = 0; k < s.axis; ++k)
        for (int64_t i = 0; i < s.inner; ++i) mx[i] = std::max(mx[i], static_cast<C>(p[k * s.inner + i]));
      for (int64_t k = 0; k < s.axis; ++k)
        for (int64_t i = 0; i < s.inner; ++i) sum[i] += std::exp(static_cast<C>(p[k * s.inner + i]) - mx[i]);
      for (int64_t i = 0; i < s.inner; ++i) sum[i] = kLog ? std::log(sum[i]) : C(1) / sum[i];
      for (int64_t k = 0; k < s.axis; ++k)
        for (int64_t i = 0; i < s.inner; ++i) {
          const C v = static_cast<C>(p[k * s.inner + i]) - mx[i];
          q[k * s.inner + i] = static_cast<T>(kLog ? v - sum[i] : std::exp(v) * sum[i]);
        }
    }
  }, 4);
}

template <bool kLog>
Status SoftmaxCpu(KernelContext& ctx) {
  return DispatchFloat(ctx.in(0).dtype(), ctx.op_name(),
                       [&]<typename scalar_t>() { return SoftmaxTyped<scalar_t, kLog>(ctx); });
}

template <bool kLog>
Status SoftmaxReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const std::vector<double> v = kernels::ToDoubles(x);
  int64_t len = 1, inner = 1;
  if (x.rank() > 0) {
    const int axis = *NormalizeAxis(ctx.attrs().i("axis", -1), x.rank());
    len = x.dim(axis);
    for (int i = axis + 1; i < x.rank(); ++i) inner *= x.dim(i);
  }
  std::vector<double> y(v.size());
  const int64_t outer = len * inner != 0 ? static_cast<int64_t>(v.size()) / (len * inner) : 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * len + k) * inner + i; };
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < len; ++k) mx = std::max(mx, v[at(k)]);
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(v[at(k)] - mx);
      for (int64_t k = 0; k < len; ++k) {
        y[at(k)] = kLog ? v[at(k)] - mx - std::log(sum) : std::exp(v[at(k)] - mx) / sum;
      }
    }
  }
  kernels::FromDoubles(ctx.out(0), y);
  return Status::Ok();
}

Cost SoftmaxCost(const OpCall& c) {
  return Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(),
              .flops = 5.0 * static_cast<double>(c.in(0).numel())};
}

}  // namespace

OPSCOPE_OP("Softmax")
    .Doc("y = exp(x - max) / sum(exp(x - max)) along axis")
    .Input("input", "T").Output("output", "T")
    .TypeConstraint("T", kSoftmaxTypes)
    .Attr("axis", -1)
    .Infer(SoftmaxInfer)
    .Cost(SoftmaxCost)
    .Tunable("block", {64, 16, 256})
    .Reference(SoftmaxReference<false>)
    .Kernel("cpu", SoftmaxCpu<false>, "softmax_cpu");

OPSCOPE_OP("LogSoftmax")
    .Doc("y = x - max - log(sum(exp(x - max))) along axis")
    .Input("input", "T").Output("output", "T")
    .TypeConstraint("T", kSoftmaxTypes)
    .Attr("axis", -1)
    .Infer(SoftmaxInfer)
    .Cost(SoftmaxCost)
    .Tunable("block", {64, 16, 256})
    .Reference(SoftmaxReference<true>)
    .Kernel("cpu", SoftmaxCpu<true>, "logsoftmax_cpu");

}  // namespace opscope
