// TopK: the K largest (or smallest) elements along axis and their int64
// indices, best first; equal values keep the lower index first (as ONNX's
// node tests expect) and NaN counts as larger than any number. The kernel
// partial-sorts each line; the reference stable-sorts the whole line.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ops/builtin/shape_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

StatusOr<int> TopKAxis(int64_t axis, const Shape& in) {
  if (axis < -in.rank() || axis >= in.rank()) {
    return InvalidArgumentError("TopK: axis " + std::to_string(axis) + " is out of range for input " + in.ToString());
  }
  return static_cast<int>(axis < 0 ? axis + in.rank() : axis);
}

Status InferTopK(InferContext& c) {
  const Shape& in = c.input(0).shape;
  OPSCOPE_ASSIGN_OR_RETURN(int axis, TopKAxis(c.attrs().i("axis", -1), in));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> k, shape_ops::ValueInts(c, 1, "K"));
  if (k.size() != 1) {
    return InvalidArgumentError("TopK: input K must hold one value, got " + shape_ops::IntsToString(k));
  }
  if (k[0] < 0 || k[0] > in[axis]) {
    return InvalidArgumentError("TopK: K = " + std::to_string(k[0]) + " is out of range for dim " +
                                std::to_string(axis) + " of input " + in.ToString() + " (expected 0 to " +
                                std::to_string(in[axis]) + ")");
  }
  std::vector<int64_t> dims = in.dims();
  dims[axis] = k[0];
  c.SetOutput(0, c.input(0).dtype, Shape(dims));
  if (c.num_outputs() > 1) c.SetOutput(1, DType::kI64, Shape(dims));
  return Status::Ok();
}

// Is (a at ia) ranked before (b at ib)?
template <typename C>
inline bool RankedBefore(C a, int64_t ia, C b, int64_t ib, bool largest) {
  const bool na = a != a, nb = b != b;  // NaN: larger than every number
  if (na || nb) {
    if (na && nb) return ia < ib;
    return largest ? na : nb;
  }
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

template <typename T>
Status TopKTyped(KernelContext& ctx, const T* x, int64_t k, const kernels::AxisSplit& s) {
  using C = typename ComputeTypeOf<T>::type;
  const bool largest = ctx.attrs().i("largest", 1) != 0;
  T* values = ctx.out(0).data<T>();
  int64_t* indices = ctx.has_output(1) ? ctx.out(1).data<int64_t>() : nullptr;
  const int64_t n = s.axis, inner = s.inner;
  return ctx.ParallelFor("topk_cpu", s.outer * inner, [&](int64_t b, int64_t e) {
    std::vector<C> line(n);
    std::vector<int64_t> order(n);
    for (int64_t l = b; l < e; ++l) {
      const int64_t o = l / inner, i = l % inner;
      const T* src = x + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j) line[j] = static_cast<C>(src[j * inner]);
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t p, int64_t q) {
        return RankedBefore(line[p], p, line[q], q, largest);
      });
      const int64_t dst = o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        values[dst + j * inner] = src[order[j] * inner];
        if (indices) indices[dst + j * inner] = order[j];
      }
    }
  }, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)));
}

Status TopKCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ctx.in(0).Contiguous());
  OPSCOPE_ASSIGN_OR_RETURN(int axis, TopKAxis(ctx.attrs().i("axis", -1), x.shape()));
  const int64_t k = ctx.out(0).dim(axis);
  const kernels::AxisSplit s = kernels::SplitAtAxis(x.shape(), axis);
  return DispatchNumeric(x.dtype(), ctx.op_name(),
                         [&]<typename scalar_t>() { return TopKTyped<scalar_t>(ctx, x.data<scalar_t>(), k, s); });
}

Status TopKReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t a = ctx.attrs().i("axis", -1);
  const int axis = static_cast<int>(a < 0 ? a + x.rank() : a);
  const bool largest = ctx.attrs().i("largest", 1) != 0;
  const int64_t k = ctx.out(0).dim(axis);
  std::vector<double> v = kernels::ToDoubles(x);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t n = x.dim(axis);
  std::vector<double> values(ctx.out(0).numel());
  std::vector<int64_t> indices(ctx.out(0).numel());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<std::pair<double, int64_t>> line;
      for (int64_t j = 0; j < n; ++j) line.push_back({v[(o * n + j) * inner + i], j});
      // Sorting key: NaN above +inf; stable sort keeps equal values in index order.
      auto key = [&](double d) { return std::isnan(d) ? INFINITY : d; };
      auto nan_rank = [&](double d) { return std::isnan(d) ? 1 : 0; };
      std::stable_sort(line.begin(), line.end(), [&](const auto& p, const auto& q) {
        if (largest) {
          if (nan_rank(p.first) != nan_rank(q.first)) return nan_rank(p.first) > nan_rank(q.first);
          return key(p.first) > key(q.first);
        }
        if (nan_rank(p.first) != nan_rank(q.first)) return nan_rank(p.first) < nan_rank(q.first);
        return key(p.first) < key(q.first);
      });
      for (int64_t j = 0; j < k; ++j) {
        values[(o * k + j) * inner + i] = line[j].first;
        indices[(o * k + j) * inner + i] = line[j].second;
      }
    }
  }
  kernels::FromDoubles(ctx.out(0), values);
  if (ctx.has_output(1)) {
    std::copy(indices.begin(), indices.end(), ctx.out(1).data<int64_t>());
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("TopK")
    .Doc("K largest (largest=1) or smallest elements along axis and their int64 indices, best first; "
         "ties keep the lower index first")
    .Input("X", "T").ValueInput("K", "I64", /*optional=*/true).Output("Values", "T").Output("Indices", "I64")
    .TypeConstraint("T", {DType::kF64, DType::kF32, DType::kF16, DType::kI64, DType::kI32, DType::kI16, DType::kI8,
                          DType::kU8})
    .TypeConstraint("I64", {DType::kI64})
    .AttrAsInput("k", AttrType::kInt, 1)  // opsets 1-9
    .Attr("axis", -1).Attr("largest", 1).Attr("sorted", 1)
    .Infer(InferTopK)
    .Cost([](const OpCall& c) {
      // A partial sort: about n log2(k) comparisons per line of n.
      const Shape& in = c.in(0).shape;
      int64_t a = c.attrs().i("axis", -1);
      int axis = static_cast<int>(a < 0 ? a + in.rank() : a);
      double n = axis >= 0 && axis < in.rank() ? double(in[axis]) : 1.0;
      double k = axis >= 0 && axis < c.out(0).shape.rank() ? double(c.out(0).shape[axis]) : 1.0;
      return Cost{.bytes_read = c.in(0).bytes(),
                  .bytes_written = c.out(0).bytes() + (c.num_outputs() > 1 ? c.out(1).bytes() : 0),
                  .flops = double(c.in(0).numel()) * std::log2(std::max(2.0, std::min(k, n)))};
    })
    .Reference(TopKReference)
    .Kernel("cpu", TopKCpu, "topk_cpu");

}  // namespace opscope
