#include "device/cpu/cpu_info.h"

#include <unistd.h>

#include <fstream>
#include <thread>

namespace opscope {

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  // x86 says "model name"; some arm kernels only give "Hardware" or "CPU part".
  for (const char* key : {"model name", "Hardware"}) {
    in.clear();
    in.seekg(0);
    while (std::getline(in, line)) {
      if (line.rfind(key, 0) != 0) continue;
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      size_t start = line.find_first_not_of(" \t", colon + 1);
      if (start != std::string::npos) return line.substr(start);
    }
  }
  return "unknown cpu";
}

int HardwareThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int64_t PhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
}

}  // namespace opscope

namespace opscope {

int64_t LastLevelCacheBytes() {
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long v = sysconf(name);
    if (v > 0) return v;
  }
  return 32 << 20;  // unknown: assume a large one
}

}  // namespace opscope
