// Expand broadcasts the input to a shape (numpy rules, both ways); Tile
// repeats it repeats[i] times along each dim. Both kernels are one strided
// copy: Expand reads with stride 0 on broadcast dims, Tile splits each output
// dim i into (repeat, d_i) and reads with stride 0 on the repeat part.
#include "ops/builtin/shape_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

using shape_ops::IntsToString;

Status InferExpand(InferContext& c) {
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> shape, shape_ops::ValueInts(c, 1, "shape"));
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgumentError("Expand: shape " + IntsToString(shape) + " has a negative dim");
  }
  auto out = BroadcastShapes(c.input(0).shape, Shape(shape));
  if (!out.ok()) {
    return InvalidArgumentError("Expand: input " + c.input(0).shape.ToString() + " cannot broadcast with shape " +
                                IntsToString(shape) + ": " + out.status().message());
  }
  c.SetOutput(0, c.input(0).dtype, *out);
  return Status::Ok();
}

Status ExpandCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  shape_ops::CopyPlan plan;
  plan.shape = y.shape().dims();
  plan.dst_strides = shape_ops::ContiguousByteStrides(y.shape(), y.element_size());
  plan.src_strides = kernels::BroadcastStrides(x.shape(), shape_ops::ByteStrides(x), y.shape());
  return shape_ops::RunStridedCopy(ctx, "expand_cpu", static_cast<char*>(y.raw_data()),
                                   static_cast<const char*>(x.raw_data()), plan, x.element_size());
}

Status ExpandReference(KernelContext& ctx) {
  const Shape& in = ctx.in(0).shape();
  const Shape& out = ctx.out(0).shape();
  const int lead = out.rank() - in.rank();
  std::vector<int64_t> src;
  std::vector<int64_t> idx(in.rank());
  shape_ops::ForEachIndex(out, [&](const std::vector<int64_t>& o) {
    for (int k = 0; k < in.rank(); ++k) idx[k] = in[k] == 1 ? 0 : o[lead + k];
    src.push_back(shape_ops::FlatIndex(idx, in));
  });
  return shape_ops::ReferenceGather(ctx.in(0), src, ctx.out(0));
}

Status InferTile(InferContext& c) {
  const Shape& in = c.input(0).shape;
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, shape_ops::ValueInts(c, 1, "repeats"));
  if (static_cast<int>(repeats.size()) != in.rank()) {
    return InvalidArgumentError("Tile: repeats " + IntsToString(repeats) + " has " + std::to_string(repeats.size()) +
                                " entries for input " + in.ToString() + " of rank " + std::to_string(in.rank()));
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < in.rank(); ++i) {
    if (repeats[i] < 0) return InvalidArgumentError("Tile: repeats " + IntsToString(repeats) + " has a negative entry");
    dims.push_back(in[i] * repeats[i]);
  }
  c.SetOutput(0, c.input(0).dtype, Shape(dims));
  return Status::Ok();
}

Status TileCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  const size_t es = x.element_size();
  std::vector<int64_t> in_strides = shape_ops::ByteStrides(x);
  std::vector<int64_t> out_strides = shape_ops::ContiguousByteStrides(y.shape(), es);
  shape_ops::CopyPlan plan;
  for (int i = 0; i < x.rank(); ++i) {
    const int64_t d = x.dim(i);
    const int64_t r = d == 0 ? 0 : y.dim(i) / d;
    plan.shape.insert(plan.shape.end(), {r, d});
    plan.dst_strides.insert(plan.dst_strides.end(), {d * out_strides[i], out_strides[i]});
    plan.src_strides.insert(plan.src_strides.end(), {0, in_strides[i]});
  }
  return shape_ops::RunStridedCopy(ctx, "tile_cpu", static_cast<char*>(y.raw_data()),
                                   static_cast<const char*>(x.raw_data()), plan, es);
}

Status TileReference(KernelContext& ctx) {
  const Shape& in = ctx.in(0).shape();
  std::vector<int64_t> src;
  std::vector<int64_t> idx(in.rank());
  shape_ops::ForEachIndex(ctx.out(0).shape(), [&](const std::vector<int64_t>& o) {
    for (int k = 0; k < in.rank(); ++k) idx[k] = o[k] % in[k];
    src.push_back(shape_ops::FlatIndex(idx, in));
  });
  return shape_ops::ReferenceGather(ctx.in(0), src, ctx.out(0));
}

}  // namespace

OPSCOPE_OP("Expand")
    .Doc("Broadcasts input against shape (numpy rules in both directions)")
    .Input("input", "T").ValueInput("shape", "I64").Output("output", "T")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("I64", {DType::kI64})
    .Infer(InferExpand)
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(ExpandReference)
    .Kernel("cpu", ExpandCpu, "expand_cpu");

OPSCOPE_OP("Tile")
    .Doc("Repeats the input repeats[i] times along dim i")
    .Input("input", "T").ValueInput("repeats", "I64").Output("output", "T")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("I64", {DType::kI64})
    .Infer(InferTile)
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(TileReference)
    .Kernel("cpu", TileCpu, "tile_cpu");

}  // namespace opscope
