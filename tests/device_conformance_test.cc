// One suite every device backend must pass, run against each name in
// RegisteredDeviceNames(). A backend that is built but has no device here
// (cuda without a GPU) is skipped with the reason; nothing else is skipped.
// Kernels are sleeping, not spinning, so the timing checks hold on a loaded
// 2-core machine.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device/stream_observer.h"
#include "opscope/device.h"
#ifdef OPSCOPE_HAVE_CUDA
#include "conformance_kernels_ptx.h"
#endif

namespace opscope {
namespace {

using std::chrono::milliseconds;

bool IsCuda(Device* dev) { return dev->name().rfind("cuda", 0) == 0; }

// The two kernels the suite needs, for each backend: x = x * a + b over n
// floats (several blocks), and one block that sleeps.
class TestKernels {
 public:
  explicit TestKernels(Device* dev) : dev_(dev) {}

  Status Affine(Stream& s, float* x, int n, float a, float b) {
    constexpr int kBlock = 64;
    KernelLaunch k;
    k.name = "test_affine";
    k.config.grid = {(n + kBlock - 1) / kBlock};
    k.config.block = {kBlock};
    if (dev_->host_accessible()) {
      k.host = [x, n, a, b](const BlockContext& blk) {
        int64_t begin = blk.block_idx.x * kBlock;
        for (int64_t i = begin; i < std::min<int64_t>(n, begin + kBlock); ++i) x[i] = x[i] * a + b;
      };
      return s.Launch(k);
    }
#ifdef OPSCOPE_HAVE_CUDA
    if (IsCuda(dev_)) {
      OPSCOPE_ASSIGN_OR_RETURN(k.device.function, dev_->LoadKernel("ptx", kTestKernelsPtx, "opscope_test_affine"));
      unsigned un = static_cast<unsigned>(n);
      void* args[] = {&x, &un, &a, &b};  // copied by the launch
      k.device.args = args;
      return s.Launch(k);
    }
#endif
    return UnimplementedError("the conformance suite has no test kernels for device " + dev_->name());
  }

  Status Sleep(Stream& s, milliseconds ms) {
    KernelLaunch k;
    k.name = "test_sleep";
    k.config.grid = {1};
    k.config.block = {1};
    if (dev_->host_accessible()) {
      k.host = [ms](const BlockContext&) { std::this_thread::sleep_for(ms); };
      return s.Launch(k);
    }
#ifdef OPSCOPE_HAVE_CUDA
    if (IsCuda(dev_)) {
      OPSCOPE_ASSIGN_OR_RETURN(k.device.function, dev_->LoadKernel("ptx", kTestKernelsPtx, "opscope_test_sleep"));
      uint64_t ns = static_cast<uint64_t>(std::chrono::nanoseconds(ms).count());
      void* args[] = {&ns};
      k.device.args = args;
      return s.Launch(k);
    }
#endif
    return UnimplementedError("the conformance suite has no test kernels for device " + dev_->name());
  }

 private:
  Device* dev_;
};

// Device memory freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer(Device* dev, size_t bytes) : dev_(dev) {
    auto p = dev->Allocate(bytes);
    status_ = p.status();
    if (p.ok()) ptr_ = *p;
  }
  ~DeviceBuffer() { if (ptr_) dev_->Free(ptr_); }
  const Status& status() const { return status_; }
  float* f() const { return static_cast<float*>(ptr_); }

 private:
  Device* dev_;
  void* ptr_ = nullptr;
  Status status_;
};

#define ASSERT_OK(expr)                                   \
  do {                                                    \
    ::opscope::Status _st = (expr);                       \
    ASSERT_TRUE(_st.ok()) << #expr << ": " << _st.ToString(); \
  } while (0)

#define ASSERT_OK_AND_ASSIGN(lhs, expr)                                  \
  auto OPSCOPE_CONCAT(_so_, __LINE__) = (expr);                          \
  ASSERT_TRUE(OPSCOPE_CONCAT(_so_, __LINE__).ok())                       \
      << #expr << ": " << OPSCOPE_CONCAT(_so_, __LINE__).status().ToString(); \
  lhs = std::move(OPSCOPE_CONCAT(_so_, __LINE__)).value()

class DeviceConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto d = GetDevice(GetParam());
    if (!d.ok() && d.status().code() == StatusCode::kFailedPrecondition) {
      GTEST_SKIP() << "device " << GetParam() << " is built but not present: " << d.status().ToString();
    }
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    dev_ = *d;
  }

  std::vector<float> Read(Stream& s, const float* x, int n) {
    std::vector<float> out(n, -12345.0f);
    Status st = s.Memcpy(out.data(), x, n * sizeof(float), CopyKind::kDeviceToHost);
    if (st.ok()) st = s.Synchronize();
    EXPECT_TRUE(st.ok()) << st.ToString();
    return out;
  }

  Device* dev_ = nullptr;
};

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s) if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

TEST_P(DeviceConformance, InfoIsFilledIn) {
  const DeviceInfo& info = dev_->info();
  EXPECT_EQ(info.name.substr(0, GetParam().size()), GetParam());
  EXPECT_FALSE(info.description.empty());
  EXPECT_GE(info.compute_units, 1);
  EXPECT_GT(info.memory_bytes, 0);
  // What calibration sizes its buffers by and --cold-cache evicts: every
  // backend knows its own (the host's L3, the GPU's L2).
  EXPECT_GT(info.last_level_cache_bytes, 0);
  EXPECT_EQ(dev_->backend(), GetParam());
}

// What a program's ordering calls look like to the stream observer.
struct CountingObserver : StreamObserver {
  void OnRecord(const StreamRef& s, const void*) override { ++records, refs.push_back(s); }
  void OnWait(const StreamRef& s, const void*) override { ++waits, refs.push_back(s); }
  void OnMemcpy(const StreamRef& s, void*, const void*, size_t, CopyKind) override { ++copies, refs.push_back(s); }
  void OnStreamSynchronize(const StreamRef& s) override { ++stream_syncs, refs.push_back(s); }
  void OnEventSynchronize(const void*) override { ++event_syncs; }
  void OnDeviceSynchronize(const char* device) override { ++device_syncs, devices.push_back(device); }
  int records = 0, waits = 0, copies = 0, stream_syncs = 0, event_syncs = 0, device_syncs = 0;
  std::vector<StreamRef> refs;
  std::vector<std::string> devices;
};

// Each ordering call reaches the observer exactly once: the Stream, Event and
// Device bases report it, so a backend can neither forget one nor, through a
// handle that forwards to the real stream, report one twice.
TEST_P(DeviceConformance, TheObserverSeesEachOrderingCallOnce) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> stream, dev_->CreateStream());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Event> event, dev_->CreateEvent());
  ASSERT_OK_AND_ASSIGN(void* a, dev_->Allocate(4096));
  ASSERT_OK_AND_ASSIGN(void* b, dev_->Allocate(4096));
  CountingObserver seen;
  SetStreamObserver(&seen);
  const Status copied = stream->Memcpy(b, a, 4096, CopyKind::kDeviceToDevice);
  const Status nothing = stream->Memcpy(b, a, 0, CopyKind::kDeviceToDevice);  // no work: not reported
  const Status refused = stream->Memcpy(nullptr, a, 16, CopyKind::kDeviceToDevice);
  const Status recorded = stream->Record(*event), waited = stream->Wait(*event);
  const Status synced = stream->Synchronize(), event_synced = event->Synchronize(), all = dev_->Synchronize();
  SetStreamObserver(nullptr);
  dev_->Free(a);
  dev_->Free(b);
  for (const Status& st : {copied, nothing, recorded, waited, synced, event_synced, all}) EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(seen.copies, 1);
  EXPECT_EQ(seen.records, 1);
  EXPECT_EQ(seen.waits, 1);
  EXPECT_EQ(seen.stream_syncs, 1);
  EXPECT_EQ(seen.event_syncs, 1);
  EXPECT_EQ(seen.device_syncs, 1);
  for (const StreamRef& r : seen.refs) {
    EXPECT_EQ(std::string(r.device), dev_->name());
    EXPECT_EQ(r.id, stream->id());
  }
  EXPECT_EQ(seen.devices, std::vector<std::string>{dev_->name()});
}

// A crash handler asks the devices where a fault lies (FindGuardedFault), with
// no backend's file in sight: a guarded buffer names itself, nothing else does.
TEST_P(DeviceConformance, AGuardedFaultIsFoundWhereTheBufferIs) {
  GuardedFault fault;
  int on_stack = 0;
  EXPECT_FALSE(dev_->FindGuardedFault(&on_stack, &fault));
  if (!dev_->host_accessible()) return;  // no guard pages (CheckedAllocationFaultsPastTheEnd)
  ASSERT_OK(dev_->SetCheckedAllocation(true));
  ASSERT_OK_AND_ASSIGN(void* p, dev_->Allocate(4096));
  const char* past = static_cast<const char*>(p) + 4096 + 4;
  ASSERT_TRUE(dev_->FindGuardedFault(past, &fault));
  EXPECT_EQ(fault.begin, reinterpret_cast<uint64_t>(p));
  EXPECT_EQ(fault.bytes, 4096u);
  EXPECT_NE(std::string(fault.message).find("byte 5 past the end of a 4096-byte"), std::string::npos) << fault.message;
  GuardedFault any;
  EXPECT_TRUE(FindGuardedFaultOnOpenDevices(past, &any)) << "the open devices are asked without a lock";
  EXPECT_EQ(any.begin, fault.begin);
  EXPECT_FALSE(FindGuardedFaultOnOpenDevices(&on_stack, &any));
  dev_->Free(p);
  EXPECT_FALSE(dev_->FindGuardedFault(past, &fault)) << "a freed buffer is no longer one";
  ASSERT_OK(dev_->SetCheckedAllocation(false));
}

TEST_P(DeviceConformance, AllocCopyRoundTrip) {
  constexpr int n = 1000;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = 0.5f * i - 17.0f;
  DeviceBuffer a(dev_, n * sizeof(float)), b(dev_, n * sizeof(float));
  ASSERT_OK(a.status());
  ASSERT_OK(b.status());
  ASSERT_NE(a.f(), b.f());
  ASSERT_OK(dev_->CopySync(a.f(), host.data(), n * sizeof(float), CopyKind::kHostToDevice));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> s, dev_->CreateStream());
  ASSERT_OK(s->Memcpy(b.f(), a.f(), n * sizeof(float), CopyKind::kDeviceToDevice));
  std::vector<float> back = Read(*s, b.f(), n);
  EXPECT_EQ(back, host);
  // Zero-byte copies are no-ops, null pointers with bytes are refused.
  EXPECT_TRUE(s->Memcpy(nullptr, nullptr, 0, CopyKind::kDeviceToDevice).ok());
  EXPECT_FALSE(s->Memcpy(nullptr, a.f(), 4, CopyKind::kDeviceToDevice).ok());
}

TEST_P(DeviceConformance, StreamOrderHolds) {
  // Affine maps do not commute, so only the issued order gives `expected`.
  // All values stay small integers: exact in float on every backend.
  constexpr int n = 300;  // several blocks
  const std::vector<std::pair<float, float>> steps = {{2, 1}, {-1, 5}, {3, 0}, {1, -7}, {-2, 3},
                                                      {1, 100}, {2, -1}, {-1, 0}, {1, 2}, {3, -3}};
  std::vector<float> host(n), expected(n);
  for (int i = 0; i < n; ++i) host[i] = expected[i] = static_cast<float>(i % 97 - 40);
  for (auto [a, b] : steps) for (float& v : expected) v = v * a + b;

  DeviceBuffer x(dev_, n * sizeof(float));
  ASSERT_OK(x.status());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> s, dev_->CreateStream());
  TestKernels k(dev_);
  // A slow first kernel, so everything after it is really queued behind it.
  ASSERT_OK(k.Sleep(*s, milliseconds(10)));
  ASSERT_OK(s->Memcpy(x.f(), host.data(), n * sizeof(float), CopyKind::kHostToDevice));
  for (auto [a, b] : steps) ASSERT_OK(k.Affine(*s, x.f(), n, a, b));
  EXPECT_EQ(Read(*s, x.f(), n), expected);
}

TEST_P(DeviceConformance, EventsTimeTheWorkBetweenThem) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> s, dev_->CreateStream());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Event> e0, dev_->CreateEvent());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Event> e1, dev_->CreateEvent());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Event> e2, dev_->CreateEvent());
  EXPECT_FALSE(e0->TimestampNs().ok()) << "an event never recorded has no time";
  TestKernels k(dev_);
  ASSERT_OK(s->Record(*e0));
  ASSERT_OK(k.Sleep(*s, milliseconds(20)));
  ASSERT_OK(s->Record(*e1));
  ASSERT_OK(k.Sleep(*s, milliseconds(1)));
  ASSERT_OK(s->Record(*e2));
  ASSERT_OK(e2->Synchronize());
  EXPECT_TRUE(e0->Query());
  EXPECT_TRUE(e1->Query());
  EXPECT_TRUE(e2->Query());
  ASSERT_OK_AND_ASSIGN(int64_t t0, e0->TimestampNs());
  ASSERT_OK_AND_ASSIGN(int64_t t1, e1->TimestampNs());
  ASSERT_OK_AND_ASSIGN(int64_t t2, e2->TimestampNs());
  EXPECT_LE(t0, t1);
  EXPECT_LT(t1, t2);  // a 1 ms kernel lies between them
  ASSERT_OK_AND_ASSIGN(double us, e1->ElapsedUsSince(*e0));
  EXPECT_GE(us, 15000.0);
  ASSERT_OK(s->Synchronize());
}

TEST_P(DeviceConformance, WaitOrdersAcrossStreams) {
  constexpr int n = 256;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  DeviceBuffer x(dev_, n * sizeof(float)), y(dev_, n * sizeof(float));
  ASSERT_OK(x.status());
  ASSERT_OK(y.status());
  ASSERT_OK(dev_->CopySync(x.f(), host.data(), n * sizeof(float), CopyKind::kHostToDevice));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> a, dev_->CreateStream());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> b, dev_->CreateStream());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Event> produced, dev_->CreateEvent());
  TestKernels k(dev_);
  // A is slow to produce x = 2x + 1; B copies x only after A's event.
  ASSERT_OK(k.Sleep(*a, milliseconds(30)));
  ASSERT_OK(k.Affine(*a, x.f(), n, 2, 1));
  ASSERT_OK(a->Record(*produced));
  ASSERT_OK(b->Wait(*produced));
  ASSERT_OK(b->Memcpy(y.f(), x.f(), n * sizeof(float), CopyKind::kDeviceToDevice));
  std::vector<float> got = Read(*b, y.f(), n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], 2.0f * i + 1) << "at " << i;
  ASSERT_OK(a->Synchronize());
}

TEST_P(DeviceConformance, TwoStreamsOverlapInTime) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> a, dev_->CreateStream());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> b, dev_->CreateStream());
  std::unique_ptr<Event> ev[4];
  for (auto& e : ev) {
    ASSERT_OK_AND_ASSIGN(e, dev_->CreateEvent());
  }
  TestKernels k(dev_);
  // 200 ms each: stream b's worker has that long to start while a sleeps
  // (50 ms left little on a loaded machine whose ctest runs two tests at once).
  ASSERT_OK(a->Record(*ev[0]));
  ASSERT_OK(k.Sleep(*a, milliseconds(200)));
  ASSERT_OK(a->Record(*ev[1]));
  ASSERT_OK(b->Record(*ev[2]));
  ASSERT_OK(k.Sleep(*b, milliseconds(200)));
  ASSERT_OK(b->Record(*ev[3]));
  ASSERT_OK(a->Synchronize());
  ASSERT_OK(b->Synchronize());
  int64_t t[4];
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK_AND_ASSIGN(t[i], ev[i]->TimestampNs());
  }
  EXPECT_GE(t[1] - t[0], 190'000'000);
  EXPECT_GE(t[3] - t[2], 190'000'000);
  // Serialized they would be 400 ms end to end; overlapping, the later start
  // comes before the earlier end.
  EXPECT_LT(std::max(t[0], t[2]), std::min(t[1], t[3]))
      << "a: [" << t[0] << ", " << t[1] << "]  b: [" << t[2] << ", " << t[3] << "]";
}

TEST_P(DeviceConformance, DeviceSynchronizeWaitsForEveryStream) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> a, dev_->CreateStream());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> b, dev_->CreateStream());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Event> ea, dev_->CreateEvent());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Event> eb, dev_->CreateEvent());
  TestKernels k(dev_);
  ASSERT_OK(k.Sleep(*a, milliseconds(20)));
  ASSERT_OK(a->Record(*ea));
  ASSERT_OK(k.Sleep(*b, milliseconds(20)));
  ASSERT_OK(b->Record(*eb));
  ASSERT_OK(dev_->Synchronize());
  EXPECT_TRUE(ea->Query());
  EXPECT_TRUE(eb->Query());
}

TEST_P(DeviceConformance, HostFunctionErrorIsStickyUntilReported) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Stream> s, dev_->CreateStream());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Event> after, dev_->CreateEvent());
  auto ran = std::make_shared<std::atomic<int>>(0);
  ASSERT_OK(s->EnqueueHostFunction([] { return DeviceError("kernel exploded"); }));
  ASSERT_OK(s->EnqueueHostFunction([ran] {
    ran->fetch_add(1);
    return Status::Ok();
  }));
  ASSERT_OK(s->Record(*after));
  Status st = s->Synchronize();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kDeviceError);
  EXPECT_NE(st.message().find("kernel exploded"), std::string::npos) << st.ToString();
  EXPECT_EQ(ran->load(), 0) << "work queued behind a failed host function must be skipped";
  EXPECT_TRUE(after->Query()) << "events are still reached after an error";
  // Reported once, then the stream works again.
  ASSERT_OK(s->Synchronize());
  ASSERT_OK(s->EnqueueHostFunction([ran] {
    ran->fetch_add(1);
    return Status::Ok();
  }));
  ASSERT_OK(s->Synchronize());
  EXPECT_EQ(ran->load(), 1);
}

// A backend whose kernels are host functions compiles none at run time and
// knows no registers; one that loads PTX (cuda) JITs the suite's kernel once,
// tells its resources, and names the entry or the text it could not load.
TEST_P(DeviceConformance, RuntimeKernelsLoadOnceAndTellTheirResources) {
  if (dev_->host_accessible()) {
    auto k = dev_->LoadKernel("ptx", ".version 7.8", "any");
    ASSERT_FALSE(k.ok());
    EXPECT_EQ(k.status().code(), StatusCode::kUnimplemented) << k.status().ToString();
    const KernelResources r = dev_->DescribeKernel({.function = reinterpret_cast<const void*>(&IsCuda)}, {});
    EXPECT_EQ(r.registers_per_thread, -1);
    EXPECT_EQ(r.static_shared_bytes, -1);
    EXPECT_EQ(r.occupancy, -1);
    return;
  }
#ifdef OPSCOPE_HAVE_CUDA
  ASSERT_TRUE(IsCuda(dev_));
  ASSERT_OK_AND_ASSIGN(const void* affine, dev_->LoadKernel("ptx", kTestKernelsPtx, "opscope_test_affine"));
  ASSERT_OK_AND_ASSIGN(const void* again, dev_->LoadKernel("ptx", kTestKernelsPtx, "opscope_test_affine"));
  EXPECT_EQ(affine, again) << "the same text and entry load once";
  const KernelResources r = dev_->DescribeKernel({.function = affine}, {.grid = {5}, .block = {64}});
  EXPECT_GT(r.registers_per_thread, 0);
  // A few registers and no shared memory: blocks of 64 are limited by the SM's
  // block slots or threads alone, never to none.
  EXPECT_GE(r.active_blocks_per_sm, 1);
  EXPECT_GT(r.occupancy, 0);
  EXPECT_LE(r.occupancy, 1);
  EXPECT_LE(r.registers_per_thread, 255);
  EXPECT_EQ(r.static_shared_bytes, 0) << "the kernel declares no shared memory";
  EXPECT_GE(r.max_threads_per_block, 64) << "it is launched with 64 threads a block";
  auto missing = dev_->LoadKernel("ptx", kTestKernelsPtx, "opscope_no_such_kernel");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("opscope_no_such_kernel"), std::string::npos) << missing.status().ToString();
  auto broken = dev_->LoadKernel("ptx", ".version 7.8\n.target sm_75\nthis is not ptx", "x");
  EXPECT_FALSE(broken.ok());
  auto other = dev_->LoadKernel("spirv", "", "x");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kUnimplemented);
#else
  FAIL() << "device " << dev_->name() << " is neither host-accessible nor cuda";
#endif
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceConformance, ::testing::ValuesIn(RegisteredDeviceNames()), ParamName);

// Death tests first, in their own suite (gtest runs *DeathTest suites first).
using DeviceConformanceDeathTest = DeviceConformance;

// What the process prints when a checked buffer is overrun by 4 bytes. Under
// AddressSanitizer too: opscope's handler is installed after ASan's, prints
// this line first, then hands the fault on to ASan, which adds its own report.
std::string OverrunMessage() {
  return "out-of-bounds access at 0x[0-9a-f]+ : byte 5 past the end of a 4096-byte cpu allocation";
}

TEST_P(DeviceConformanceDeathTest, CheckedAllocationFaultsPastTheEnd) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // streams are threads
  if (!dev_->host_accessible()) {
    // Guard pages are a host-memory feature; other backends must refuse it.
    Status st = dev_->SetCheckedAllocation(true);
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kUnimplemented) << st.ToString();
    EXPECT_FALSE(dev_->checked_allocation());
    return;
  }
  ASSERT_OK(dev_->SetCheckedAllocation(true));
  ASSERT_TRUE(dev_->checked_allocation());
  ASSERT_OK_AND_ASSIGN(void* p, dev_->Allocate(4096));
  auto* f = static_cast<volatile float*>(p);
  f[0] = 1;
  f[1023] = 2;  // the last element is fine
  EXPECT_EQ(f[1023], 2.0f);
  EXPECT_DEATH(f[1025] = 3, OverrunMessage());
  // The same overrun from inside a kernel, on a stream worker: block 1 runs past.
  auto overrun_in_kernel = [&] {
    KernelLaunch k{.name = "overrun", .config = {.grid = {2}, .block = {1}}};
    k.host = [f](const BlockContext& b) { f[1024 * b.block_idx.x + 1] = 4; };
    Status st = dev_->default_stream().Launch(k);
    if (st.ok()) st = dev_->default_stream().Synchronize();
  };
  EXPECT_DEATH(overrun_in_kernel(), OverrunMessage());
  dev_->Free(p);
  ASSERT_OK(dev_->SetCheckedAllocation(false));
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceConformanceDeathTest, ::testing::ValuesIn(RegisteredDeviceNames()),
                         ParamName);

}  // namespace
}  // namespace opscope
