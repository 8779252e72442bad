// Declares an output written only sometimes without saying when (the words of
// `when` are empty): the loader must refuse the plugin naming the op and the
// output, not run it and leave a reader guessing why mask went unchecked.
#include "opscope/op.h"

namespace {

opscope::Status Copy(opscope::KernelContext& ctx) {
  for (int64_t i = 0; i < ctx.in(0).numel(); ++i) ctx.out(0).FlatSetFromDouble(i, ctx.in(0).FlatGetAsDouble(i));
  return opscope::Status::Ok();
}

opscope::Status Infer(opscope::InferContext& c) {
  c.SetOutput(0, c.input(0).dtype, c.input(0).shape);
  c.SetOutput(1, c.input(0).dtype, c.input(0).shape);
  return opscope::Status::Ok();
}

}  // namespace

OPSCOPE_OP("sometimes_copy")
    .Input("x").Output("y")
    .OutputWrittenOnlyWhen("mask", "", [](const opscope::Attrs&, const std::vector<opscope::TensorDesc>&) { return false; })
    .Infer(Infer).Reference(Copy).Kernel("cpu", Copy);
