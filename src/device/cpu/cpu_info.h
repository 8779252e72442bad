// File: device/cpu/cpu_info.h
// What the host cpu is, for DeviceInfo.
#pragma once

#include <cstdint>
#include <string>

namespace opscope {

std::string CpuModelName();  // /proc/cpuinfo "model name" (or "unknown cpu")
int HardwareThreads();       // at least 1
int64_t PhysicalMemoryBytes();
int64_t LastLevelCacheBytes();  // L3 (else L2) as sysconf reports it; 32 MiB when unknown

}  // namespace opscope
