// Gather: output = data[:axis] + indices.shape + data[axis+1:], each index
// picking a slab of data along axis (negative indices count from the end).
// The kernel checks every index first, then memcpys one inner slab per
// (outer, index) pair.
#include <algorithm>
#include <cstring>

#include "ops/builtin/shape_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

StatusOr<int> GatherAxis(int64_t axis, const Shape& data) {
  if (axis < -data.rank() || axis >= data.rank()) {
    return InvalidArgumentError("Gather: axis " + std::to_string(axis) + " is out of range for data " +
                                data.ToString());
  }
  return static_cast<int>(axis < 0 ? axis + data.rank() : axis);
}

Status InferGather(InferContext& c) {
  const Shape& data = c.input(0).shape;
  OPSCOPE_ASSIGN_OR_RETURN(int axis, GatherAxis(c.attrs().i("axis"), data));
  std::vector<int64_t> dims(data.dims().begin(), data.dims().begin() + axis);
  for (int64_t d : c.input(1).shape.dims()) dims.push_back(d);
  for (int i = axis + 1; i < data.rank(); ++i) dims.push_back(data[i]);
  c.SetOutput(0, c.input(0).dtype, Shape(dims));
  return Status::Ok();
}

Status BadIndex(int64_t at, int64_t value, int64_t dim, int axis) {
  return InvalidArgumentError("Gather: indices[" + std::to_string(at) + "] = " + std::to_string(value) +
                              " is out of range for dim " + std::to_string(axis) + " of size " + std::to_string(dim) +
                              " (expected -" + std::to_string(dim) + " to " + std::to_string(dim - 1) + ")");
}

// Indices as int64 in [0, dim), negatives wrapped.
template <typename I>
Status WrapIndices(const I* p, int64_t n, int64_t dim, int axis, std::vector<int64_t>& out) {
  out.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = static_cast<int64_t>(p[i]);
    int64_t w = v < 0 ? v + dim : v;
    if (w < 0 || w >= dim) return BadIndex(i, v, dim, axis);
    out[i] = w;
  }
  return Status::Ok();
}

Status GatherCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor data, ctx.in(0).Contiguous());
  OPSCOPE_ASSIGN_OR_RETURN(Tensor indices, ctx.in(1).Contiguous());
  Tensor& y = ctx.out(0);
  OPSCOPE_ASSIGN_OR_RETURN(int axis, GatherAxis(ctx.attrs().i("axis"), data.shape()));
  const kernels::AxisSplit s = kernels::SplitAtAxis(data.shape(), axis);
  const int64_t nidx = indices.numel();
  std::vector<int64_t> idx;
  if (indices.dtype() == DType::kI64) {
    OPSCOPE_RETURN_IF_ERROR(WrapIndices(indices.data<int64_t>(), nidx, s.axis, axis, idx));
  } else {
    OPSCOPE_RETURN_IF_ERROR(WrapIndices(indices.data<int32_t>(), nidx, s.axis, axis, idx));
  }
  const size_t es = data.element_size();
  const int64_t inner = s.inner;
  const char* src = static_cast<const char*>(data.raw_data());
  char* dst = static_cast<char*>(y.raw_data());
  if (inner == 0) return Status::Ok();
  return ctx.ParallelFor("gather_cpu", y.numel(), [&](int64_t b, int64_t e) {
    int64_t row = b / inner, col = b % inner;  // row = outer * nidx + j
    while (b < e) {
      int64_t len = std::min(inner - col, e - b);
      int64_t o = row / nidx, j = row % nidx;
      const char* from = src + ((o * s.axis + idx[j]) * inner + col) * static_cast<int64_t>(es);
      std::memcpy(dst + b * static_cast<int64_t>(es), from, static_cast<size_t>(len) * es);
      b += len;
      col = 0;
      ++row;
    }
  }, 1 << 16);
}

Status GatherReference(KernelContext& ctx) {
  const Shape& data = ctx.in(0).shape();
  const Shape& ishape = ctx.in(1).shape();
  std::vector<int64_t> indices = kernels::ToInt64s(ctx.in(1));
  OPSCOPE_ASSIGN_OR_RETURN(int axis, GatherAxis(ctx.attrs().i("axis"), data));
  for (size_t i = 0; i < indices.size(); ++i) {
    int64_t v = indices[i];
    if (v < -data[axis] || v >= data[axis]) return BadIndex(static_cast<int64_t>(i), v, data[axis], axis);
  }
  std::vector<int64_t> src;
  std::vector<int64_t> d_idx(data.rank()), i_idx(ishape.rank());
  shape_ops::ForEachIndex(ctx.out(0).shape(), [&](const std::vector<int64_t>& o) {
    // o = data dims before axis, then index dims, then data dims after axis.
    for (int k = 0; k < axis; ++k) d_idx[k] = o[k];
    for (int k = 0; k < ishape.rank(); ++k) i_idx[k] = o[axis + k];
    for (int k = axis + 1; k < data.rank(); ++k) d_idx[k] = o[k - 1 + ishape.rank()];
    int64_t v = indices[shape_ops::FlatIndex(i_idx, ishape)];
    d_idx[axis] = v < 0 ? v + data[axis] : v;
    src.push_back(shape_ops::FlatIndex(d_idx, data));
  });
  return shape_ops::ReferenceGather(ctx.in(0), src, ctx.out(0));
}

}  // namespace

OPSCOPE_OP("Gather")
    .Doc("Picks slabs of data along axis by index; output = data[:axis] + indices.shape + data[axis+1:]")
    .Input("data", "T").Input("indices", "Tind").Output("output", "T")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("Tind", {DType::kI32, DType::kI64})
    .Attr("axis", 0)
    .Infer(InferGather)
    .Cost([](const OpCall& c) {
      return Cost{.bytes_read = c.out(0).bytes() + c.in(1).bytes(), .bytes_written = c.out(0).bytes(), .flops = 0};
    })
    .Tunable("block", {65536, 16384, 262144})
    .Reference(GatherReference)
    .Kernel("cpu", GatherCpu, "gather_cpu");

}  // namespace opscope
