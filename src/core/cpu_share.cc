#include "core/cpu_share.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace opscope {
namespace {

// The first line's sums over every core, and the number of cores.
bool ReadProcStat(CpuSample& s) {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu") return false;
  s.busy = user + nice + system + irq + softirq + steal;
  s.total = s.busy + idle + iowait;
  std::string line;
  while (std::getline(stat, line)) {
    if (line.rfind("cpu", 0) == 0 && line.size() > 3 && line[3] >= '0' && line[3] <= '9') ++s.cores;
  }
  return s.cores > 0;
}

// This process's user + system ticks. /proc/self/stat: the command may hold
// spaces, so fields count from its closing parenthesis.
bool ReadSelfTicks(CpuSample& s) {
  std::ifstream self("/proc/self/stat");
  std::string line;
  std::getline(self, line);
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 > line.size()) return false;
  std::istringstream rest(line.substr(paren + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  // After ")": state is field 3; utime and stime are fields 14 and 15.
  int k = 3;
  for (; k <= 15 && rest >> field; ++k) {
    if (k == 14) utime = std::stoull(field);
    if (k == 15) stime = std::stoull(field);
  }
  s.self = utime + stime;
  return k == 16;
}

}  // namespace

CpuSample SampleCpu() {
  CpuSample s;
  s.ok = ReadProcStat(s) && ReadSelfTicks(s);
  return s;
}

double OtherCpuShare(const CpuSample& before, const CpuSample& after) {
  if (!before.ok || !after.ok || after.total <= before.total) return -1;
  const uint64_t ticks = after.total - before.total;
  if (ticks < kMinTicksPerCore * std::max<uint64_t>(1, after.cores)) return -1;
  const double busy = static_cast<double>(after.busy - before.busy);
  const double self = static_cast<double>(after.self - before.self);
  return std::clamp((busy - self) / static_cast<double>(ticks), 0.0, 1.0);
}

}  // namespace opscope
