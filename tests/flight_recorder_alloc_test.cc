// "The hot path allocates nothing": the flight recorder's two records of a
// launch and its synchronisation records, counted by replacing the global
// operator new in this program (its own gtest binary, so no other test is
// touched). Tensor summaries are off: they run a kernel, which allocates its
// output like any launch.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "capture/dispatcher.h"
#include "capture/flight_recorder.h"
#include "opscope/device.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace opscope {
namespace {

TEST(FlightRecorderHotPath, RecordingALaunchAndItsEventsAllocatesNothing) {
  const std::string path = "/tmp/opscope_alloc_ring_" + std::to_string(getpid());
  auto rec = FlightRecorder::Open(path, {.slots = 8, .tensor_summaries = false});
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  auto x = Tensor::Empty(DType::kF32, Shape({64, 16}));
  auto y = Tensor::Empty(DType::kF32, Shape({64, 16}));
  ASSERT_TRUE(x.ok() && y.ok());
  std::vector<Tensor> inputs{*x}, outputs{*y};
  Attrs attrs;
  attrs.Set("alpha", 0.5);
  attrs.Set("axes", std::vector<int64_t>{0, 1});
  LaunchRecord l;
  l.op = *OpRegistry::Global().Lookup("LeakyRelu");
  l.device = *GetDevice("cpu");
  l.stream_id = 1;
  l.kernel = "leaky_relu_cpu";
  l.inputs = &inputs;
  l.outputs = &outputs;
  l.attrs = &attrs;
  l.fingerprints = {ComputeFingerprint(*x)};
  l.launches = {KernelLaunchInfo{.name = "leaky_relu_cpu", .config = {.grid = {4}, .block = {256}}}};
  int event = 0;
  // 20 launches: past the 8 slots, so the ring wraps too.
  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < 20; ++i) {
    l.seq = static_cast<uint64_t>(i);
    (*rec)->BeforeLaunch(l);
    (*rec)->AfterLaunch(l);
    (*rec)->OnRecord({"cpu", 1}, &event);
    (*rec)->OnWait({"cpu", 2}, &event);
    (*rec)->OnMemcpy({"cpu", 2}, y->raw_data(), x->raw_data(), 64, CopyKind::kDeviceToDevice);
    (*rec)->OnStreamSynchronize({"cpu", 1});
  }
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0);
  // And it did record: the ring reads back whole, the last 8 launches kept.
  rec->reset();
  auto ring = ReadFlightRing(path);
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  EXPECT_EQ(ring->launches.size(), 8u);
  EXPECT_EQ(ring->syncs.size(), 80u);
  EXPECT_STREQ(ring->launches.back().attrs, "alpha=0.5,axes=[0,1]");
  EXPECT_EQ(ring->launches.back().dispatch_seq, 19u);
  EXPECT_EQ(ring->launches.back().state, static_cast<int32_t>(FlightState::kFinished));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace opscope
