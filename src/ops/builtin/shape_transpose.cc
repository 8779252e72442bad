// Transpose: output dim k is input dim perm[k] (perm defaults to reversed).
// The kernel is a strided copy with the input's strides permuted; the
// reference maps each output index back to its input index.
#include <numeric>

#include "ops/builtin/shape_util.h"

namespace opscope {
namespace {

using shape_ops::IntsToString;

// The permutation in force: the attr, or the dims reversed.
StatusOr<std::vector<int>> Perm(const Attrs& attrs, int rank) {
  std::vector<int64_t> perm = attrs.ints("perm");
  std::vector<int> p;
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) p.push_back(i);
    return p;
  }
  if (static_cast<int>(perm.size()) != rank) {
    return InvalidArgumentError("Transpose: perm " + IntsToString(perm) + " has " + std::to_string(perm.size()) +
                                " entries for an input of rank " + std::to_string(rank));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t a : perm) {
    if (a < 0 || a >= rank || seen[a]) {
      return InvalidArgumentError("Transpose: perm " + IntsToString(perm) + " is not a permutation of 0.." +
                                  std::to_string(rank - 1));
    }
    seen[a] = true;
    p.push_back(static_cast<int>(a));
  }
  return p;
}

Status InferTranspose(InferContext& c) {
  const Shape& in = c.input(0).shape;
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int> p, Perm(c.attrs(), in.rank()));
  std::vector<int64_t> dims;
  for (int a : p) dims.push_back(in[a]);
  c.SetOutput(0, c.input(0).dtype, Shape(dims));
  return Status::Ok();
}

Status TransposeCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int> p, Perm(ctx.attrs(), x.rank()));
  std::vector<int64_t> in_strides = shape_ops::ByteStrides(x);
  shape_ops::CopyPlan plan;
  plan.shape = y.shape().dims();
  plan.dst_strides = shape_ops::ContiguousByteStrides(y.shape(), y.element_size());
  for (int a : p) plan.src_strides.push_back(in_strides[a]);
  return shape_ops::RunStridedCopy(ctx, "transpose_cpu", static_cast<char*>(y.raw_data()),
                                   static_cast<const char*>(x.raw_data()), plan, x.element_size());
}

Status TransposeReference(KernelContext& ctx) {
  const Shape& in = ctx.in(0).shape();
  const Shape& out = ctx.out(0).shape();
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int> p, Perm(ctx.attrs(), in.rank()));
  std::vector<int64_t> src;
  src.reserve(out.numel());
  std::vector<int64_t> in_idx(in.rank());
  shape_ops::ForEachIndex(out, [&](const std::vector<int64_t>& o) {
    for (int k = 0; k < out.rank(); ++k) in_idx[p[k]] = o[k];
    src.push_back(shape_ops::FlatIndex(in_idx, in));
  });
  return shape_ops::ReferenceGather(ctx.in(0), src, ctx.out(0));
}

}  // namespace

OPSCOPE_OP("Transpose")
    .Doc("Permutes the dims: output dim k is input dim perm[k]; perm defaults to the dims reversed")
    .Input("data", "T").Output("transposed", "T")
    .TypeConstraint("T", AllDTypes())
    .Attr("perm", std::vector<int64_t>{})
    .Infer(InferTranspose)
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(TransposeReference)
    .Kernel("cpu", TransposeCpu, "transpose_cpu");

}  // namespace opscope
