// The race check on hand-built records: each happens-before edge kind
// (stream order, event record -> wait, host stream/event/device syncs, a
// copy a kernel issues) orders, and taking it away leaves the race.
#include "analysis/diagnose/race_check.h"

#include <gtest/gtest.h>

#include <cstring>

namespace opscope {
namespace {

class Records {
 public:
  // A launch reading `in` and writing `out` (address ranges of 256 bytes).
  Records& Launch(const char* op, int stream, uint64_t in, uint64_t out, int32_t tid = 1) {
    LaunchSlot l;
    l.seq = next_++;
    l.committed = l.seq + 1;
    CopyField(l.op, op);
    CopyField(l.kernel, (std::string(op) + "_cpu").c_str());
    CopyField(l.device, "cpu");
    l.stream_id = stream;
    l.host_tid = tid;
    l.op_id = l.seq * 1000;
    l.num_inputs = in ? 1 : 0;
    l.inputs[0].address = in, l.inputs[0].bytes = 256;
    CopyField(l.inputs[0].name, "x");
    l.num_outputs = 1;
    l.outputs[0].address = out, l.outputs[0].bytes = 256;
    CopyField(l.outputs[0].name, "y");
    ring_.launches.push_back(l);
    return *this;
  }
  // A launch the op with `op_id` made on a stream of its own: the recorder
  // gives it the op's tensors (`in`, `out`) for want of its own.
  Records& SideLaunch(const char* op, uint64_t op_id, int stream, uint64_t in, uint64_t out) {
    Launch(op, stream, in, out);
    ring_.launches.back().op_id = op_id;
    ring_.launches.back().state = static_cast<int32_t>(FlightState::kSide);
    return *this;
  }
  // An allocation of 256 bytes at `at`, made by the kernel function of `by` (0: the host).
  Records& Allocate(uint64_t at, uint64_t by = 0) {
    Sync(SyncKind::kAllocate, -1, 0, 1, by);
    ring_.syncs.back().write = {at, 256};
    return *this;
  }
  Records& Sync(SyncKind kind, int stream, uint64_t event = 0, int32_t tid = 1, uint64_t issued_by = 0) {
    SyncRecord s;
    s.seq = next_++;
    s.committed = s.seq + 1;
    s.kind = static_cast<int32_t>(kind);
    CopyField(s.device, "cpu");
    s.stream_id = stream;
    s.event = event;
    s.host_tid = tid;
    s.op_id = issued_by;
    ring_.syncs.push_back(s);
    return *this;
  }
  Records& Copy(int stream, uint64_t dst, uint64_t src, uint64_t issued_by = 0, const char* op = "") {
    Sync(SyncKind::kMemcpy, stream, 0, 1, issued_by);
    CopyField(ring_.syncs.back().op, op);
    ring_.syncs.back().write = {dst, 256};
    ring_.syncs.back().read = {src, 256};
    return *this;
  }
  const FlightRingData& ring() const { return ring_; }

 private:
  FlightRingData ring_;
  uint64_t next_ = 1;
};

constexpr uint64_t kA = 0x10000, kB = 0x20000, kC = 0x30000;

TEST(RaceCheck, WriteThenReadOnAnotherStreamWithNothingBetweenRaces) {
  auto r = FindRaces(Records().Launch("Relu", 1, kA, kB).Launch("Sigmoid", 2, kB, kC).ring());
  ASSERT_EQ(r.races.size(), 1u);
  EXPECT_EQ(r.races[0].first.op, "Relu");
  EXPECT_EQ(r.races[0].second.op, "Sigmoid");
  EXPECT_TRUE(r.races[0].first_writes);
  EXPECT_FALSE(r.races[0].second_writes);
  EXPECT_EQ(r.races[0].begin, kB);
  EXPECT_EQ(r.races[0].bytes, 256u);
  EXPECT_EQ(r.races[0].first_tensor, "Relu.y");
  EXPECT_EQ(r.races[0].second_tensor, "Sigmoid.x");
}

TEST(RaceCheck, AnEventRecordedAfterTheWriterAndWaitedForBeforeTheReaderOrdersThem) {
  auto r = FindRaces(Records()
                         .Launch("Relu", 1, kA, kB)
                         .Sync(SyncKind::kRecord, 1, 77)
                         .Sync(SyncKind::kWait, 2, 77)
                         .Launch("Sigmoid", 2, kB, kC)
                         .ring());
  EXPECT_TRUE(r.races.empty());
}

TEST(RaceCheck, AnEventRecordedBeforeTheWriterDoesNotCoverIt) {
  auto r = FindRaces(Records()
                         .Sync(SyncKind::kRecord, 1, 77)
                         .Launch("Relu", 1, kA, kB)
                         .Sync(SyncKind::kWait, 2, 77)
                         .Launch("Sigmoid", 2, kB, kC)
                         .ring());
  EXPECT_EQ(r.races.size(), 1u);
}

TEST(RaceCheck, AWaitForAnotherEventDoesNotOrder) {
  auto r = FindRaces(Records()
                         .Launch("Relu", 1, kA, kB)
                         .Sync(SyncKind::kRecord, 1, 77)
                         .Sync(SyncKind::kWait, 2, 78)
                         .Launch("Sigmoid", 2, kB, kC)
                         .ring());
  EXPECT_EQ(r.races.size(), 1u);
}

TEST(RaceCheck, HostSynchronisationOrdersWhatTheSameThreadEnqueuesLater) {
  for (SyncKind kind : {SyncKind::kStreamSync, SyncKind::kDeviceSync}) {
    auto r = FindRaces(Records().Launch("Relu", 1, kA, kB).Sync(kind, kind == SyncKind::kStreamSync ? 1 : -1)
                           .Launch("Sigmoid", 2, kB, kC).ring());
    EXPECT_TRUE(r.races.empty()) << static_cast<int>(kind);
  }
  // Waiting for the event on the host orders too.
  auto e = FindRaces(Records().Launch("Relu", 1, kA, kB).Sync(SyncKind::kRecord, 1, 5).Sync(SyncKind::kEventSync, -1, 5)
                         .Launch("Sigmoid", 2, kB, kC).ring());
  EXPECT_TRUE(e.races.empty());
  // Syncing the wrong stream does not.
  auto w = FindRaces(Records().Launch("Relu", 1, kA, kB).Sync(SyncKind::kStreamSync, 2).Launch("Sigmoid", 2, kB, kC).ring());
  EXPECT_EQ(w.races.size(), 1u);
  // Nor does another thread's sync.
  auto t = FindRaces(Records().Launch("Relu", 1, kA, kB).Sync(SyncKind::kStreamSync, 1, 0, /*tid=*/9)
                         .Launch("Sigmoid", 2, kB, kC).ring());
  EXPECT_EQ(t.races.size(), 1u);
}

TEST(RaceCheck, ReadsDoNotRaceAndOneStreamIsOrdered) {
  EXPECT_TRUE(FindRaces(Records().Launch("Relu", 1, kA, kB).Launch("Sigmoid", 2, kA, kC).ring()).races.empty());
  EXPECT_TRUE(FindRaces(Records().Launch("Relu", 1, kA, kB).Launch("Sigmoid", 1, kB, kC).ring()).races.empty());
  // Disjoint buffers never race.
  EXPECT_TRUE(FindRaces(Records().Launch("Relu", 1, kA, kB).Launch("Sigmoid", 2, kC, kC + 0x1000).ring()).races.empty());
}

TEST(RaceCheck, ACopyAKernelQueuesOnASideStreamIsNotCoveredByTheKernelsEvent) {
  // async_indices on stream 1 queues a copy into its output on side stream 4,
  // records an event on 1; gather on 2 waits for it and reads the output.
  Records rec;
  rec.Launch("async_indices", 1, kA, kB);
  const uint64_t producer = rec.ring().launches.back().op_id;
  auto r = FindRaces(rec.Copy(4, kB, kC, producer, "async_indices")
                         .Sync(SyncKind::kRecord, 1, 5)
                         .Sync(SyncKind::kWait, 2, 5)
                         .Launch("gather_rows", 2, kB, kA + 0x1000)
                         .ring());
  ASSERT_EQ(r.races.size(), 1u);
  EXPECT_FALSE(r.races[0].first.is_launch);
  EXPECT_EQ(r.races[0].first.op, "async_indices");
  EXPECT_EQ(r.races[0].second.op, "gather_rows");
  // The same copy waited for through an event on the side stream: ordered.
  Records ok;
  ok.Launch("async_indices", 1, kA, kB);
  auto fixed = FindRaces(ok.Copy(4, kB, kC, ok.ring().launches.back().op_id)
                             .Sync(SyncKind::kRecord, 4, 6)
                             .Sync(SyncKind::kWait, 2, 6)
                             .Launch("gather_rows", 2, kB, kA + 0x1000)
                             .ring());
  EXPECT_TRUE(fixed.races.empty());
}

TEST(RaceCheck, AKernelWaitingInsideItsOwnRunOrdersNothingTheHostEnqueuesNext) {
  // Relu's kernel, run by the host thread that waits for its stream, syncs
  // the stream from inside: the host has not waited for Relu by that.
  Records rec;
  rec.Launch("Relu", 1, kA, kB);
  const uint64_t relu = rec.ring().launches.back().op_id;
  auto r = FindRaces(rec.Sync(SyncKind::kStreamSync, 1, 0, 1, relu).Launch("Sigmoid", 2, kB, kC).ring());
  EXPECT_EQ(r.races.size(), 1u);
}

TEST(RaceCheck, AddressesHandedOutAgainBelongToAnotherBuffer) {
  // The reader's buffer freed and its addresses reallocated to a copy's destination.
  Records rec;
  rec.Launch("Relu", 1, kA, kB);
  rec.Sync(SyncKind::kAllocate, -1);
  auto& alloc = const_cast<SyncRecord&>(rec.ring().syncs.back());
  alloc.write = {kA, 256};
  auto r = FindRaces(rec.Copy(0, kA, kC).ring());
  EXPECT_TRUE(r.races.empty());
  // Without the allocation between them, the same two accesses race.
  EXPECT_EQ(FindRaces(Records().Launch("Relu", 1, kA, kB).Copy(0, kA, kC).ring()).races.size(), 1u);
}

TEST(RaceCheck, ASideLaunchStandsForTheOpsTensorsAndTheScratchTheOpAllocatedBeforeIt) {
  constexpr uint64_t kScratch = 0x40000;
  // The op allocates scratch, launches a side kernel (its buffers unknown),
  // then copies into the scratch on its own stream with no event between.
  Records rec;
  rec.Launch("split_sum", 1, kA, kB);
  const uint64_t op = rec.ring().launches.back().op_id;
  auto on_scratch = [&](const RaceCheckResult& r) {
    std::vector<Race> out;
    for (const Race& race : r.races) {
      if (race.begin == kScratch) out.push_back(race);
    }
    return out;
  };
  // (The side kernel also races the op's own kernel on the op's output y.)
  auto r = on_scratch(FindRaces(rec.Allocate(kScratch, op).SideLaunch("split_sum", op, 3, kA, kB).Copy(1, kScratch, kC, op, "split_sum").ring()));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].first_tensor, "split_sum's allocation of 256 bytes");
  EXPECT_EQ(r[0].second_tensor, "copy destination");
  EXPECT_NE(r[0].first.what.find("its buffers taken as the op's tensors and the 1 allocation the op made before it"),
            std::string::npos)
      << r[0].first.what;
  // Scratch the host allocated is not the op's: nothing stands for it, no race there.
  Records host;
  host.Launch("split_sum", 1, kA, kB);
  const uint64_t op2 = host.ring().launches.back().op_id;
  EXPECT_TRUE(on_scratch(FindRaces(host.Allocate(kScratch).SideLaunch("split_sum", op2, 3, kA, kB).Copy(1, kScratch, kC, op2, "split_sum").ring())).empty());
}

TEST(RaceCheck, OrderIsTransitiveAcrossStreams) {
  // 1 -> 2 by event A, 2 -> 3 by event B: the write on 1 is ordered before the read on 3.
  auto r = FindRaces(Records()
                         .Launch("Relu", 1, kA, kB)
                         .Sync(SyncKind::kRecord, 1, 1)
                         .Sync(SyncKind::kWait, 2, 1)
                         .Launch("Neg", 2, kC, kC + 0x1000)
                         .Sync(SyncKind::kRecord, 2, 2)
                         .Sync(SyncKind::kWait, 3, 2)
                         .Launch("Sigmoid", 3, kB, kC + 0x2000)
                         .ring());
  EXPECT_TRUE(r.races.empty());
}

}  // namespace
}  // namespace opscope
