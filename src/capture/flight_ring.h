// File: capture/flight_ring.h
// The flight recorder's file: a fixed layout of plain records in one
// memory-mapped file, so the child writes it with stores alone (no
// allocation, no system call on the hot path) and the parent reads it after
// the child is gone, whatever killed it: the kernel keeps the pages of a
// MAP_SHARED file mapping, SIGKILL included. The records are plain,
// trivially copyable structs; the fields several threads touch are written
// through std::atomic_ref.
//
//   [RingHeader][StreamRing x kMaxStreams][SyncRecord x kSyncSlots][maps text]
//
// Each stream's launches go round its own ring of `slots_per_stream`
// LaunchSlots (64 by default), so a busy stream cannot push a quiet one's
// history out. Event records and waits, copies and host synchronisations go
// round one shared ring of SyncRecords. Every record carries `seq`, one
// process-wide counter taken when the host enqueued it: the order the race
// check replays. A slot is valid only once its `committed` equals its seq + 1,
// written last; a slot torn by a crash mid-write reads as not committed.
//
//   FlightRingView view = OpenFlightRing("DIR/flight.ring");  // the parent
//   for (const LaunchSlot& s : view.launches()) ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "opscope/status.h"

namespace opscope {

inline constexpr uint64_t kFlightRingMagic = 0x31474e4952504f46ull;  // "FOPRING1"
inline constexpr uint32_t kFlightRingVersion = 1;
inline constexpr int kFlightMaxStreams = 16;
inline constexpr int kFlightSyncSlots = 1024;
inline constexpr int kFlightMaxTensors = 6;   // per side (inputs, outputs) of one launch
inline constexpr int kFlightMaxRanks = 8;
inline constexpr int kFlightMaxStack = 64;
inline constexpr size_t kFlightMapsBytes = 256 << 10;
inline constexpr int kFlightMaxThreadStacks = 8;  // threads whose stack a crash keeps (the faulting one first)

// Copies a NUL-terminated string into a fixed field, truncating.
template <size_t N>
void CopyField(char (&dst)[N], const char* src) {
  size_t i = 0;
  for (; src && src[i] && i + 1 < N; ++i) dst[i] = src[i];
  dst[i] = '\0';
}

struct FlightRange {
  uint64_t begin = 0, bytes = 0;
};

// A tensor as a launch saw it, summarised on its device (opscope_tensor_stats).
struct FlightTensor {
  char name[24] = {};
  int32_t dtype = -1;  // DType as int; -1: slot unused
  int32_t rank = 0;
  int64_t dims[kFlightMaxRanks] = {};
  uint64_t address = 0, bytes = 0;
  uint64_t fingerprint = 0;   // Fingerprint::Hash (inputs; host-readable tensors)
  int32_t has_stats = 0;      // 0: not summarised (sync points off, or no stats kernel for the device)
  int64_t count = 0, nan = 0, inf = 0;
  double min = 0, max = 0, mean = 0;
  // Where it went wrong, for host-readable tensors: an output's first NaN or
  // Inf (flat index), and for the inputs of that launch the range of the
  // same row (all dims but the last), so "row 3 is all zeros" can be said.
  int64_t first_bad = -1;
  int64_t row = -1;
  double row_min = 0, row_max = 0;
};

// kSide: a launch on a stream the op made for itself (Stream::Launch outside
// the dispatcher); its buffers are the op's tensors, its end is not seen.
enum class FlightState : int32_t { kEmpty = 0, kStarted = 1, kFinished = 2, kFailed = 3, kSide = 4 };

struct LaunchSlot {
  uint64_t committed = 0;  // seq + 1 once the slot is whole
  uint64_t seq = 0;          // the process-wide order of enqueue
  uint64_t dispatch_seq = 0; // the dispatcher's call number
  uint64_t op_id = 0;
  uint64_t instance_key = 0;  // op, attrs, input shapes and dtypes: the same in every process
  uint64_t input_fingerprint = 0;  // over the inputs' fingerprints
  char op[48] = {};
  char kernel[64] = {};
  char device[16] = {};
  int32_t stream_id = -1;
  int32_t host_tid = 0;       // the thread that launched it
  int64_t grid[3] = {}, block[3] = {};
  int32_t vector_width = 0;
  int32_t state = 0;  // FlightState
  int64_t start_ns = 0;       // steady_clock when enqueued
  int64_t end_ns = 0;  // when the dispatcher saw it finish; 0: never
  int32_t num_inputs = 0, num_outputs = 0;
  FlightTensor inputs[kFlightMaxTensors];
  FlightTensor outputs[kFlightMaxTensors];
  char attrs[160] = {};
  char error[256] = {};
};

struct StreamRing {
  uint64_t key = 0;  // 0: unused; else hash of (device, id) + 1
  char device[16] = {};
  int32_t stream_id = -1;
  uint64_t head = 0;  // launches ever written to this stream
};

enum class SyncKind : int32_t {
  kNone = 0, kRecord, kWait, kMemcpy, kStreamSync, kEventSync, kDeviceSync, kAllocate
};

struct SyncRecord {
  uint64_t committed = 0;
  uint64_t seq = 0;
  int32_t kind = 0;  // SyncKind
  char device[16] = {};
  int32_t stream_id = -1;
  uint64_t event = 0;          // the event's address (record, wait, event sync)
  FlightRange read, write;     // a copy's source and destination; an allocation's range (write)
  char op[48] = {};            // the op whose kernel issued it, "" when the host did
  uint64_t op_id = 0;
  int32_t host_tid = 0;
  int64_t time_ns = 0;
};

struct FlightStack {
  int32_t tid = 0;
  int32_t depth = 0;
  uint64_t pcs[kFlightMaxStack] = {};
};

// What the child's fault handler saw; written once, from the handler.
struct CrashRecord {
  int32_t written = 0;
  int32_t signal = 0, code = 0;
  uint64_t fault_address = 0;
  int32_t tid = 0;
  int64_t time_ns = 0;
  // The checked allocation (guard pages included) that holds the address.
  int32_t access = 0;  // 1 read, 2 write: the page fault's error code (x86-64), 0 unknown
  int32_t in_checked_allocation = 0;
  uint64_t alloc_begin = 0, alloc_bytes = 0;
  char alloc_label[64] = {};
  FlightStack stack;  // the faulting thread, faulting PC first (then return addresses)
  char message[256] = {};  // the checked allocator's one-line report, or std::terminate's what()
};

struct RingHeader {
  uint64_t magic = 0;
  uint32_t version = 0;
  uint32_t slots_per_stream = 0;
  int64_t pid = 0;
  int64_t start_ns = 0;            // steady_clock when the recorder started in the child
  int32_t sync_points = 0;
  int32_t checked_allocation = 0;
  uint64_t next_seq = 1;
  uint64_t sync_head = 0;
  uint64_t launches = 0;   // launches recorded in all
  // Time diagnose itself added in the child, each part a measured span.
  int64_t sync_wait_ns = 0;    // in the sync points it inserted
  int64_t summary_ns = 0;      // in tensor summaries
  int64_t record_ns = 0;       // in writing the ring
  uint64_t dropped_streams = 0;  // launches on streams past kFlightMaxStreams
  CrashRecord crash;
  uint64_t maps_bytes = 0;
  char program[256] = {};
};

// Bytes of a ring file with `slots` launch slots per stream.
size_t FlightRingBytes(uint32_t slots);
// Where each part lies in a mapping of the file.
StreamRing* RingStreams(void* base);
LaunchSlot* RingLaunches(void* base, uint32_t slots, int stream);
SyncRecord* RingSyncs(void* base, uint32_t slots);
char* RingMaps(void* base, uint32_t slots);

// The parent's copy of a ring, read after the child is gone: only committed
// records, in seq order.
struct FlightRingData {
  RingHeader header;
  std::vector<LaunchSlot> launches;  // every stream's, seq order
  std::vector<SyncRecord> syncs;
  std::string maps;
};
StatusOr<FlightRingData> ReadFlightRing(const std::string& path);

}  // namespace opscope
