// KernelContext::Launch keeps what the device says of each device kernel it
// launches (registers per thread, shared memory per block: what limits its
// occupancy), and nothing for a host kernel. The device here is a stand-in
// for a GPU this machine may not have: it answers DescribeKernel from a table
// and its stream only counts launches; the real cuda answer is checked by the
// conformance suite where a GPU is.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "opscope/device.h"
#include "opscope/op.h"

namespace opscope {
namespace {

class CountingStream : public Stream {
 public:
  int id() const override { return 0; }
  const char* device_name() const override { return "table"; }
  Status DoLaunch(const KernelLaunch&) override { return ++launches, Status::Ok(); }
  int launches = 0;

 protected:
  Status DoMemcpy(void*, const void*, size_t, CopyKind) override { return Status::Ok(); }
  Status DoRecord(Event&) override { return Status::Ok(); }
  Status DoWait(Event&) override { return Status::Ok(); }
  Status DoSynchronize() override { return Status::Ok(); }
};

class TableDevice : public Device {
 public:
  const DeviceInfo& info() const override { return info_; }
  bool host_accessible() const override { return false; }
  StatusOr<void*> Allocate(size_t) override { return UnimplementedError("no memory"); }
  void Free(void*) override {}
  KernelResources DescribeKernel(const DeviceKernel& k, const LaunchConfig& config) override {
    auto it = table.find(k.function);
    if (it == table.end()) return {};
    KernelResources r = it->second;
    r.active_blocks_per_sm = static_cast<int>(2048 / config.block.count());  // threads bound it alone here
    r.occupancy = static_cast<double>(r.active_blocks_per_sm) * config.block.count() / 2048;
    return r;
  }
  StatusOr<std::unique_ptr<Stream>> CreateStream() override { return UnimplementedError("one stream"); }
  StatusOr<std::unique_ptr<Event>> CreateEvent() override { return UnimplementedError("no events"); }
  Stream& default_stream() override { return stream; }

  std::map<const void*, KernelResources> table;
  CountingStream stream;

 private:
  DeviceInfo info_{.name = "table", .description = "a stand-in accelerator"};
  Status DoSynchronize() override { return Status::Ok(); }
};

const int kKernelA = 0, kKernelB = 0;  // two distinct addresses as kernel handles

TEST(KernelContextLaunch, KeepsTheDeviceKernelsResourcesAndNoneForHostKernels) {
  TableDevice dev;
  dev.table[&kKernelA] = {.registers_per_thread = 40, .static_shared_bytes = 1024, .max_threads_per_block = 1024};
  Attrs attrs;
  std::map<std::string, int64_t> tunables;
  KernelContext ctx("op", {}, {}, attrs, &dev, &dev.stream, tunables);

  ASSERT_TRUE(ctx.Launch({.name = "a", .config = {.grid = {8}, .block = {128}},
                          .device = {.function = &kKernelA, .shared_bytes = 512}}).ok());
  ASSERT_TRUE(ctx.Launch({.name = "b", .device = {.function = &kKernelB}}).ok());  // the device cannot tell
  // 3 blocks of 640 threads in 2048 slots: 94%.
  ASSERT_TRUE(ctx.Launch({.name = "c", .config = {.block = {640}}, .device = {.function = &kKernelA}}).ok());
  EXPECT_EQ(ctx.launches().back().ResourcesText(), "40 registers/thread, 1024 B shared/block, occupancy 94% (3 blocks/SM)");
  EXPECT_EQ(dev.stream.launches, 3);
  ASSERT_EQ(ctx.launches().size(), 3u);
  const KernelLaunchInfo& a = ctx.launches()[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.config.block.x, 128);
  EXPECT_EQ(a.registers_per_thread, 40);
  EXPECT_EQ(a.shared_bytes_per_block, 1024 + 512) << "static plus the launch's dynamic shared memory";
  EXPECT_EQ(a.active_blocks_per_sm, 16) << "asked for the launch's own block size";
  EXPECT_DOUBLE_EQ(a.occupancy, 1.0);
  EXPECT_EQ(a.ResourcesText(), "40 registers/thread, 1536 B shared/block, occupancy 100% (16 blocks/SM)");
  const KernelLaunchInfo& b = ctx.launches()[1];
  EXPECT_EQ(b.registers_per_thread, -1);
  EXPECT_EQ(b.shared_bytes_per_block, -1);
  EXPECT_EQ(b.occupancy, -1);
  EXPECT_EQ(b.ResourcesText(), "");
}

TEST(KernelContextLaunch, AHostKernelOnTheCpuTellsNoResources) {
  Device* cpu = GetDevice("cpu").value();
  Attrs attrs;
  std::map<std::string, int64_t> tunables;
  KernelContext ctx("op", {}, {}, attrs, cpu, &cpu->default_stream(), tunables);
  int ran = 0;
  ASSERT_TRUE(ctx.Launch({.name = "h", .host = [&](const BlockContext&) { ++ran; }}).ok());
  ASSERT_TRUE(cpu->default_stream().Synchronize().ok());
  EXPECT_EQ(ran, 1);
  ASSERT_EQ(ctx.launches().size(), 1u);
  EXPECT_EQ(ctx.launches()[0].registers_per_thread, -1);
  EXPECT_EQ(ctx.launches()[0].ResourcesText(), "");
}

}  // namespace
}  // namespace opscope
