// File: device/cpu/helper_cpus.h
// Which CPU each pool thread is bound to, and the one left to launchers.
//
// Left to the kernel, a pool thread woken by its launcher is often put on the
// launcher's own CPU while another CPU idles: on a busy last-level cache
// (SIS_UTIL) the wake-up does not look for an idle CPU, and the load balancer
// leaves the two threads, both cache-hot, sharing one CPU for milliseconds.
// With two streams on 2 cores that made a third of resnet18's convolutions
// take 1.7x their time (docs/speed.md, "Streams on two cores"). So each pool
// thread is bound to a CPU of its own, and one CPU is kept for the launcher.
// A launcher found on a helper's CPU (streams hand the work to one another,
// and launchers are never bound) swaps it with the spare: one
// sched_setaffinity of the helper, only when the launcher moved.
//
//   HelperCpus cpus({0, 1, 2, 3}, 3);  // helpers on 1, 2, 3; 0 is spare
//   int h = cpus.MakeRoomFor(2);       // h == 1: helper 1 moves to CPU 0
#pragma once

#include <vector>

namespace opscope {

class HelperCpus {
 public:
  // `cpus`: the CPUs the process may use, in order. Binding is on only when
  // there is one for every helper and one more for a launcher.
  HelperCpus(std::vector<int> cpus, int helpers);

  bool active() const { return active_; }
  int cpu_of(int helper) const { return helper_cpu_[helper]; }
  int spare() const { return spare_; }

  // A launcher runs on `cpu`. If a helper is bound there, it takes the spare
  // CPU and `cpu` becomes the spare: returns that helper (to rebind), else -1.
  int MakeRoomFor(int cpu);

 private:
  bool active_ = false;
  std::vector<int> helper_cpu_;
  int spare_ = -1;
};

// The CPUs this process may run on (sched_getaffinity), in increasing order;
// empty if the call fails.
std::vector<int> AllowedCpus();

}  // namespace opscope
