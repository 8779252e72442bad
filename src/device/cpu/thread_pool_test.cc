#include "device/cpu/thread_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace opscope {
namespace {

TEST(ThreadPool, RunsEveryBlockOnceWithDistinctWorkersPerLaunch) {
  ThreadPool pool(3);
  constexpr int64_t n = 1000;
  std::vector<std::atomic<int>> hits(n);
  std::vector<std::atomic<int>> per_worker(pool.size() + 1);
  pool.Run(n, [&](int64_t i, int worker) {
    hits[i].fetch_add(1);
    ASSERT_GE(worker, 0);
    ASSERT_LE(worker, pool.size());
    per_worker[worker].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "block " << i;
  int total = 0;
  for (auto& w : per_worker) total += w.load();
  EXPECT_EQ(total, n);
}

TEST(ThreadPool, SpreadsSleepingBlocksOverThreads) {
  // 4 blocks of 100 ms on 3 pool threads + the caller: a pool thread has 300
  // ms to wake and take one before the caller has run them all (20 ms blocks
  // left 60, little on a loaded machine whose ctest runs two tests at once).
  ThreadPool pool(3);
  auto start = std::chrono::steady_clock::now();
  std::set<std::thread::id> threads;
  std::mutex mu;
  pool.Run(4, [&](int64_t, int) {
    {
      std::lock_guard<std::mutex> lock(mu);
      threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  EXPECT_GE(threads.size(), 2u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
}

// Launches back to back, as a model's kernels come: the pool thread, polling
// after each (kPoolSpinAfterWork), joins the next without being woken. The
// launcher's block waits for the pool thread to take the other, so every
// launch has it in; the launches come microseconds apart, far inside the
// 100 us it polls, so a wake-up instead happens only where the machine takes
// a core away that long (ctest runs two tests at once). The launches go on
// until 20 were joined so, or 20000 passed: however loaded the machine, some
// are, and without the polling none is (broken on purpose: 0 of 20000).
// Under `taskset -c 0` the two threads share one core and the pool thread,
// unbound, yields between polls: 20 were joined at once (without the yield,
// 1 in 20000).
TEST(ThreadPool, APoolThreadJustOutOfALaunchJoinsTheNextWithoutAWakeUp) {
  ThreadPool pool(1);
  for (int r = 0; r < 20000 && pool.joined_polling() < 20; ++r) {
    std::atomic<bool> helper_in{false};
    pool.Run(2, [&](int64_t, int worker) {
      if (worker == 0) {
        helper_in = true;
      } else {
        while (!helper_in.load()) std::this_thread::yield();
      }
    });
  }
  EXPECT_GE(pool.joined_polling(), 20);
}

TEST(ThreadPool, TwoLaunchersAtOnceBothFinish) {
  // Each launcher runs its own blocks too, so neither can starve the other,
  // even on a pool with a single thread.
  ThreadPool pool(1);
  std::atomic<int64_t> sum{0};
  auto launch = [&] {
    for (int r = 0; r < 200; ++r) pool.Run(17, [&](int64_t i, int) { sum.fetch_add(i); });
  };
  std::thread a(launch), b(launch);
  a.join();
  b.join();
  EXPECT_EQ(sum.load(), 2 * 200 * (16 * 17 / 2));
}

TEST(ThreadPool, APoolThreadStartsNoBlockWhileTwoLaunchersFillTheBudget) {
  // A pool of one thread: a budget of two threads running blocks. Each of two
  // launchers holds its first block until both are in one and then for 20 ms
  // more; meanwhile the pool thread may finish the block it is in, but start
  // no other (without the budget it ran one 1-ms block after another).
  ThreadPool pool(1);
  using Clock = std::chrono::steady_clock;
  std::mutex mu;
  std::condition_variable both_in;
  int launchers_in = 0;
  Clock::time_point held_from, held_to;
  std::vector<Clock::time_point> helper_starts;
  auto body = [&](int64_t, int worker) {
    thread_local bool first = true;
    if (worker == pool.size() && first) {  // a launcher's first block
      first = false;
      std::unique_lock<std::mutex> lock(mu);
      if (++launchers_in == 2) {
        held_from = Clock::now();
        both_in.notify_all();
      }
      // Bounded: should the pool thread have taken every block of the other
      // launch first, that launcher never holds one, and the test must fail, not hang.
      EXPECT_TRUE(both_in.wait_for(lock, std::chrono::seconds(5), [&] { return launchers_in == 2; }));
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      lock.lock();
      held_to = std::max(held_to, Clock::now());
      return;
    }
    if (worker != pool.size()) {
      std::lock_guard<std::mutex> lock(mu);
      helper_starts.push_back(Clock::now());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  // 60 blocks each: a launcher kept off a core before its first block while
  // the pool thread ran every 1-ms block of its launch would never hold one
  // (with 12, a 12 ms preemption did it; ctest runs two tests at once).
  std::thread a([&] { pool.Run(60, body); }), b([&] { pool.Run(60, body); });
  a.join();
  b.join();
  // The launchers' first blocks can end up to a thread switch apart: the hold
  // is counted until the first of them ends at the earliest, 20 ms after both were in.
  const Clock::time_point until = held_from + std::chrono::milliseconds(20);
  int during = 0;
  for (Clock::time_point t : helper_starts) during += t > held_from && t < until;
  EXPECT_LE(during, 1) << "blocks the pool thread started while both launchers ran";
  EXPECT_GE(held_to, until);
}

// The set of CPUs the calling thread may run on.
std::vector<int> ThreadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

TEST(ThreadPool, APoolThreadRunsBoundToItsCpuAndTheLauncherIsNot) {
  // The one CPU the process may surely use, twice: the spare and the
  // helper's, so the test holds on any number of cores.
  const int cpu = AllowedCpus().at(0);
  ThreadPool pool(1, {cpu, cpu});
  EXPECT_EQ(pool.HelperCpu(0), cpu);
  const std::vector<int> launcher_before = ThreadCpus();
  std::mutex mu;
  std::vector<std::vector<int>> helper_sets;
  // The helper joins only if it wakes while blocks are left: sleeping blocks
  // leave it time, and a few launches make it sure.
  for (int tries = 0; tries < 20 && helper_sets.empty(); ++tries) {
    pool.Run(4, [&](int64_t, int worker) {
      if (worker == 0) {
        std::lock_guard<std::mutex> lock(mu);
        helper_sets.push_back(ThreadCpus());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
  }
  ASSERT_FALSE(helper_sets.empty()) << "the pool thread never ran a block";
  for (const std::vector<int>& set : helper_sets) EXPECT_EQ(set, std::vector<int>{cpu});
  EXPECT_EQ(ThreadCpus(), launcher_before) << "the launcher's own affinity changed";
}

TEST(ThreadPool, BindingIsOffWithOpscopeCpuBindZeroAndWithTooFewCpus) {
  ASSERT_EQ(setenv("OPSCOPE_CPU_BIND", "0", 1), 0);
  EXPECT_TRUE(ThreadPool::BindableCpus().empty());
  ASSERT_EQ(unsetenv("OPSCOPE_CPU_BIND"), 0);
  EXPECT_EQ(ThreadPool::BindableCpus(), AllowedCpus());
  ThreadPool pool(2, {AllowedCpus().at(0), AllowedCpus().at(0)});  // 2 helpers, 2 CPUs: none bound
  EXPECT_EQ(pool.HelperCpu(0), -1);
  EXPECT_EQ(pool.HelperCpu(1), -1);
}

TEST(ThreadPool, EmptyPoolRunsOnTheCaller) {
  ThreadPool pool(0);
  std::vector<int> order;
  pool.Run(5, [&](int64_t i, int worker) {
    EXPECT_EQ(worker, 0);
    order.push_back(static_cast<int>(i));
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace opscope
