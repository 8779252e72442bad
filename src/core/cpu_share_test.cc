#include "core/cpu_share.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace opscope {
namespace {

CpuSample Ticks(uint64_t total, uint64_t busy, uint64_t self, uint64_t cores) {
  CpuSample s;
  s.total = total, s.busy = busy, s.self = self, s.cores = cores, s.ok = true;
  return s;
}

// Others' busy ticks over all ticks, once a window holds enough ticks a core
// for the rounding at its two ends not to decide the figure.
TEST(CpuShare, OthersShareIsTheirBusyTicksOverAllOnceTheWindowIsLongEnough) {
  const CpuSample before = Ticks(1000, 400, 100, 2);
  // 50 ticks on 2 cores: 20 busy, 5 of them ours.
  EXPECT_DOUBLE_EQ(OtherCpuShare(before, Ticks(1050, 420, 105, 2)), 0.3);
  // Ours above the busy ticks (they are sampled apart): none, not below zero.
  EXPECT_DOUBLE_EQ(OtherCpuShare(before, Ticks(1050, 410, 130, 2)), 0.0);
  // 49 ticks on 2 cores, 24 on 1: too short to tell.
  EXPECT_EQ(OtherCpuShare(before, Ticks(1049, 449, 100, 2)), -1);
  EXPECT_DOUBLE_EQ(OtherCpuShare(Ticks(0, 0, 0, 1), Ticks(25, 25, 0, 1)), 1.0);
  EXPECT_EQ(OtherCpuShare(Ticks(0, 0, 0, 1), Ticks(24, 24, 0, 1)), -1);
  // A sample that could not read /proc.
  EXPECT_EQ(OtherCpuShare(CpuSample{}, Ticks(1050, 420, 105, 2)), -1);
  EXPECT_EQ(OtherCpuShare(before, before), -1);
}

// This machine's /proc: the cores are counted, and a window of a few
// microseconds is too short to give a share on any machine.
TEST(CpuShare, ARealSampleCountsTheCoresAndAShortWindowHasNoShare) {
  const CpuSample a = SampleCpu();
  ASSERT_TRUE(a.ok);
  EXPECT_GE(a.cores, 1u);
  EXPECT_LE(a.cores, static_cast<uint64_t>(sysconf(_SC_NPROCESSORS_CONF)));
  EXPECT_GE(a.busy, a.self);
  EXPECT_EQ(OtherCpuShare(a, SampleCpu()), -1);
}

}  // namespace
}  // namespace opscope
