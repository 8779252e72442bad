// File: capture/recorder.h
// A DispatchHook that keeps one fixed-size LaunchEntry per op launch, for
// profile, diagnose and the model timeline to read afterwards.
//
//   auto recorder = std::make_shared<Recorder>();
//   int hook = Dispatcher::Global().AddHook(recorder);
//   ... run ops, on any number of threads ...
//   // quiescent: every thread that dispatched has returned from Run (joined,
//   // or handed over through a mutex/future) and its streams are synchronized.
//   RecorderSnapshot snap = recorder->Snapshot();
//   Dispatcher::Global().RemoveHook(hook);
//
// Writing is lock-free and wait-free: each thread appends to its own chunked
// buffer (registered once, under a mutex, on the thread's first launch) with
// plain stores and one release store of its count; no atomic read-modify-write,
// no heap allocation per entry (a chunk of kChunkEntries is allocated when the
// previous one fills, and kept across Clear()).
//
// THE READING RULE: Snapshot() and Clear() may run only while the producers
// are quiescent. An entry is published at BeforeLaunch and completed in place
// at AfterLaunch (launch configs, device times), so reading while a launch is
// in flight could see a half-completed entry. A launch whose kernel failed
// never gets its AfterLaunch: its entry stays with completed == false, which
// is what a diagnosis wants to see.
//
// Capacity is bounded per thread (Options::max_entries_per_thread); launches
// past it are counted in `dropped`, never silently lost.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "capture/dispatcher.h"

namespace opscope {

// One recorded launch. Plain data: copying it is a memcpy.
struct LaunchEntry {
  static constexpr int kMaxBuffers = 8;       // per direction; more are counted, not kept
  static constexpr int kMaxLaunches = 4;      // kernel launches kept per op call
  static constexpr int kNameChars = 48;       // kernel names are cut to fit (NUL included)

  struct BufferRef {
    const void* ptr;
    uint64_t bytes;
    uint64_t fingerprint;  // Fingerprint::Hash() of the input; 0 for writes / not computed
  };
  struct Launch {
    char name[kNameChars];
    int64_t grid[3];
    int64_t block[3];
    int32_t vector_width;
    int32_t registers_per_thread;    // -1: a host kernel, or not known
    int32_t active_blocks_per_sm;    // -1: likewise
    int64_t shared_bytes_per_block;  // -1: likewise
    double occupancy;                // -1: likewise
  };

  uint64_t seq;
  uint64_t op_id;
  uint64_t inputs_hash;      // combined fingerprint hash of all inputs (0: none computed)
  const char* op_name;       // interned: valid for the life of the process
  const char* device_name;   // interned; "host" for a reference run
  const Device* device;      // nullptr for a reference run
  int32_t stream_id;
  uint32_t thread_index;     // order in which recording threads registered
  int64_t host_enqueue_ns;   // steady_clock
  int64_t host_done_ns;      // steady_clock at AfterLaunch; -1 until then
  int64_t device_start_ns;   // device clock, once the start event was reached; -1 otherwise
  int64_t device_end_ns;
  char kernel[kNameChars];   // the kernel's registered name
  uint16_t num_reads, num_writes, num_launches;        // kept inline
  uint16_t total_reads, total_writes, total_launches;  // seen (>= kept)
  bool completed;            // AfterLaunch was seen
  BufferRef reads[kMaxBuffers];
  BufferRef writes[kMaxBuffers];
  Launch launches[kMaxLaunches];

  bool has_device_times() const { return device_start_ns >= 0 && device_end_ns >= 0; }
  double device_us() const { return has_device_times() ? (device_end_ns - device_start_ns) / 1e3 : -1.0; }
};

struct RecorderSnapshot {
  std::vector<LaunchEntry> entries;  // ordered by seq
  uint64_t dropped = 0;              // launches not kept: a thread's buffer was full
  int threads = 0;                   // threads that recorded at least once
};

class Recorder : public DispatchHook {
 public:
  static constexpr uint32_t kChunkEntries = 256;

  struct Options {
    uint32_t max_entries_per_thread = 1u << 16;  // rounded up to whole chunks
  };

  Recorder() : Recorder(Options{}) {}
  explicit Recorder(Options options);
  ~Recorder() override;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void BeforeLaunch(const LaunchRecord& rec) override;
  void AfterLaunch(const LaunchRecord& rec) override;

  // Both only while the producers are quiescent (see the file comment).
  // Snapshot also reads device timestamps of events reached since AfterLaunch
  // (asynchronous launches).
  RecorderSnapshot Snapshot();
  void Clear();  // drops every entry and the dropped count; keeps the chunks

  // Cheap running totals, readable at any time (they may lag by a launch).
  uint64_t ApproximateCount() const;

 private:
  struct ThreadBuffer;
  ThreadBuffer* BufferForThisThread();
  ThreadBuffer* RegisterThread();

  const uint64_t id_;  // unique per Recorder, never reused: keys the thread-local cache
  const uint32_t max_chunks_;
  mutable std::mutex mu_;  // guards threads_ (registration and reading)
  std::vector<std::unique_ptr<ThreadBuffer>> threads_;
};

// The process-wide copy of a name, for entries that outlive the op or device
// that named it (a plugin can be unloaded). Cached per thread: cheap on repeat.
const char* InternName(const std::string& name);

}  // namespace opscope
