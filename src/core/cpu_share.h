// File: core/cpu_share.h
// How much of the machine other processes took while we measured: the CPU
// time every core spent busy (/proc/stat) less this process's own
// (/proc/self/stat), over all the cores' time. Two runs of the same model
// timed while a build ran beside one of them differ by the build, not by
// the model; a diff that knows the share says "cannot judge" instead of
// calling a regression.
//
//   CpuSample before = SampleCpu();
//   ... timed work ...
//   double others = OtherCpuShare(before, SampleCpu());  // 0.47: others took 47% of all cores
#pragma once

#include <cstdint>

namespace opscope {

struct CpuSample {
  uint64_t total = 0, busy = 0;  // all cores, in clock ticks
  uint64_t self = 0;             // this process's user + system ticks
  bool ok = false;               // /proc could be read
};

CpuSample SampleCpu();

// Others' busy ticks over all ticks between the two samples, in [0, 1];
// -1 when either sample failed or no tick passed.
double OtherCpuShare(const CpuSample& before, const CpuSample& after);

}  // namespace opscope
