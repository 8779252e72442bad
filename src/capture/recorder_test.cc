#include "capture/recorder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "capture/dispatcher.h"
#include "opscope/op.h"

namespace opscope {
namespace {

Status CopyKernel(KernelContext& ctx) {
  for (int64_t i = 0; i < ctx.in(0).numel(); ++i) ctx.out(0).FlatSetFromDouble(i, ctx.in(0).FlatGetAsDouble(i));
  return Status::Ok();
}

OPSCOPE_OP("recorder_test_copy")
    .Input("x").Output("y").SameShape().Reference(CopyKernel)
    .Kernel("cpu", CopyKernel, "recorder_test_copy_cpu_kernel_with_a_name_longer_than_the_entry_keeps");

OPSCOPE_OP("recorder_test_fail")
    .Input("x").Output("y").SameShape().Reference(CopyKernel)
    .Kernel("cpu", [](KernelContext&) { return DeviceError("deliberate failure"); }, "recorder_test_fail_cpu");

// Adds a recorder to the global dispatcher for one test.
class ScopedRecorder {
 public:
  explicit ScopedRecorder(Recorder::Options options = {})
      : recorder_(std::make_shared<Recorder>(options)), hook_(Dispatcher::Global().AddHook(recorder_)) {}
  ~ScopedRecorder() { Dispatcher::Global().RemoveHook(hook_); }
  Recorder& operator*() { return *recorder_; }
  Recorder* operator->() { return recorder_.get(); }

 private:
  std::shared_ptr<Recorder> recorder_;
  int hook_;
};

Tensor RecorderInput(Shape shape, double start) {
  auto t = Tensor::Empty(DType::kF32, shape);
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < t->numel(); ++i) t->FlatSetFromDouble(i, start - static_cast<double>(i));
  return *t;
}

Device* Cpu() {
  auto d = GetDevice("cpu");
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return *d;
}

TEST(Recorder, KeepsEveryFieldOfADeviceLaunch) {
  ScopedRecorder rec;
  Tensor x = RecorderInput(Shape({3, 5}), 2.0);
  auto run = Dispatcher::Global().Run("Relu", {x}, {}, RunOptions{.device = Cpu()});
  ASSERT_TRUE(run.ok()) << run.status().ToString();

  RecorderSnapshot snap = rec->Snapshot();
  ASSERT_EQ(snap.entries.size(), 1u);
  EXPECT_EQ(snap.dropped, 0u);
  EXPECT_EQ(snap.threads, 1);
  const LaunchEntry& e = snap.entries[0];
  EXPECT_STREQ(e.op_name, "Relu");
  EXPECT_STREQ(e.device_name, "cpu");
  EXPECT_STREQ(e.kernel, run->kernel.c_str());
  EXPECT_EQ(e.op_id, run->op_id);
  EXPECT_EQ(e.seq, run->seq);
  EXPECT_TRUE(e.completed);
  EXPECT_GE(e.stream_id, 0);
  ASSERT_EQ(e.num_reads, 1);
  EXPECT_EQ(e.reads[0].bytes, x.nbytes());
  EXPECT_EQ(e.reads[0].fingerprint, ComputeFingerprint(x).Hash());
  ASSERT_EQ(e.num_writes, 1);
  EXPECT_EQ(e.writes[0].ptr, run->outputs[0].raw_data());
  ASSERT_EQ(e.total_launches, run->launches.size());
  ASSERT_GE(e.num_launches, 1);
  EXPECT_STREQ(e.launches[0].name, run->launches[0].name.c_str());
  EXPECT_EQ(e.launches[0].grid[0], run->launches[0].config.grid.x);
  EXPECT_EQ(e.launches[0].block[0], run->launches[0].config.block.x);
  EXPECT_EQ(e.launches[0].registers_per_thread, -1) << "a host kernel has no registers to tell";
  EXPECT_EQ(e.launches[0].shared_bytes_per_block, -1);
  EXPECT_EQ(e.launches[0].occupancy, -1);
  ASSERT_TRUE(e.has_device_times());
  EXPECT_LE(e.device_start_ns, e.device_end_ns);
  EXPECT_GE(e.host_done_ns, e.host_enqueue_ns);
}

TEST(Recorder, InputsHashTellsEqualShapesWithOtherDataApart) {
  ScopedRecorder rec;
  ASSERT_TRUE(Dispatcher::Global().Run("Relu", {RecorderInput(Shape({4, 4}), 1.0)}, {}, RunOptions{}).ok());
  ASSERT_TRUE(Dispatcher::Global().Run("Relu", {RecorderInput(Shape({4, 4}), 1.0)}, {}, RunOptions{}).ok());
  ASSERT_TRUE(Dispatcher::Global().Run("Relu", {RecorderInput(Shape({4, 4}), 9.0)}, {}, RunOptions{}).ok());
  RecorderSnapshot snap = rec->Snapshot();
  ASSERT_EQ(snap.entries.size(), 3u);
  EXPECT_NE(snap.entries[0].inputs_hash, 0u);
  EXPECT_EQ(snap.entries[0].inputs_hash, snap.entries[1].inputs_hash);
  EXPECT_NE(snap.entries[0].inputs_hash, snap.entries[2].inputs_hash);
  // Reference runs happen on the host: no device, no stream, no device times.
  EXPECT_STREQ(snap.entries[0].device_name, "host");
  EXPECT_EQ(snap.entries[0].stream_id, -1);
  EXPECT_FALSE(snap.entries[0].has_device_times());
}

TEST(Recorder, CutsLongKernelNamesAndKeepsThemTerminated) {
  ScopedRecorder rec;
  ASSERT_TRUE(Dispatcher::Global().Run("recorder_test_copy", {RecorderInput(Shape({2}), 1.0)}, {},
                                       RunOptions{.device = Cpu()}).ok());
  RecorderSnapshot snap = rec->Snapshot();
  ASSERT_EQ(snap.entries.size(), 1u);
  EXPECT_EQ(std::strlen(snap.entries[0].kernel), size_t{LaunchEntry::kNameChars - 1});
  EXPECT_EQ(std::string(snap.entries[0].kernel),
            std::string("recorder_test_copy_cpu_kernel_with_a_name_longer_than_the_entry_keeps")
                .substr(0, LaunchEntry::kNameChars - 1));
}

TEST(Recorder, AFailedKernelLeavesAnIncompleteEntry) {
  ScopedRecorder rec;
  auto run = Dispatcher::Global().Run("recorder_test_fail", {RecorderInput(Shape({2}), 1.0)}, {},
                                      RunOptions{.device = Cpu()});
  ASSERT_FALSE(run.ok());
  (void)Cpu()->Synchronize();  // the failure may also stay sticky on the stream; clear it
  RecorderSnapshot snap = rec->Snapshot();
  ASSERT_EQ(snap.entries.size(), 1u);
  EXPECT_STREQ(snap.entries[0].op_name, "recorder_test_fail");
  EXPECT_FALSE(snap.entries[0].completed);
  EXPECT_EQ(snap.entries[0].host_done_ns, -1);
}

TEST(Recorder, AsynchronousLaunchGetsItsTimesAtSnapshot) {
  ScopedRecorder rec;
  Tensor x = RecorderInput(Shape({64}), 3.0);
  auto run = Dispatcher::Global().Run("Relu", {x}, {}, RunOptions{.device = Cpu(), .synchronize = false});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(Cpu()->Synchronize().ok());
  RecorderSnapshot snap = rec->Snapshot();
  ASSERT_EQ(snap.entries.size(), 1u);
  EXPECT_TRUE(snap.entries[0].has_device_times());
  EXPECT_GE(snap.entries[0].device_us(), 0.0);
}

TEST(Recorder, CountsWhatABoundedBufferDrops) {
  ScopedRecorder rec(Recorder::Options{.max_entries_per_thread = Recorder::kChunkEntries});
  Tensor x = RecorderInput(Shape({1}), 1.0);
  const int kRuns = Recorder::kChunkEntries + 44;
  for (int i = 0; i < kRuns; ++i) ASSERT_TRUE(Dispatcher::Global().Run("Relu", {x}, {}, RunOptions{}).ok());
  RecorderSnapshot snap = rec->Snapshot();
  EXPECT_EQ(snap.entries.size(), size_t{Recorder::kChunkEntries});
  EXPECT_EQ(snap.dropped, 44u);
  EXPECT_EQ(snap.entries.size() + snap.dropped, size_t{kRuns});

  rec->Clear();
  EXPECT_EQ(rec->ApproximateCount(), 0u);
  ASSERT_TRUE(Dispatcher::Global().Run("Relu", {x}, {}, RunOptions{}).ok());
  snap = rec->Snapshot();
  EXPECT_EQ(snap.entries.size(), 1u);
  EXPECT_EQ(snap.dropped, 0u);
  EXPECT_TRUE(snap.entries[0].completed);
}

TEST(Recorder, ThreadsRecordIntoTheirOwnBuffersWithoutLoss) {
  ScopedRecorder rec;
  constexpr int kThreads = 4;
  constexpr int kRunsPerThread = 300;  // more than one chunk per thread
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      Tensor x = RecorderInput(Shape({2}), t);
      for (int i = 0; i < kRunsPerThread; ++i) {
        if (!Dispatcher::Global().Run("Relu", {x}, {}, RunOptions{.fingerprint = false}).ok()) ++failures[t];
      }
    });
  }
  for (auto& th : threads) th.join();  // quiescent from here on
  for (int f : failures) ASSERT_EQ(f, 0);

  RecorderSnapshot snap = rec->Snapshot();
  EXPECT_EQ(snap.dropped, 0u);
  EXPECT_EQ(snap.threads, kThreads);
  ASSERT_EQ(snap.entries.size(), size_t{kThreads * kRunsPerThread});
  std::set<uint64_t> seqs;
  std::map<uint32_t, int> per_thread;
  for (size_t i = 0; i < snap.entries.size(); ++i) {
    const LaunchEntry& e = snap.entries[i];
    seqs.insert(e.seq);
    ++per_thread[e.thread_index];
    EXPECT_TRUE(e.completed);
    if (i > 0) EXPECT_LT(snap.entries[i - 1].seq, e.seq);
  }
  EXPECT_EQ(seqs.size(), snap.entries.size());
  ASSERT_EQ(per_thread.size(), size_t{kThreads});
  for (const auto& [thread, n] : per_thread) EXPECT_EQ(n, kRunsPerThread) << "thread " << thread;
}

TEST(Recorder, EntriesOutliveTheRecorderOfAnotherInstance) {
  // Two recorders at once each see every launch; a thread keeps one buffer per recorder.
  ScopedRecorder a;
  Tensor x = RecorderInput(Shape({1}), 1.0);
  ASSERT_TRUE(Dispatcher::Global().Run("Relu", {x}, {}, RunOptions{}).ok());
  {
    ScopedRecorder b;
    ASSERT_TRUE(Dispatcher::Global().Run("Relu", {x}, {}, RunOptions{}).ok());
    EXPECT_EQ(b->Snapshot().entries.size(), 1u);
  }
  ScopedRecorder c;  // a new recorder never sees the destroyed one's buffer
  EXPECT_EQ(c->Snapshot().entries.size(), 0u);
  EXPECT_EQ(a->Snapshot().entries.size(), 2u);
}

TEST(InternName, GivesOnePointerPerName) {
  std::string a = "some_op_name";
  std::string b = std::string("some_op_") + "name";
  const char* pa = InternName(a);
  EXPECT_EQ(pa, InternName(b));
  EXPECT_STREQ(pa, "some_op_name");
  a = "other_name!!";  // same buffer, same size, other content
  EXPECT_STREQ(InternName(a), "other_name!!");
  EXPECT_STREQ(pa, "some_op_name");
}

}  // namespace
}  // namespace opscope
