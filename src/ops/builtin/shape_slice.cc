// Slice: per axis, elements start, start+step, ... up to (not including) end,
// with ONNX's rules: negative starts/ends count from the end, then they are
// clamped to [0, dim] (step > 0) or [-1, dim-1] (step < 0), so out-of-range
// bounds select what exists. The kernel is one strided copy whose source
// strides are the input strides times the steps.
#include <algorithm>

#include "ops/builtin/shape_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

using shape_ops::IntsToString;

struct SliceDim {
  int64_t start = 0;
  int64_t step = 1;
  int64_t len = 0;
};

// One SliceDim per input dim (untouched dims take everything).
StatusOr<std::vector<SliceDim>> SliceDims(const Shape& in, const std::vector<int64_t>& starts,
                                          const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                          std::vector<int64_t> steps) {
  if (starts.size() != ends.size()) {
    return InvalidArgumentError("Slice: starts " + IntsToString(starts) + " and ends " + IntsToString(ends) +
                                " differ in length");
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    return InvalidArgumentError("Slice: starts " + IntsToString(starts) + ", axes " + IntsToString(axes) +
                                " and steps " + IntsToString(steps) + " must have the same length");
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int> norm, shape_ops::NormalizeAxes("Slice", "axes", axes, in.rank()));
  std::vector<SliceDim> dims(in.rank());
  for (int d = 0; d < in.rank(); ++d) dims[d] = SliceDim{0, 1, in[d]};
  for (size_t i = 0; i < norm.size(); ++i) {
    const int d = norm[i];
    const int64_t dim = in[d];
    const int64_t step = steps[i];
    if (step == 0) return InvalidArgumentError("Slice: steps " + IntsToString(steps) + " has a 0 step");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    int64_t len = 0;
    if (step > 0 && e > s) len = (e - s + step - 1) / step;
    if (step < 0 && s > e) len = (s - e + (-step) - 1) / (-step);
    dims[d] = SliceDim{len > 0 ? s : 0, step, len};
  }
  return dims;
}

std::vector<int64_t> IntsOrEmpty(const Tensor* t) { return t ? kernels::ToInt64s(*t) : std::vector<int64_t>{}; }

Status InferSlice(InferContext& c) {
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> starts, shape_ops::ValueInts(c, 1, "starts"));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> ends, shape_ops::ValueInts(c, 2, "ends"));
  std::vector<int64_t> axes, steps;
  if (c.has_input(3)) { OPSCOPE_ASSIGN_OR_RETURN(axes, shape_ops::ValueInts(c, 3, "axes")); }
  if (c.has_input(4)) { OPSCOPE_ASSIGN_OR_RETURN(steps, shape_ops::ValueInts(c, 4, "steps")); }
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<SliceDim> dims, SliceDims(c.input(0).shape, starts, ends, axes, steps));
  std::vector<int64_t> out;
  for (const SliceDim& d : dims) out.push_back(d.len);
  c.SetOutput(0, c.input(0).dtype, Shape(out));
  return Status::Ok();
}

Status SliceCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  OPSCOPE_ASSIGN_OR_RETURN(
      std::vector<SliceDim> dims,
      SliceDims(x.shape(), kernels::ToInt64s(ctx.in(1)), kernels::ToInt64s(ctx.in(2)),
                IntsOrEmpty(ctx.has_input(3) ? &ctx.in(3) : nullptr), IntsOrEmpty(ctx.has_input(4) ? &ctx.in(4) : nullptr)));
  if (y.numel() == 0) return Status::Ok();
  std::vector<int64_t> in_strides = shape_ops::ByteStrides(x);
  shape_ops::CopyPlan plan;
  plan.shape = y.shape().dims();
  plan.dst_strides = shape_ops::ContiguousByteStrides(y.shape(), y.element_size());
  const char* src = static_cast<const char*>(x.raw_data());
  for (int d = 0; d < x.rank(); ++d) {
    src += dims[d].start * in_strides[d];
    plan.src_strides.push_back(dims[d].step * in_strides[d]);
  }
  return shape_ops::RunStridedCopy(ctx, "slice_cpu", static_cast<char*>(y.raw_data()), src, plan, x.element_size());
}

// The reference enumerates, per dim, the selected indices one by one.
Status SliceReference(KernelContext& ctx) {
  const Shape& in = ctx.in(0).shape();
  std::vector<int64_t> starts = kernels::ToInt64s(ctx.in(1)), ends = kernels::ToInt64s(ctx.in(2));
  std::vector<int64_t> axes, steps(starts.size(), 1);
  if (ctx.has_input(3)) axes = kernels::ToInt64s(ctx.in(3));
  else for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (ctx.has_input(4)) steps = kernels::ToInt64s(ctx.in(4));
  std::vector<std::vector<int64_t>> picks(in.rank());
  for (int d = 0; d < in.rank(); ++d) {
    for (int64_t i = 0; i < in[d]; ++i) picks[d].push_back(i);
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    const int d = static_cast<int>(axes[k] < 0 ? axes[k] + in.rank() : axes[k]);
    const int64_t n = in[d];
    int64_t s = starts[k] < 0 ? starts[k] + n : starts[k];
    int64_t e = ends[k] < 0 ? ends[k] + n : ends[k];
    picks[d].clear();
    if (steps[k] > 0) {
      if (s < 0) s = 0;
      if (e > n) e = n;
      for (int64_t i = s; i < e; i += steps[k]) picks[d].push_back(i);
    } else {
      if (s > n - 1) s = n - 1;
      if (e < -1) e = -1;
      for (int64_t i = s; i > e; i += steps[k]) picks[d].push_back(i);
    }
  }
  std::vector<int64_t> src;
  std::vector<int64_t> idx(in.rank());
  shape_ops::ForEachIndex(ctx.out(0).shape(), [&](const std::vector<int64_t>& o) {
    for (int d = 0; d < in.rank(); ++d) idx[d] = picks[d][o[d]];
    src.push_back(shape_ops::FlatIndex(idx, in));
  });
  return shape_ops::ReferenceGather(ctx.in(0), src, ctx.out(0));
}

}  // namespace

OPSCOPE_OP("Slice")
    .Doc("Per axis: start, start+step, ... before end; negative values count from the end, out-of-range ones clamp")
    .Input("data", "T")
    .ValueInput("starts", "Tind", /*optional=*/true).ValueInput("ends", "Tind", /*optional=*/true)
    .ValueInput("axes", "Tind", /*optional=*/true).ValueInput("steps", "Tind", /*optional=*/true)
    .Output("output", "T")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("Tind", {DType::kI32, DType::kI64})
    .AttrAsInput("starts", AttrType::kInts, 1).AttrAsInput("ends", AttrType::kInts, 2)  // opsets 1-9
    .AttrAsInput("axes", AttrType::kInts, 3)
    .Infer(InferSlice)
    .Cost([](const OpCall& c) {
      return Cost{.bytes_read = c.out(0).bytes(), .bytes_written = c.out(0).bytes(), .flops = 0};
    })
    .Tunable("block", {65536, 16384, 262144})
    .Reference(SliceReference)
    .Kernel("cpu", SliceCpu, "slice_cpu");

}  // namespace opscope
