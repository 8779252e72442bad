// Concat joins inputs along an axis; Split cuts one input into parts along an
// axis (sizes from the optional split input, else equal parts over the number
// of outputs requested). Kernels: one strided copy per input/output part, with
// the destination/source pointer moved to the part's offset along the axis.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

#include "ops/builtin/shape_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

using shape_ops::IntsToString;

Status InferConcat(InferContext& c) {
  if (c.num_inputs() == 0) return InvalidArgumentError("Concat: needs at least one input");
  const Shape& first = c.input(0).shape;
  const int64_t axis_attr = c.attrs().i("axis");
  if (axis_attr < -first.rank() || axis_attr >= first.rank()) {
    return InvalidArgumentError("Concat: axis " + std::to_string(axis_attr) + " is out of range for inputs of rank " +
                                std::to_string(first.rank()));
  }
  const int axis = static_cast<int>(axis_attr < 0 ? axis_attr + first.rank() : axis_attr);
  std::vector<int64_t> dims = first.dims();
  dims[axis] = 0;
  for (int i = 0; i < c.num_inputs(); ++i) {
    const Shape& s = c.input(i).shape;
    bool match = s.rank() == first.rank();
    for (int d = 0; match && d < s.rank(); ++d) match = d == axis || s[d] == first[d];
    if (!match) {
      return InvalidArgumentError("Concat: input " + std::to_string(i) + " has shape " + s.ToString() +
                                  " but input 0 has " + first.ToString() + "; all dims but axis " +
                                  std::to_string(axis) + " must match");
    }
    dims[axis] += s[axis];
  }
  c.SetOutput(0, c.input(0).dtype, Shape(dims));
  return Status::Ok();
}

int ConcatAxis(KernelContext& ctx) {
  int64_t a = ctx.attrs().i("axis");
  return static_cast<int>(a < 0 ? a + ctx.out(0).rank() : a);
}

// Contiguous inputs whose parts are few runs of bytes (outer dims before the
// axis times the inputs, up to kMaxRuns): every run in one launch, its bytes
// cut evenly over the blocks. One launch per input had run each small input
// as a single block on one worker, and paid a launch each: an inception
// block's concat of four [1,c,28,28] inputs took 57 us in googlenet, a
// block of 64 KiB on one worker for three of the four.
constexpr int64_t kMaxRuns = 4096;

struct CopyRun {
  char* dst;
  const char* src;
  int64_t start;  // its first byte's position in the launch's byte range
};

bool ConcatInOneLaunch(KernelContext& ctx, int axis, std::vector<CopyRun>& runs, int64_t& total) {
  const Tensor& y = ctx.out(0);
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= y.dim(d);
  if (outer * ctx.num_inputs() > kMaxRuns) return false;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.in(i).is_contiguous()) return false;
  }
  const int64_t row = y.nbytes() / std::max<int64_t>(outer, 1);  // Y's bytes per outer index
  total = 0;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t at = 0;  // the part's offset in Y's row
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& x = ctx.in(i);
      const int64_t part = x.nbytes() / std::max<int64_t>(outer, 1);
      if (part > 0) {
        runs.push_back({static_cast<char*>(ctx.out(0).raw_data()) + o * row + at,
                        static_cast<const char*>(x.raw_data()) + o * part, total});
      }
      at += part;
      total += part;
    }
  }
  return true;
}

Status ConcatCpu(KernelContext& ctx) {
  Tensor& y = ctx.out(0);
  const int axis = ConcatAxis(ctx);
  const size_t es = y.element_size();
  std::vector<CopyRun> runs;
  int64_t total = 0;
  if (ConcatInOneLaunch(ctx, axis, runs, total)) {
    if (total == 0) return Status::Ok();
    // One block per worker (in pages), none under 64 KiB.
    const int64_t workers = ctx.device() != nullptr ? std::max(1, ctx.device()->info().compute_units) : 1;
    // Bytes [b, e) of the launch: from the run holding b on, each clipped to the range.
    return ctx.ParallelFor("concat_cpu", total, [&](int64_t b, int64_t e) {
      auto r = std::upper_bound(runs.begin(), runs.end(), b, [](int64_t v, const CopyRun& x) { return v < x.start; });
      for (--r; r != runs.end() && r->start < e; ++r) {
        const int64_t end = std::next(r) != runs.end() ? std::next(r)->start : total;
        const int64_t from = std::max(b, r->start), to = std::min(e, end);
        std::memcpy(r->dst + (from - r->start), r->src + (from - r->start), static_cast<size_t>(to - from));
      }
    }, std::max<int64_t>(int64_t{64} << 10, (total / workers + 4095) / 4096 * 4096));
  }
  std::vector<int64_t> out_strides = shape_ops::ContiguousByteStrides(y.shape(), es);
  int64_t offset = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& x = ctx.in(i);
    shape_ops::CopyPlan plan{x.shape().dims(), out_strides, shape_ops::ByteStrides(x)};
    char* dst = static_cast<char*>(y.raw_data()) + offset * out_strides[axis];
    OPSCOPE_RETURN_IF_ERROR(shape_ops::RunStridedCopy(ctx, "concat_cpu", dst, static_cast<const char*>(x.raw_data()),
                                                      plan, es));
    offset += x.dim(axis);
  }
  return Status::Ok();
}

Status ConcatReference(KernelContext& ctx) {
  // All inputs laid end to end in one flat buffer; the index map points into it.
  const Shape& out = ctx.out(0).shape();
  const int axis = ConcatAxis(ctx);
  const DType dt = ctx.in(0).dtype();
  int64_t total = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) total += ctx.in(i).numel();
  OPSCOPE_ASSIGN_OR_RETURN(Tensor all, Tensor::Empty(dt, Shape({total})));
  std::vector<int64_t> base(ctx.num_inputs()), start(ctx.num_inputs());
  int64_t at = 0, along = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ctx.in(i).Contiguous());
    std::memcpy(static_cast<char*>(all.raw_data()) + at * all.element_size(), x.raw_data(), x.nbytes());
    base[i] = at;
    start[i] = along;
    at += x.numel();
    along += x.dim(axis);
  }
  std::vector<int64_t> src;
  src.reserve(out.numel());
  shape_ops::ForEachIndex(out, [&](const std::vector<int64_t>& o) {
    int i = ctx.num_inputs() - 1;
    while (o[axis] < start[i] || ctx.in(i).dim(axis) == 0) --i;
    std::vector<int64_t> idx = o;
    idx[axis] -= start[i];
    src.push_back(base[i] + shape_ops::FlatIndex(idx, ctx.in(i).shape()));
  });
  return shape_ops::ReferenceGather(all, src, ctx.out(0));
}

// The size of each part along the axis: the split input, or equal parts
// (with `uneven_last`, as opset 18's num_outputs: the last part may be shorter).
StatusOr<std::vector<int64_t>> SplitSizes(const Shape& in, int axis, const Tensor* split, int parts,
                                          bool uneven_last) {
  const int64_t dim = in[axis];
  if (split != nullptr) {
    std::vector<int64_t> sizes = kernels::ToInt64s(*split);
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) return InvalidArgumentError("Split: split " + IntsToString(sizes) + " has a negative size");
      sum += s;
    }
    if (static_cast<int>(sizes.size()) != parts) {
      return InvalidArgumentError("Split: split " + IntsToString(sizes) + " has " + std::to_string(sizes.size()) +
                                  " sizes but " + std::to_string(parts) + " output(s) were requested");
    }
    if (sum != dim) {
      return InvalidArgumentError("Split: split " + IntsToString(sizes) + " sums to " + std::to_string(sum) +
                                  " but dim " + std::to_string(axis) + " of input " + in.ToString() + " is " +
                                  std::to_string(dim));
    }
    return sizes;
  }
  if (uneven_last && dim % parts != 0) {  // opset 18's num_outputs: ceil-sized parts, the last one smaller
    const int64_t size = (dim + parts - 1) / parts;
    if (size * (parts - 1) >= dim && dim > 0) {
      return InvalidArgumentError("Split: dim " + std::to_string(axis) + " of input " + in.ToString() + " (" +
                                  std::to_string(dim) + ") is too short for " + std::to_string(parts) + " parts");
    }
    std::vector<int64_t> sizes(parts, size);
    sizes.back() = dim - size * (parts - 1);
    return sizes;
  }
  if (dim % parts != 0) {
    return InvalidArgumentError("Split: dim " + std::to_string(axis) + " of input " + in.ToString() + " (" +
                                std::to_string(dim) + ") does not split into " + std::to_string(parts) +
                                " equal parts; give the split input");
  }
  return std::vector<int64_t>(parts, dim / parts);
}

StatusOr<int> SplitAxis(std::string_view op, int64_t axis, const Shape& in) {
  if (axis < -in.rank() || axis >= in.rank()) {
    return InvalidArgumentError(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for input " +
                                in.ToString());
  }
  return static_cast<int>(axis < 0 ? axis + in.rank() : axis);
}

Status InferSplit(InferContext& c) {
  const Shape& in = c.input(0).shape;
  OPSCOPE_ASSIGN_OR_RETURN(int axis, SplitAxis("Split", c.attrs().i("axis"), in));
  const Tensor* split = c.has_input(1) ? c.input_value(1) : nullptr;
  if (c.has_input(1) && split == nullptr) {
    return InvalidArgumentError("Split: the values of input 'split' are needed to infer the output shapes");
  }
  const bool has_num_outputs = c.attrs().has("num_outputs");
  if (has_num_outputs && c.attrs().i("num_outputs") != c.num_outputs()) {
    return InvalidArgumentError("Split: num_outputs=" + std::to_string(c.attrs().i("num_outputs")) + " but " +
                                std::to_string(c.num_outputs()) + " output(s) were requested");
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                           SplitSizes(in, axis, split, c.num_outputs(), /*uneven_last=*/has_num_outputs));
  for (int k = 0; k < c.num_outputs(); ++k) {
    std::vector<int64_t> dims = in.dims();
    dims[axis] = sizes[k];
    c.SetOutput(k, c.input(0).dtype, Shape(dims));
  }
  return Status::Ok();
}

Status SplitCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  OPSCOPE_ASSIGN_OR_RETURN(int axis, SplitAxis("Split", ctx.attrs().i("axis"), x.shape()));
  const size_t es = x.element_size();
  std::vector<int64_t> in_strides = shape_ops::ByteStrides(x);
  int64_t offset = 0;
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    Tensor& y = ctx.out(k);
    shape_ops::CopyPlan plan{y.shape().dims(), shape_ops::ContiguousByteStrides(y.shape(), es), in_strides};
    const char* src = static_cast<const char*>(x.raw_data()) + offset * in_strides[axis];
    OPSCOPE_RETURN_IF_ERROR(shape_ops::RunStridedCopy(ctx, "split_cpu", static_cast<char*>(y.raw_data()), src,
                                                      plan, es));
    offset += y.dim(axis);
  }
  return Status::Ok();
}

Status SplitReference(KernelContext& ctx) {
  const Shape& in = ctx.in(0).shape();
  OPSCOPE_ASSIGN_OR_RETURN(int axis, SplitAxis("Split", ctx.attrs().i("axis"), in));
  int64_t start = 0;
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    const Shape& out = ctx.out(k).shape();
    std::vector<int64_t> src;
    shape_ops::ForEachIndex(out, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> idx = o;
      idx[axis] += start;
      src.push_back(shape_ops::FlatIndex(idx, in));
    });
    OPSCOPE_RETURN_IF_ERROR(shape_ops::ReferenceGather(ctx.in(0), src, ctx.out(k)));
    start += out[axis];
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("Concat")
    .Doc("Joins the inputs along axis (negative counts from the end); other dims must match")
    .VariadicInput("inputs", "T").Output("concat_result", "T")
    .TypeConstraint("T", AllDTypes())
    .RequiredAttr("axis", AttrType::kInt)
    .Infer(InferConcat)
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(ConcatReference)
    .Kernel("cpu", ConcatCpu, "concat_cpu");

OPSCOPE_OP("Split")
    .Doc("Cuts input along axis into parts: sizes from the split input, else equal parts over the outputs requested")
    .Input("input", "T").ValueInput("split", "I64", /*optional=*/true).VariadicOutput("outputs", "T")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("I64", {DType::kI64})
    .AttrAsInput("split", AttrType::kInts, 1)  // opsets 1-12
    .OptionalAttr("num_outputs", AttrType::kInt)  // opset 18; it also sets how many outputs a call gets
    .Attr("axis", 0)
    .Infer(InferSplit)
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(SplitReference)
    .Kernel("cpu", SplitCpu, "split_cpu");

}  // namespace opscope
