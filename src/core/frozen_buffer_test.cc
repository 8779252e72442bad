#include "core/frozen_buffer.h"

#include <gtest/gtest.h>

#include <vector>

namespace opscope {
namespace {

Tensor Floats(int64_t n) {
  auto t = Tensor::Zeros(DType::kF32, Shape({n}));
  EXPECT_TRUE(t.ok());
  return *t;
}

TEST(FrozenBuffer, DerivedDataIsMadeOnceForAFrozenBufferAndNeverForOthers) {
  Tensor w = Floats(64);
  int made = 0;
  auto make = [&] {
    ++made;
    return std::static_pointer_cast<const void>(std::make_shared<int>(made));
  };
  EXPECT_FALSE(IsFrozen(w));
  EXPECT_EQ(FrozenDerived(w, "panels", make), nullptr);
  EXPECT_EQ(made, 0);  // not frozen: nothing made, nothing kept

  FreezeBuffer(w.buffer());
  EXPECT_TRUE(IsFrozen(w));
  const auto first = FrozenDerived(w, "panels", make);
  const auto again = FrozenDerived(w, "panels", make);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, again);
  EXPECT_EQ(made, 1);
  FreezeBuffer(w.buffer());  // frozen again (every iteration of a run): what was kept stays
  EXPECT_EQ(FrozenDerived(w, "panels", make), first);

  // Another key, and other views of the same buffer (the same shape at two
  // offsets), are made apart.
  EXPECT_NE(FrozenDerived(w, "other", make), first);
  auto head = w.Slice(0, 0, 32), tail = w.Slice(0, 32, 64);
  ASSERT_TRUE(head.ok() && tail.ok());
  EXPECT_TRUE(IsFrozen(*tail));
  const auto from_head = FrozenDerived(*head, "panels", make), from_tail = FrozenDerived(*tail, "panels", make);
  EXPECT_NE(from_head, first);
  EXPECT_NE(from_tail, from_head);
  EXPECT_EQ(made, 4);
}

TEST(FrozenBuffer, ADeadBuffersDerivedDataIsReleased) {
  std::weak_ptr<const void> kept;
  const size_t before = FrozenBufferCount();
  {
    Tensor w = Floats(16);
    FreezeBuffer(w.buffer());
    EXPECT_EQ(FrozenBufferCount(), before + 1);
    kept = FrozenDerived(w, "panels", [] { return std::static_pointer_cast<const void>(std::make_shared<int>(7)); });
    EXPECT_FALSE(kept.expired());
  }
  EXPECT_EQ(FrozenBufferCount(), before);
  // The registry is swept as it doubles: freezing enough new buffers drops the dead one's entry.
  std::vector<Tensor> live;
  for (int i = 0; i < 200 && !kept.expired(); ++i) {
    live.push_back(Floats(4));
    FreezeBuffer(live.back().buffer());
  }
  EXPECT_TRUE(kept.expired());
}

}  // namespace
}  // namespace opscope
