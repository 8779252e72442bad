// A call settled once and launched again and again (Dispatcher::Settle,
// RunSettled) against Run: the same bits out, the same hooks told of every
// launch, and no settling where the checks could come out otherwise.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "capture/dispatcher.h"
#include "core/frozen_buffer.h"
#include "opscope/fill.h"

namespace opscope {
namespace {

Tensor Filled(DType dtype, Shape shape, uint64_t seed) {
  StatusOr<Tensor> t = Tensor::Empty(dtype, std::move(shape));
  EXPECT_TRUE(t.ok());
  EXPECT_TRUE(Fill(*t, {.kind = FillKind::kUniform, .seed = seed}).ok());
  return *t;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  StatusOr<Tensor> ha = ToHost(a), hb = ToHost(b);
  return ha.ok() && hb.ok() && ha->nbytes() == hb->nbytes() &&
         std::memcmp(ha->raw_data(), hb->raw_data(), ha->nbytes()) == 0;
}

// Counts what the hooks are told, and the sequence numbers of the launches.
struct Counting : DispatchHook {
  int before = 0, after = 0, rejected = 0;
  std::vector<uint64_t> seqs, op_ids;
  std::vector<std::string> kernels;
  void BeforeLaunch(const LaunchRecord& r) override {
    ++before;
    seqs.push_back(r.seq);
    op_ids.push_back(r.op_id);
    kernels.push_back(r.kernel);
  }
  void AfterLaunch(const LaunchRecord&) override { ++after; }
  void CallRejected(const LaunchRecord&, const Status&) override { ++rejected; }
};

Attrs ConvAttrs() {
  Attrs a;
  a.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return a;
}

TEST(SettledCall, LaunchesAsRunDoesBitForBitAndReachesTheHooks) {
  StatusOr<Device*> cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok());
  StatusOr<const OpSchema*> conv = OpRegistry::Global().Lookup("Conv");
  ASSERT_TRUE(conv.ok());
  const std::vector<Tensor> in = {Filled(DType::kF32, Shape({1, 3, 9, 9}), 1), Filled(DType::kF32, Shape({4, 3, 3, 3}), 2),
                                  Filled(DType::kF32, Shape({4}), 3)};
  const RunOptions opts{.device = *cpu};
  StatusOr<OpRun> ran = Dispatcher::Global().Run(**conv, in, ConvAttrs(), opts);
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();

  std::shared_ptr<const SettledCall> call = Dispatcher::Global().Settle(**conv, in, ConvAttrs(), opts);
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->outputs.size(), 1u);
  EXPECT_EQ(call->outputs[0].shape, ran->outputs[0].shape());
  EXPECT_TRUE(call->attrs->has("group")) << "validation fills the op's defaults";
  EXPECT_EQ(call->kernel_name, ran->kernel);
  EXPECT_TRUE(call->Matches(in));

  auto hook = std::make_shared<Counting>();
  const int id = Dispatcher::Global().AddHook(hook);
  StatusOr<OpRun> first = Dispatcher::Global().RunSettled(*call, in, opts);
  StatusOr<OpRun> second = Dispatcher::Global().RunSettled(*call, in, opts);
  Dispatcher::Global().RemoveHook(id);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(SameBits(first->outputs[0], ran->outputs[0]));
  EXPECT_TRUE(SameBits(second->outputs[0], ran->outputs[0]));
  EXPECT_EQ(first->kernel, ran->kernel);
  EXPECT_GE(first->device_us, 0) << "a synchronous launch is timed by its events";
  EXPECT_EQ(hook->before, 2);
  EXPECT_EQ(hook->after, 2);
  ASSERT_EQ(hook->seqs.size(), 2u);
  EXPECT_GT(hook->seqs[1], hook->seqs[0]);
  EXPECT_GT(hook->seqs[0], ran->seq);
  EXPECT_NE(hook->op_ids[0], hook->op_ids[1]);
  EXPECT_EQ(hook->kernels[0], ran->kernel);
  EXPECT_EQ(second->op_id, hook->op_ids[1]);
}

TEST(SettledCall, MatchesOnlyTheDtypesAndShapesItWasSettledFor) {
  StatusOr<Device*> cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok());
  StatusOr<const OpSchema*> conv = OpRegistry::Global().Lookup("Conv");
  ASSERT_TRUE(conv.ok());
  const Tensor x = Filled(DType::kF32, Shape({1, 3, 9, 9}), 1), w = Filled(DType::kF32, Shape({4, 3, 3, 3}), 2);
  const Tensor b = Filled(DType::kF32, Shape({4}), 3);
  std::shared_ptr<const SettledCall> call = Dispatcher::Global().Settle(**conv, {x, w, b}, ConvAttrs(), {.device = *cpu});
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->Matches({Filled(DType::kF32, Shape({1, 3, 9, 9}), 7), w, b})) << "other values, same shapes";
  EXPECT_FALSE(call->Matches({Filled(DType::kF32, Shape({1, 3, 10, 10}), 1), w, b}));
  EXPECT_FALSE(call->Matches({Filled(DType::kF64, Shape({1, 3, 9, 9}), 1), w, b}));
  EXPECT_FALSE(call->Matches({x, w, Tensor()})) << "an input left out";
  EXPECT_FALSE(call->Matches({x, w}));
}

// A constant's values are a shape that cannot change (the executor freezes
// every constant): the call settles, for that constant only.
TEST(SettledCall, SettlesOnAFrozenShapeAndMatchesThatConstantOnly) {
  StatusOr<Device*> cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok());
  StatusOr<const OpSchema*> expand = OpRegistry::Global().Lookup("Expand");
  ASSERT_TRUE(expand.ok());
  auto shape_of = [](int64_t rows) {
    StatusOr<Tensor> t = Tensor::Empty(DType::kI64, Shape({2}));
    EXPECT_TRUE(t.ok());
    t->data<int64_t>()[0] = rows, t->data<int64_t>()[1] = 4;
    return *t;
  };
  const Tensor shape = shape_of(3), same_values = shape_of(3);
  FreezeBuffer(shape.buffer());
  FreezeBuffer(same_values.buffer());
  const Tensor x = Filled(DType::kF32, Shape({1, 4}), 1);
  std::shared_ptr<const SettledCall> call = Dispatcher::Global().Settle(**expand, {x, shape}, {}, {.device = *cpu});
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->outputs.size(), 1u);
  EXPECT_EQ(call->outputs[0].shape, Shape({3, 4}));
  EXPECT_TRUE(call->Matches({Filled(DType::kF32, Shape({1, 4}), 5), shape}));
  EXPECT_FALSE(call->Matches({x, same_values})) << "another buffer is another constant, whatever it holds now";
  StatusOr<OpRun> ran = Dispatcher::Global().RunSettled(*call, {x, shape}, {.device = *cpu});
  StatusOr<OpRun> reference = Dispatcher::Global().Run(**expand, {x, shape}, {}, {.device = *cpu});
  ASSERT_TRUE(ran.ok() && reference.ok());
  EXPECT_TRUE(SameBits(ran->outputs[0], reference->outputs[0]));
}

TEST(SettledCall, IsNotSettledWhereTheChecksCouldComeOutOtherwise) {
  StatusOr<Device*> cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok());
  // Expand's shape is an input's values, read on the host at each call.
  StatusOr<const OpSchema*> expand = OpRegistry::Global().Lookup("Expand");
  ASSERT_TRUE(expand.ok());
  ASSERT_TRUE((*expand)->attr_inputs.empty());
  StatusOr<Tensor> shape = Tensor::Empty(DType::kI64, Shape({2}));
  ASSERT_TRUE(shape.ok());
  shape->data<int64_t>()[0] = 2, shape->data<int64_t>()[1] = 4;
  const Tensor x = Filled(DType::kF32, Shape({1, 4}), 1);
  ASSERT_TRUE(Dispatcher::Global().Run(**expand, {x, *shape}, {}, {.device = *cpu}).ok());
  EXPECT_EQ(Dispatcher::Global().Settle(**expand, {x, *shape}, {}, {.device = *cpu}), nullptr)
      << "a shape nothing keeps from changing";
  // Reshape-1's shape attribute becomes that input at each call.
  StatusOr<const OpSchema*> reshape = OpRegistry::Global().Lookup("Reshape");
  ASSERT_TRUE(reshape.ok());
  Attrs old_form;
  old_form.Set("shape", std::vector<int64_t>{4, 1});
  EXPECT_EQ(Dispatcher::Global().Settle(**reshape, {x}, old_form, {.device = *cpu}), nullptr);
  // A refused call is not settled: Run says why, and tells the hooks.
  StatusOr<const OpSchema*> conv = OpRegistry::Global().Lookup("Conv");
  ASSERT_TRUE(conv.ok());
  Attrs bad = ConvAttrs();
  bad.Set("padz", std::vector<int64_t>{1});
  const std::vector<Tensor> in = {Filled(DType::kF32, Shape({1, 3, 9, 9}), 1), Filled(DType::kF32, Shape({4, 3, 3, 3}), 2)};
  EXPECT_EQ(Dispatcher::Global().Settle(**conv, in, bad, {.device = *cpu}), nullptr);
  auto hook = std::make_shared<Counting>();
  const int id = Dispatcher::Global().AddHook(hook);
  StatusOr<OpRun> refused = Dispatcher::Global().Run(**conv, in, bad, {.device = *cpu});
  Dispatcher::Global().RemoveHook(id);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("padz"), std::string::npos) << refused.status().ToString();
  EXPECT_EQ(hook->rejected, 1);
}

}  // namespace
}  // namespace opscope
