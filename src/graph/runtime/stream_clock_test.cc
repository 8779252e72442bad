// The streams' clocks against the host's, from two anchors each: a clock
// read inside the host's brackets is the host's (offset 0, times kept as
// read), one on another epoch is moved by the brackets' midpoints, and a
// drifting one is interpolated between them. Figures written out by hand.
#include "graph/runtime/stream_clock.h"

#include <gtest/gtest.h>

namespace opscope::graph {
namespace {

TEST(StreamClock, AClockInsideTheHostBracketsIsTheHostsAndIsNotMoved) {
  // The event read 9 us into a 10 us bracket: the midpoint would say +4 us.
  const std::vector<ClockAnchor> begin = {{.stream_id = 0, .host_before_ns = 1'000'000, .host_after_ns = 1'010'000, .device_ns = 1'009'000}};
  const std::vector<ClockAnchor> end = {{.stream_id = 0, .host_before_ns = 2'000'000, .host_after_ns = 2'002'000, .device_ns = 2'000'500}};
  auto clocks = ComputeStreamClocks(begin, end);
  ASSERT_TRUE(clocks.ok());
  ASSERT_EQ(clocks->size(), 1u);
  EXPECT_EQ((*clocks)[0].begin_offset_ns, 0);
  EXPECT_EQ((*clocks)[0].end_offset_ns, 0);
  EXPECT_EQ((*clocks)[0].ToCommonNs(1'500'000), 1'500'000);
  EXPECT_EQ((*clocks)[0].uncertainty_ns, 5'000);
}

TEST(StreamClock, AClockOnAnotherEpochIsMovedByTheMidpointsAndItsDriftInterpolated) {
  // The device reads 1 s ahead at the first anchor and 1 s + 2 us at the second.
  const std::vector<ClockAnchor> begin = {{.stream_id = 3, .host_before_ns = 1'000'000, .host_after_ns = 1'010'000,
                                           .device_ns = 1'000'005'000 + 1'000'000}};
  const std::vector<ClockAnchor> end = {{.stream_id = 3, .host_before_ns = 2'000'000, .host_after_ns = 2'002'000,
                                         .device_ns = 2'001'000 + 1'000'002'000}};
  auto clocks = ComputeStreamClocks(begin, end);
  ASSERT_TRUE(clocks.ok());
  const StreamClock& c = (*clocks)[0];
  EXPECT_EQ(c.begin_offset_ns, 1'000'000'000);
  EXPECT_EQ(c.end_offset_ns, 1'000'002'000);
  // Halfway between the anchors on the device's clock: half the drift.
  const int64_t mid = (c.begin_device_ns + c.end_device_ns) / 2;
  EXPECT_DOUBLE_EQ(c.ToCommonNs(mid), static_cast<double>(mid) - 1'000'001'000);
  EXPECT_FALSE(ComputeStreamClocks(begin, {}).ok());  // a stream without its end anchor
}

}  // namespace
}  // namespace opscope::graph
