// Not (bool) and Where (ONNX opset 16): output = condition ? X : Y with numpy
// broadcasting of all three.
#include "ops/builtin/ew_util.h"

namespace opscope {
namespace {

// Over the bytes: `byte == 0` vectorises (a compare and a mask, 32 bytes a
// step), where `!v` on bool went element by element (4.4x the memory bound),
// and it reads any nonzero byte from a file as true, as the reference does.
Status NotCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ctx.in(0).Contiguous());
  static_assert(sizeof(bool) == 1);
  const auto* __restrict px = reinterpret_cast<const uint8_t*>(x.data<bool>());
  auto* __restrict py = reinterpret_cast<uint8_t*>(ctx.out(0).data<bool>());
  return ctx.ParallelFor("not_cpu", ctx.out(0).numel(), [&](int64_t s, int64_t e) {
    const uint8_t* __restrict in = px;
    uint8_t* __restrict out = py;
    for (int64_t i = s; i < e; ++i) out[i] = in[i] == 0;
  });
}

Status NotReference(KernelContext& ctx) {
  std::vector<double> v = kernels::ToDoubles(ctx.in(0));
  for (double& d : v) d = d == 0 ? 1 : 0;
  ew::StoreReference(ctx.out(0), v);
  return Status::Ok();
}

template <typename T>
Status WhereTyped(KernelContext& ctx) {
  const Tensor& cond = ctx.in(0);
  const Tensor& x = ctx.in(1);
  const Tensor& y = ctx.in(2);
  Tensor& out = ctx.out(0);
  const bool* pc = cond.data<bool>();
  const T* px = x.data<T>();
  const T* py = y.data<T>();
  T* po = out.data<T>();
  auto same = [&](const Tensor& t) { return t.shape() == out.shape() && t.is_contiguous(); };
  if (same(cond) && same(x) && same(y)) {
    return ctx.ParallelFor("where_cpu", out.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) po[i] = pc[i] ? px[i] : py[i];
    });
  }
  ew::BroadcastPlan plan = ew::MakeBroadcastPlan(out.shape(), {&cond, &x, &y});
  const int r = plan.shape.rank();
  const int64_t sc = r ? plan.strides[0][r - 1] : 0, sx = r ? plan.strides[1][r - 1] : 0,
                sy = r ? plan.strides[2][r - 1] : 0;
  return ctx.ParallelFor("where_cpu", out.numel(), [&](int64_t s, int64_t e) {
    ew::ForEachRow<3>(plan, s, e, [&](const int64_t* off, int64_t count, int64_t o) {
      const bool* c = pc + off[0];
      const T* a = px + off[1];
      const T* b = py + off[2];
      T* dst = po + o;
      for (int64_t i = 0; i < count; ++i) dst[i] = c[i * sc] ? a[i * sx] : b[i * sy];
    });
  });
}

Status WhereCpu(KernelContext& ctx) {
  DType dt = ctx.in(1).dtype();
  Status st = UnimplementedError(std::string("Where: no cpu kernel for dtype ") + DTypeName(dt));
  OPSCOPE_SWITCH_ALL(dt, st = WhereTyped<scalar_t>(ctx));
  return st;
}

Status WhereReference(KernelContext& ctx) {
  Tensor& out = ctx.out(0);
  std::vector<double> c = ew::BroadcastToDoubles(ctx.in(0), out.shape());
  std::vector<double> x = ew::BroadcastToDoubles(ctx.in(1), out.shape());
  std::vector<double> y = ew::BroadcastToDoubles(ctx.in(2), out.shape());
  std::vector<double> v(c.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = c[i] != 0 ? x[i] : y[i];
  ew::StoreReference(out, v);
  return Status::Ok();
}

Status InferWhere(InferContext& c) {
  OPSCOPE_RETURN_IF_ERROR(ew::InferBroadcast(c, false));
  c.SetOutput(0, c.input(1).dtype, c.outputs()[0].shape);
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("Not")
    .Doc("Y = not X (bool)")
    .Input("X", "T").Output("Y", "T")
    .TypeConstraint("T", {DType::kBool})
    .SameShape()
    .Cost(ew::ElementwiseCost(1))
    .Tunable("block", ew::BlockChoices())
    .Reference(NotReference)
    .Kernel("cpu", NotCpu, "not_cpu");

OPSCOPE_OP("Where")
    .Doc("output = condition ? X : Y (numpy broadcasting of all three)")
    .Input("condition", "B").Input("X", "T").Input("Y", "T").Output("output", "T")
    .TypeConstraint("B", {DType::kBool})
    .TypeConstraint("T", ew::All())
    .Infer(InferWhere)
    .Cost(ew::ElementwiseCost(1))
    .Tunable("block", ew::BlockChoices())
    .Reference(WhereReference)
    .Kernel("cpu", WhereCpu, "where_cpu");

}  // namespace opscope
