// File: analysis/harness/kernel_watchdog.h
// `ops-debug run --timeout`: a kernel that has not returned when the time is
// up cannot be cancelled (its threads are the device's), so the process is
// stopped with one line saying which kernel and how to learn why:
//   ops-debug: kernel mantissa_cpu (op mantissa on cpu) did not finish within 2 s: stopped.
//   Why: ops-debug diagnose --plugin ... --op mantissa ...
// The line goes straight to stderr (write(2)) and the process ends with
// _Exit(1): nothing of a run half done is written.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace opscope {

class KernelWatchdog {
 public:
  // timeout_s <= 0: no watch at all.
  explicit KernelWatchdog(double timeout_s);
  ~KernelWatchdog();
  KernelWatchdog(const KernelWatchdog&) = delete;
  KernelWatchdog& operator=(const KernelWatchdog&) = delete;

  // The clock starts for the launch `stop_line` describes, and stops at Disarm.
  void Arm(std::string stop_line);
  void Disarm();

 private:
  void Watch();

  double timeout_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, done_ = false;
  unsigned long generation_ = 0;
  std::string line_;
  std::thread thread_;
};

// "1 s", "2.5 s", "60 s".
std::string SecondsText(double s);

}  // namespace opscope
