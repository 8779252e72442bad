#include "analysis/harness/kernel_watchdog.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace opscope {

KernelWatchdog::KernelWatchdog(double timeout_s) : timeout_s_(timeout_s) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { Watch(); });
}

KernelWatchdog::~KernelWatchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void KernelWatchdog::Arm(std::string stop_line) {
  if (timeout_s_ <= 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
    ++generation_;
    line_ = std::move(stop_line);
  }
  cv_.notify_all();
}

void KernelWatchdog::Disarm() {
  if (timeout_s_ <= 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
    ++generation_;
  }
  cv_.notify_all();
}

void KernelWatchdog::Watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!done_) {
    if (!armed_) {
      cv_.wait(lock, [&] { return done_ || armed_; });
      continue;
    }
    const unsigned long armed_at = generation_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    if (cv_.wait_until(lock, deadline, [&] { return done_ || generation_ != armed_at; })) continue;
    const std::string text = line_ + "\n";
    ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
    (void)ignored;
    std::_Exit(1);
  }
}

std::string SecondsText(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

}  // namespace opscope
