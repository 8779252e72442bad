// Ops that keep the elements in row-major order and only change the shape:
// Reshape, Flatten, Squeeze, Unsqueeze, Identity. Their kernels are one copy
// (a memcpy when the input is contiguous); the shape work is all in inference.
#include <numeric>

#include "ops/builtin/shape_util.h"

namespace opscope {
namespace {

using shape_ops::IntsToString;

Status SameOrderCpu(KernelContext& ctx) {
  return shape_ops::CopyInto(ctx, std::string(ctx.op_name()) + "_copy_cpu", ctx.in(0), ctx.out(0));
}

Status SameOrderReference(KernelContext& ctx) {
  std::vector<int64_t> src(ctx.out(0).numel());
  std::iota(src.begin(), src.end(), int64_t{0});
  return shape_ops::ReferenceGather(ctx.in(0), src, ctx.out(0));
}

Status InferReshape(InferContext& c) {
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> want, shape_ops::ValueInts(c, 1, "shape"));
  const Shape& in = c.input(0).shape;
  const bool allow_zero = c.attrs().i("allowzero") != 0;
  std::vector<int64_t> dims(want.size());
  int infer_at = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < want.size(); ++i) {
    int64_t d = want[i];
    if (d == -1) {
      if (infer_at >= 0) {
        return InvalidArgumentError("Reshape: shape " + IntsToString(want) + " has more than one -1");
      }
      infer_at = static_cast<int>(i);
      continue;
    }
    if (d < -1) {
      return InvalidArgumentError("Reshape: shape " + IntsToString(want) + " has " + std::to_string(d) +
                                  "; dims must be >= -1");
    }
    if (d == 0 && !allow_zero) {
      if (static_cast<int>(i) >= in.rank()) {
        return InvalidArgumentError("Reshape: shape " + IntsToString(want) + " has 0 at position " +
                                    std::to_string(i) + " (copy the input dim) but the input " + in.ToString() +
                                    " has rank " + std::to_string(in.rank()));
      }
      d = in[static_cast<int>(i)];
    }
    if (d == 0) has_zero = true;
    dims[i] = d;
    known *= d;
  }
  if (allow_zero && has_zero && infer_at >= 0) {
    return InvalidArgumentError("Reshape: shape " + IntsToString(want) +
                                " has both 0 and -1, which allowzero=1 forbids");
  }
  if (infer_at >= 0) {
    if (known == 0 || in.numel() % known != 0) {
      return InvalidArgumentError("Reshape: cannot infer the -1 in shape " + IntsToString(want) + " for input " +
                                  in.ToString() + " (" + std::to_string(in.numel()) + " elements)");
    }
    dims[infer_at] = in.numel() / known;
  }
  Shape out(dims);
  if (out.numel() != in.numel()) {
    return InvalidArgumentError("Reshape: input " + in.ToString() + " (" + std::to_string(in.numel()) +
                                " elements) cannot become " + out.ToString() + " (" +
                                std::to_string(out.numel()) + " elements; shape input " + IntsToString(want) + ")");
  }
  c.SetOutput(0, c.input(0).dtype, out);
  return Status::Ok();
}

Status InferFlatten(InferContext& c) {
  const Shape& in = c.input(0).shape;
  int64_t axis = c.attrs().i("axis", 1);
  if (axis < -in.rank() || axis > in.rank()) {
    return InvalidArgumentError("Flatten: axis " + std::to_string(axis) + " is out of range for input " +
                                in.ToString() + " (expected -" + std::to_string(in.rank()) + " to " +
                                std::to_string(in.rank()) + ")");
  }
  if (axis < 0) axis += in.rank();
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < in.rank(); ++i) (i < axis ? outer : inner) *= in[i];
  c.SetOutput(0, c.input(0).dtype, Shape({outer, inner}));
  return Status::Ok();
}

Status InferSqueeze(InferContext& c) {
  const Shape& in = c.input(0).shape;
  std::vector<bool> drop(in.rank(), false);
  if (c.has_input(1)) {
    OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> axes, shape_ops::ValueInts(c, 1, "axes"));
    OPSCOPE_ASSIGN_OR_RETURN(std::vector<int> norm, shape_ops::NormalizeAxes("Squeeze", "axes", axes, in.rank()));
    for (int a : norm) {
      if (in[a] != 1) {
        return InvalidArgumentError("Squeeze: axes " + IntsToString(axes) + ": dim " + std::to_string(a) +
                                    " of input " + in.ToString() + " is " + std::to_string(in[a]) + ", not 1");
      }
      drop[a] = true;
    }
  } else {
    for (int i = 0; i < in.rank(); ++i) drop[i] = in[i] == 1;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < in.rank(); ++i) if (!drop[i]) dims.push_back(in[i]);
  c.SetOutput(0, c.input(0).dtype, Shape(dims));
  return Status::Ok();
}

Status InferUnsqueeze(InferContext& c) {
  const Shape& in = c.input(0).shape;
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> axes, shape_ops::ValueInts(c, 1, "axes"));
  const int out_rank = in.rank() + static_cast<int>(axes.size());
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int> norm, shape_ops::NormalizeAxes("Unsqueeze", "axes", axes, out_rank));
  std::vector<bool> inserted(out_rank, false);
  for (int a : norm) inserted[a] = true;
  std::vector<int64_t> dims;
  int next = 0;
  for (int i = 0; i < out_rank; ++i) dims.push_back(inserted[i] ? 1 : in[next++]);
  c.SetOutput(0, c.input(0).dtype, Shape(dims));
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("Reshape")
    .Doc("Same elements in a new shape; 0 copies the input dim (unless allowzero=1), -1 is inferred")
    .Input("data", "T").ValueInput("shape", "I64", /*optional=*/true).Output("reshaped", "T")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("I64", {DType::kI64})
    .AttrAsInput("shape", AttrType::kInts, 1)  // Reshape-1
    .Attr("allowzero", 0)
    .Infer(InferReshape)
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(SameOrderReference)
    .Kernel("cpu", SameOrderCpu, "reshape_copy_cpu");

OPSCOPE_OP("Flatten")
    .Doc("Flattens to 2-D: dims before axis times dims from axis on")
    .Input("input", "T").Output("output", "T")
    .TypeConstraint("T", AllDTypes())
    .Attr("axis", 1)
    .Infer(InferFlatten)
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(SameOrderReference)
    .Kernel("cpu", SameOrderCpu, "flatten_copy_cpu");

OPSCOPE_OP("Squeeze")
    .Doc("Removes the given size-1 axes (all size-1 axes when axes is omitted)")
    .Input("data", "T").ValueInput("axes", "I64", /*optional=*/true).Output("squeezed", "T")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("I64", {DType::kI64})
    .AttrAsInput("axes", AttrType::kInts, 1)  // opsets 1-12
    .Infer(InferSqueeze)
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(SameOrderReference)
    .Kernel("cpu", SameOrderCpu, "squeeze_copy_cpu");

OPSCOPE_OP("Unsqueeze")
    .Doc("Inserts size-1 axes at the given positions of the output")
    .Input("data", "T").ValueInput("axes", "I64", /*optional=*/true).Output("expanded", "T")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("I64", {DType::kI64})
    .AttrAsInput("axes", AttrType::kInts, 1)  // opsets 1-12
    .Infer(InferUnsqueeze)
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(SameOrderReference)
    .Kernel("cpu", SameOrderCpu, "unsqueeze_copy_cpu");

OPSCOPE_OP("Identity")
    .Doc("y = x, any dtype")
    .Input("input", "V").Output("output", "V")
    .TypeConstraint("V", AllDTypes())
    .SameShape()
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(SameOrderReference)
    .Kernel("cpu", SameOrderCpu, "identity_copy_cpu");

}  // namespace opscope
