#include "core/cpu_share.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace opscope {

CpuSample SampleCpu() {
  CpuSample s;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu") return s;
  s.busy = user + nice + system + irq + softirq + steal;
  s.total = s.busy + idle + iowait;
  // /proc/self/stat: the command may hold spaces, so fields count from its closing parenthesis.
  std::ifstream self("/proc/self/stat");
  std::string line;
  std::getline(self, line);
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos) return s;
  std::istringstream rest(line.substr(paren + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  // After ")": state is field 3; utime and stime are fields 14 and 15.
  for (int k = 3; k <= 15 && rest >> field; ++k) {
    if (k == 14) utime = std::stoull(field);
    if (k == 15) stime = std::stoull(field);
  }
  s.self = utime + stime;
  s.ok = true;
  return s;
}

double OtherCpuShare(const CpuSample& before, const CpuSample& after) {
  if (!before.ok || !after.ok || after.total <= before.total) return -1;
  const double total = static_cast<double>(after.total - before.total);
  const double busy = static_cast<double>(after.busy - before.busy);
  const double self = static_cast<double>(after.self - before.self);
  return std::clamp((busy - self) / total, 0.0, 1.0);
}

}  // namespace opscope
