#include "device/cpu/helper_cpus.h"

#include <sched.h>

#include <algorithm>

namespace opscope {

HelperCpus::HelperCpus(std::vector<int> cpus, int helpers) {
  if (helpers <= 0 || static_cast<int>(cpus.size()) < helpers + 1) return;
  active_ = true;
  spare_ = cpus[0];
  helper_cpu_.assign(cpus.begin() + 1, cpus.begin() + 1 + helpers);
}

int HelperCpus::MakeRoomFor(int cpu) {
  if (!active_ || cpu == spare_) return -1;
  auto it = std::find(helper_cpu_.begin(), helper_cpu_.end(), cpu);
  if (it == helper_cpu_.end()) return -1;  // a CPU no helper uses (or one outside the set)
  *it = spare_;
  spare_ = cpu;
  return static_cast<int>(it - helper_cpu_.begin());
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace opscope
