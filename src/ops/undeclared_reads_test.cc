// A kernel that reads an attribute or tunable its op does not declare gets the
// fallback value, and its launch fails naming the op and the name.
#include <gtest/gtest.h>

#include "capture/dispatcher.h"
#include "opscope/op.h"

namespace opscope {
namespace {

Tensor Ones(DType dtype, int64_t n) {
  Tensor t = Tensor::Empty(dtype, Shape({n})).value();
  for (int64_t i = 0; i < n; ++i) t.FlatSetFromDouble(i, 1.0);
  return t;
}

Status CopyScaled(KernelContext& ctx, double scale) {
  for (int64_t i = 0; i < ctx.in(0).numel(); ++i) {
    ctx.out(0).FlatSetFromDouble(i, ctx.in(0).FlatGetAsDouble(i) * scale);
  }
  return Status::Ok();
}

// The kernel and the reference both read `attr` (a typo of eps, or eps itself).
OpSchema NormLike(const std::string& attr) {
  auto body = [attr](KernelContext& ctx) { return CopyScaled(ctx, 1.0 + ctx.attrs().f(attr)); };
  return OpDef("my_norm").Input("x").Output("y").Attr("eps", 1e-6).OptionalAttr("axes", AttrType::kInts)
      .SameShape().Tunable("block", {64, 128}).Reference(body).Kernel("cpu", body).schema();
}

TEST(UndeclaredReads, AnAttributeTypoFailsTheLaunchNamingOpAndName) {
  Device* cpu = GetDevice("cpu").value();
  const std::string want = "op my_norm read attribute 'epz', which it does not declare (it declares: eps, axes)";
  OpSchema typo = NormLike("epz");
  auto on_cpu = Dispatcher::Global().Run(typo, {Ones(DType::kF32, 4)}, {}, RunOptions{.device = cpu});
  ASSERT_FALSE(on_cpu.ok());
  EXPECT_EQ(on_cpu.status().message(), want);
  auto reference = Dispatcher::Global().Run(typo, {Ones(DType::kF32, 4)}, {}, RunOptions{});
  ASSERT_FALSE(reference.ok());
  EXPECT_EQ(reference.status().message(), want);

  // The declared name runs, and reads its value.
  auto ok = Dispatcher::Global().Run(NormLike("eps"), {Ones(DType::kF32, 4)}, {}, RunOptions{.device = cpu});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_FLOAT_EQ(static_cast<float>(ok->outputs[0].FlatGetAsDouble(0)), 1.0f + 1e-6f);
}

TEST(UndeclaredReads, ADeclaredOptionalAttrWithoutValueIsNoError) {
  auto body = [](KernelContext& ctx) { return CopyScaled(ctx, ctx.attrs().has("axes") ? 2.0 : 3.0); };
  OpSchema op = OpDef("opt").Input("x").Output("y").OptionalAttr("axes", AttrType::kInts).SameShape()
                    .Reference(body).schema();
  auto r = Dispatcher::Global().Run(op, {Ones(DType::kF32, 2)}, {}, RunOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(0), 3.0);
}

TEST(UndeclaredReads, HasOfAnUndeclaredNameAndShapeInferenceAreCaughtToo) {
  auto body = [](KernelContext& ctx) { return CopyScaled(ctx, ctx.attrs().has("alpha") ? 2.0 : 3.0); };
  OpSchema has = OpDef("has_op").Input("x").Output("y").SameShape().Reference(body).schema();
  auto r = Dispatcher::Global().Run(has, {Ones(DType::kF32, 2)}, {}, RunOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "op has_op read attribute 'alpha', which it does not declare (it declares: none)");

  OpSchema infer = OpDef("infer_op").Input("x").Output("y").Attr("axis", 0)
                       .Infer([](InferContext& c) {
                         c.SetOutput(0, c.input(0).dtype, c.attrs().i("axiz", 0) ? Shape({1}) : c.input(0).shape);
                         return Status::Ok();
                       })
                       .Reference([](KernelContext& ctx) { return CopyScaled(ctx, 1.0); })
                       .schema();
  auto i = Dispatcher::Global().Run(infer, {Ones(DType::kF32, 2)}, {}, RunOptions{});
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.status().message(), "op infer_op read attribute 'axiz', which it does not declare (it declares: axis)");
}

TEST(UndeclaredReads, AnUndeclaredTunableFailsTheLaunch) {
  Device* cpu = GetDevice("cpu").value();
  auto body = [](KernelContext& ctx) { return CopyScaled(ctx, static_cast<double>(ctx.tunable("blok", 7))); };
  OpSchema op = OpDef("tun").Input("x").Output("y").SameShape().Tunable("block", {64}).Tunable("vec", {1, 2})
                    .Kernel("cpu", body).schema();
  auto r = Dispatcher::Global().Run(op, {Ones(DType::kF32, 2)}, {}, RunOptions{.device = cpu});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "op tun read tunable 'blok', which it does not declare (it declares: block, vec)");

  // ParallelFor reads "block" and "vec" for every op, declared or not.
  auto pf = [](KernelContext& ctx) {
    return ctx.ParallelFor("pf", ctx.in(0).numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ctx.out(0).FlatSetFromDouble(i, 5.0);
    });
  };
  OpSchema plain = OpDef("plain").Input("x").Output("y").SameShape().Kernel("cpu", pf).schema();
  auto p = Dispatcher::Global().Run(plain, {Ones(DType::kF32, 3)}, {}, RunOptions{.device = cpu});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->outputs[0].FlatGetAsDouble(2), 5.0);
}

TEST(UndeclaredReads, AttrsNeverValidatedCheckNothing) {
  Attrs a;
  EXPECT_EQ(a.f("anything", 2.5), 2.5);
  EXPECT_TRUE(a.undeclared_read().ok());
}

TEST(DispatchFloat, BindsTheTypeOrNamesTheDtype) {
  auto size_of = [](DType d) {
    size_t bytes = 0;
    Status st = DispatchFloat(d, "my_op", [&]<typename T>() {
      bytes = sizeof(T);
      return Status::Ok();
    });
    return std::make_pair(st, bytes);
  };
  EXPECT_EQ(size_of(DType::kF16).second, 2u);
  EXPECT_EQ(size_of(DType::kF64).second, 8u);
  auto [st, bytes] = size_of(DType::kI32);
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(st.message(), "my_op: no kernel for dtype int32 (it takes the float types)");
  EXPECT_EQ(bytes, 0u);

  size_t int_bytes = 0;
  Status num = DispatchNumeric(DType::kI16, "my_op", [&]<typename T>() {
    int_bytes = sizeof(T);
    return Status::Ok();
  });
  EXPECT_TRUE(num.ok());
  EXPECT_EQ(int_bytes, 2u);
  EXPECT_EQ(DispatchNumeric(DType::kBool, "my_op", [&]<typename T>() { return Status::Ok(); }).code(),
            StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace opscope
