#include "device/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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
  // 4 blocks of 20 ms on 3 pool threads + the caller: far below 80 ms serial.
  ThreadPool pool(3);
  auto start = std::chrono::steady_clock::now();
  std::set<std::thread::id> threads;
  std::mutex mu;
  pool.Run(4, [&](int64_t, int) {
    {
      std::lock_guard<std::mutex> lock(mu);
      threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });
  EXPECT_GE(threads.size(), 2u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
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
