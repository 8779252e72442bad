// Readback ops: what `ops-debug run --readback stats|sample` runs on the
// device next to the op under test, so that only a few bytes come back.
//   opscope_tensor_stats(x)  -> float64[7]: count, NaN, Inf, min, max, mean, rms (over finite values)
//   opscope_tensor_sample(x) -> x's dtype [m]: every ceil(n/count)-th element, row-major
// Both reduce in a fixed block order, so the summary of a tensor does not
// depend on the thread count.
#include <cmath>
#include <limits>
#include <cstring>
#include <type_traits>

#include "opscope/op.h"

namespace opscope {
namespace {

constexpr int64_t kStatsBlock = 1 << 16;

struct Partial {
  int64_t count = 0, nan = 0, inf = 0, finite = 0;
  double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();
  double sum = 0, sumsq = 0;
  void Add(double v) {
    ++count;
    if (std::isnan(v)) { ++nan; return; }
    if (std::isinf(v)) { ++inf; return; }
    ++finite, min = std::min(min, v), max = std::max(max, v), sum += v, sumsq += v * v;
  }
  void Merge(const Partial& o) {
    count += o.count, nan += o.nan, inf += o.inf, finite += o.finite;
    min = std::min(min, o.min), max = std::max(max, o.max), sum += o.sum, sumsq += o.sumsq;
  }
};

template <typename T>
double AsDouble(T v) {
  if constexpr (std::is_arithmetic_v<T>) return static_cast<double>(v);
  else return static_cast<double>(static_cast<float>(v));
}

void WriteStats(const Partial& p, Tensor& out) {
  double* y = out.data<double>();
  const double n = static_cast<double>(p.finite);
  y[0] = static_cast<double>(p.count), y[1] = static_cast<double>(p.nan), y[2] = static_cast<double>(p.inf);
  y[3] = p.finite ? p.min : 0, y[4] = p.finite ? p.max : 0;
  y[5] = p.finite ? p.sum / n : 0, y[6] = p.finite ? std::sqrt(p.sumsq / n) : 0;
}

Status InferStats(InferContext& c) {
  c.SetOutput(0, DType::kF64, Shape({7}));
  return Status::Ok();
}

Status StatsCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (!x.is_contiguous()) return UnimplementedError("opscope_tensor_stats: the cpu kernel needs a contiguous x");
  const int64_t n = x.numel(), blocks = (n + kStatsBlock - 1) / kStatsBlock;
  std::vector<Partial> partials(static_cast<size_t>(blocks));
  Status st = Status::Ok();
  OPSCOPE_SWITCH_ALL(x.dtype(), {
    const scalar_t* p = x.data<scalar_t>();
    st = ctx.ParallelFor("tensor_stats_cpu", blocks, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        Partial& part = partials[static_cast<size_t>(b)];
        for (int64_t i = b * kStatsBlock, e = std::min(n, i + kStatsBlock); i < e; ++i) part.Add(AsDouble(p[i]));
      }
    }, /*default_block=*/1);
  });
  OPSCOPE_RETURN_IF_ERROR(st);
  Partial total;
  for (const Partial& p : partials) total.Merge(p);
  WriteStats(total, ctx.out(0));
  return Status::Ok();
}

Status StatsReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Partial total;
  for (int64_t b = 0; b < x.numel(); b += kStatsBlock) {  // the same blocks, the same sums
    Partial part;
    for (int64_t i = b, e = std::min(x.numel(), b + kStatsBlock); i < e; ++i) part.Add(x.FlatGetAsDouble(i));
    total.Merge(part);
  }
  WriteStats(total, ctx.out(0));
  return Status::Ok();
}

int64_t SampleStride(int64_t n, int64_t count) { return std::max<int64_t>(1, (n + count - 1) / std::max<int64_t>(1, count)); }

Status InferSample(InferContext& c) {
  const int64_t count = c.attrs().i("count");
  if (count < 1) return InvalidArgumentError("opscope_tensor_sample: count must be >= 1, got " + std::to_string(count));
  const int64_t n = c.input(0).numel(), stride = SampleStride(n, count);
  c.SetOutput(0, c.input(0).dtype, Shape({n == 0 ? 0 : (n + stride - 1) / stride}));
  return Status::Ok();
}

Status SampleCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (!x.is_contiguous()) return UnimplementedError("opscope_tensor_sample: the cpu kernel needs a contiguous x");
  const int64_t stride = SampleStride(x.numel(), ctx.attrs().i("count"));
  const size_t width = DTypeSize(x.dtype());
  const auto* in = static_cast<const uint8_t*>(x.raw_data());
  auto* out = static_cast<uint8_t*>(ctx.out(0).raw_data());
  return ctx.ParallelFor("tensor_sample_cpu", ctx.out(0).numel(), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) std::memcpy(out + k * width, in + k * stride * width, width);
  });
}

Status SampleReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t stride = SampleStride(x.numel(), ctx.attrs().i("count"));
  Tensor& out = ctx.out(0);
  if (IsFloat(x.dtype())) {  // the reference's float output is float64
    for (int64_t k = 0; k < out.numel(); ++k) out.FlatSetFromDouble(k, x.FlatGetAsDouble(k * stride));
    return Status::Ok();
  }
  // Integers keep their dtype: copied as they are, since int64 and uint64
  // beyond 2^53 would not survive a double.
  OPSCOPE_ASSIGN_OR_RETURN(Tensor c, x.Contiguous());
  const size_t width = DTypeSize(x.dtype());
  for (int64_t k = 0; k < out.numel(); ++k) {
    std::memcpy(static_cast<char*>(out.raw_data()) + k * width,
                static_cast<const char*>(c.raw_data()) + k * stride * width, width);
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("opscope_tensor_stats")
    .Domain("opscope")
    .Doc("count, NaN, Inf, min, max, mean, rms of x (over finite values) as float64[7]: --readback stats")
    .Input("x", "T").Output("stats", "S")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("S", {DType::kF64})
    .Infer(InferStats)
    .Reference(StatsReference)
    .Kernel("cpu", StatsCpu, "tensor_stats_cpu");

OPSCOPE_OP("opscope_tensor_sample")
    .Domain("opscope")
    .Doc("every ceil(n/count)-th element of x, row-major: --readback sample")
    .Input("x", "T").Output("sample", "T")
    .TypeConstraint("T", AllDTypes())
    .Attr("count", int64_t{4096})
    .Infer(InferSample)
    .Reference(SampleReference)
    .Kernel("cpu", SampleCpu, "tensor_sample_cpu");

}  // namespace opscope
