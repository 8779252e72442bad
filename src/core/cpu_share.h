// File: core/cpu_share.h
// How much of the machine other processes took while we measured: the CPU
// time every core spent busy (/proc/stat) less this process's own
// (/proc/self/stat), over all the cores' time. Two runs of the same model
// timed while a build ran beside one of them differ by the build, not by
// the model; a diff that knows the share says "cannot judge" instead of
// calling a regression.
//
// Both files count 10 ms ticks, so a window of fewer than kMinTicksPerCore
// ticks a core has no share: a 10 ms run beside a busy loop on every core
// read 0.0 and 0.2. /proc/pressure/cpu is exact to the microsecond, but its
// "some task waited" counts our own threads waiting for each other: 30-60%
// of a quiet run of a small model on 2 cores.
//
//   CpuSample before = SampleCpu();
//   ... timed work ...
//   double others = OtherCpuShare(before, SampleCpu());  // 0.47: others took 47% of all cores; -1: too short to tell
#pragma once

#include <cstdint>

namespace opscope {

// Below this many ticks a core the ticks' rounding (one a counter at each
// end) is more than a tenth of the share.
inline constexpr uint64_t kMinTicksPerCore = 25;

struct CpuSample {
  uint64_t total = 0, busy = 0;  // all cores, in clock ticks
  uint64_t self = 0;             // this process's user + system ticks
  uint64_t cores = 0;            // the "cpuN" lines of /proc/stat
  bool ok = false;               // /proc/stat and /proc/self/stat could be read
};

CpuSample SampleCpu();

// Others' busy ticks over all ticks between the two samples, in [0, 1];
// -1 when either sample failed or fewer than kMinTicksPerCore ticks a core passed.
double OtherCpuShare(const CpuSample& before, const CpuSample& after);

}  // namespace opscope
