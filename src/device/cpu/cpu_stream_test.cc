// The cpu stream's contract with the dispatcher: work issued from inside a
// host function on the same stream runs at once; sticky errors; draining on
// destruction. (Cross-backend behaviour is in tests/device_conformance_test.cc.)
#include "device/cpu/cpu_stream.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "capture/dispatcher.h"
#include "device/cpu/cpu_device.h"
#include "device/cpu/cpu_event.h"

namespace opscope {
namespace {

KernelLaunch Fill(std::vector<int>* v, int value, int64_t blocks) {
  KernelLaunch k;
  k.name = "fill";
  k.config.grid = {blocks};
  k.config.block = {1};
  int64_t per = static_cast<int64_t>(v->size()) / blocks;
  k.host = [v, value, per](const BlockContext& b) {
    for (int64_t i = 0; i < per; ++i) (*v)[b.block_idx.x * per + i] = value;
  };
  return k;
}

TEST(CpuStream, LaunchInsideAHostFunctionRunsAtOnce) {
  auto pool = std::make_shared<ThreadPool>(2);
  CpuStream s(1, pool);
  std::vector<int> v(64, 0);
  std::atomic<bool> checked{false};
  ASSERT_TRUE(s.EnqueueHostFunction([&]() -> Status {
                 OPSCOPE_RETURN_IF_ERROR(s.Launch(Fill(&v, 7, 8)));
                 // Done already: no deadlock, no waiting for later queue items.
                 for (int x : v) if (x != 7) return InternalError("launch had not finished");
                 OPSCOPE_RETURN_IF_ERROR(s.Synchronize());
                 std::vector<int> copy(64, 0);
                 OPSCOPE_RETURN_IF_ERROR(s.Memcpy(copy.data(), v.data(), 64 * sizeof(int), CopyKind::kDeviceToDevice));
                 if (copy != v) return InternalError("memcpy had not finished");
                 checked = true;
                 return Status::Ok();
               }).ok());
  Status st = s.Synchronize();
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(checked.load());
}

// A host synchronizing on items the worker is running sleeps until the last
// of them completes, not after each: woken at every item, it polled on a
// core the worker and the pool's helper were using (cpu_stream.cc,
// RunFrontItem). Its voluntary context switches (sleeps) count the wake-ups.
TEST(CpuStream, ASynchronizingHostSleepsOnceNotOnceAnItem) {
  auto pool = std::make_shared<ThreadPool>(1);
  CpuStream s(1, pool);
  std::atomic<bool> started{false}, go{false};
  std::atomic<int> ran{0};
  // The worker holds the first item until the host is about to wait, so
  // every item runs on the worker and the host only waits.
  ASSERT_TRUE(s.EnqueueHostFunction([&]() -> Status {
                 started = true;
                 while (!go) std::this_thread::yield();
                 return Status::Ok();
               }).ok());
  constexpr int kItems = 60;
  for (int i = 0; i < kItems; ++i) {
    ASSERT_TRUE(s.EnqueueHostFunction([&]() -> Status {
                   std::this_thread::sleep_for(std::chrono::milliseconds(1));  // longer than the host's poll
                   ++ran;
                   return Status::Ok();
                 }).ok());
  }
  while (!started) std::this_thread::yield();
  go = true;
  rusage before{}, after{};
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &before), 0);
  ASSERT_TRUE(s.Synchronize().ok());
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &after), 0);
  EXPECT_EQ(ran.load(), kItems);
  // One sleep for the ticket, a few for the stream's lock at most; once an
  // item was 60 or more.
  EXPECT_LT(after.ru_nvcsw - before.ru_nvcsw, 10) << "the host slept and woke " << after.ru_nvcsw - before.ru_nvcsw
                                                  << " times waiting for " << kItems << " items";
}

TEST(CpuStream, BadLaunchesAreRefusedAtOnce) {
  auto pool = std::make_shared<ThreadPool>(1);
  CpuStream s(1, pool);
  KernelLaunch no_body{.name = "nobody", .config = {.grid = {1}, .block = {1}}};
  Status st = s.Launch(no_body);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("nobody"), std::string::npos) << st.message();
  std::vector<int> v(4);
  KernelLaunch zero = Fill(&v, 1, 1);
  zero.config.grid = {0};
  EXPECT_EQ(s.Launch(zero).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(s.Synchronize().ok()) << "refused launches leave no sticky error";
}

TEST(CpuStream, DestructionDrainsTheQueue) {
  auto pool = std::make_shared<ThreadPool>(1);
  auto done = std::make_shared<std::atomic<int>>(0);
  {
    CpuStream s(1, pool);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(s.EnqueueHostFunction([done] {
                     std::this_thread::sleep_for(std::chrono::milliseconds(2));
                     done->fetch_add(1);
                     return Status::Ok();
                   }).ok());
    }
  }
  EXPECT_EQ(done->load(), 3);
}

TEST(CpuStream, EventFromAnotherDeviceKindIsRefused) {
  struct OtherEvent : Event {
    bool Query() override { return true; }
    Status DoSynchronize() override { return Status::Ok(); }
    StatusOr<int64_t> TimestampNs() override { return int64_t{0}; }
  } other;
  auto pool = std::make_shared<ThreadPool>(1);
  CpuStream s(1, pool);
  EXPECT_EQ(s.Record(other).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.Wait(other).code(), StatusCode::kInvalidArgument);
}

TEST(CpuDevice, DescribesTheHost) {
  CpuDevice dev(3);
  EXPECT_EQ(dev.info().name, "cpu");
  EXPECT_EQ(dev.info().compute_units, 3);
  EXPECT_NE(dev.info().description.find("3 threads"), std::string::npos) << dev.info().description;
  EXPECT_TRUE(dev.host_accessible());
  EXPECT_EQ(dev.default_stream().id(), 0);
  auto s1 = dev.CreateStream();
  auto s2 = dev.CreateStream();
  ASSERT_TRUE(s1.ok() && s2.ok());
  EXPECT_NE((*s1)->id(), (*s2)->id());
  EXPECT_NE((*s1)->id(), 0);
}

TEST(CpuDevice, FreeTakesBothKindsWhateverTheMode) {
  CpuDevice dev(2);
  auto plain = dev.Allocate(100);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*plain) % 64, 0u);
  ASSERT_TRUE(dev.SetCheckedAllocation(true).ok());
  auto checked = dev.Allocate(100);
  ASSERT_TRUE(checked.ok());
  EXPECT_EQ((reinterpret_cast<uintptr_t>(*checked) + 100) % 4096, 0u);
  ASSERT_TRUE(dev.SetCheckedAllocation(false).ok());
  dev.Free(*checked);
  dev.Free(*plain);
}

TEST(CpuDevice, SynchronizeReportsAStreamErrorOnce) {
  CpuDevice dev(2);
  auto s = dev.CreateStream();
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->EnqueueHostFunction([] { return InvalidArgumentError("bad shape"); }).ok());
  Status st = dev.Synchronize();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("bad shape"), std::string::npos) << st.ToString();
  EXPECT_TRUE(dev.Synchronize().ok());
  EXPECT_TRUE((*s)->Synchronize().ok());
}

TEST(CpuDevice, DispatcherRunsOpsOnTwoStreamsAsynchronously) {
  // The dispatcher queues each op's whole kernel on the stream; with
  // synchronize=false both ops are in flight and the events time them.
  auto dev = GetDevice("cpu");
  ASSERT_TRUE(dev.ok());
  auto a = (*dev)->CreateStream();
  auto b = (*dev)->CreateStream();
  ASSERT_TRUE(a.ok() && b.ok());
  auto x = Tensor::Empty(DType::kF32, Shape({100000}));
  ASSERT_TRUE(x.ok());
  for (int64_t i = 0; i < x->numel(); ++i) x->data<float>()[i] = static_cast<float>(i % 7) - 3;
  RunOptions oa{.device = *dev, .stream = a->get(), .synchronize = false};
  RunOptions ob{.device = *dev, .stream = b->get(), .synchronize = false};
  auto ra = Dispatcher::Global().Run("Relu", {*x}, {}, oa);
  auto rb = Dispatcher::Global().Run("Relu", {*x}, {}, ob);
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();
  ASSERT_TRUE((*dev)->Synchronize().ok());
  for (const OpRun* r : {&*ra, &*rb}) {
    const Tensor& y = r->outputs[0];
    for (int64_t i = 0; i < y.numel(); ++i) {
      float want = std::max(0.0f, static_cast<float>(i % 7) - 3);
      ASSERT_EQ(y.data<float>()[i], want) << "at " << i;
    }
    auto us = r->end->ElapsedUsSince(*r->start);
    ASSERT_TRUE(us.ok()) << us.status().ToString();
    EXPECT_GE(*us, 0.0);
  }
}

}  // namespace
}  // namespace opscope
