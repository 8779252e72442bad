#include "capture/recorder.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <unordered_set>

#include "core/clock.h"
#include "core/hash_mix.h"

namespace opscope {

namespace {

void CopyName(char (&dst)[LaunchEntry::kNameChars], const std::string& src) {
  size_t n = std::min(src.size(), sizeof dst - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

std::atomic<uint64_t> next_recorder_id{1};

// The last few recorders this thread wrote to. Ids are never reused, so an
// entry of a destroyed Recorder can only miss, never alias.
struct ThreadCacheSlot {
  uint64_t recorder_id = 0;
  void* buffer = nullptr;
};
constexpr int kThreadCacheSlots = 4;
thread_local ThreadCacheSlot thread_cache[kThreadCacheSlots];
thread_local unsigned thread_cache_next = 0;

// Entries of a dispatch nested inside a reference kernel land after their
// parent's, so AfterLaunch looks back a short way for its own seq.
constexpr uint64_t kMaxNestingLookback = 64;

}  // namespace

const char* InternName(const std::string& name) {
  struct Slot {
    const char* key = nullptr;  // name.data() last seen here
    size_t size = 0;
    const char* interned = nullptr;
  };
  thread_local Slot cache[64];
  Slot& slot = cache[(reinterpret_cast<uintptr_t>(name.data()) >> 4) & 63];
  // The key's memory may have been freed and reused: confirm by content.
  if (slot.key == name.data() && slot.size == name.size() &&
      std::memcmp(slot.interned, name.data(), name.size()) == 0) {
    return slot.interned;
  }
  static std::mutex* mu = new std::mutex();
  static auto* names = new std::unordered_set<std::string>();  // never freed: entries point into it
  const char* interned;
  {
    std::lock_guard<std::mutex> lock(*mu);
    interned = names->insert(name).first->c_str();
  }
  slot = Slot{name.data(), name.size(), interned};
  return interned;
}

struct Recorder::ThreadBuffer {
  ThreadBuffer(std::thread::id owner_id, uint32_t idx, uint32_t max_chunks)
      : owner(owner_id), index(idx), chunks(new std::atomic<LaunchEntry*>[max_chunks]),
        capacity(uint64_t{max_chunks} * kChunkEntries) {
    for (uint32_t i = 0; i < max_chunks; ++i) chunks[i].store(nullptr, std::memory_order_relaxed);
  }
  ~ThreadBuffer() {
    for (uint64_t i = 0; i < capacity / kChunkEntries; ++i) delete[] chunks[i].load(std::memory_order_relaxed);
  }
  LaunchEntry& at(uint64_t i) const {
    return chunks[i / kChunkEntries].load(std::memory_order_acquire)[i % kChunkEntries];
  }

  struct PendingTimes {
    uint64_t index;
    std::shared_ptr<Event> start, end;
  };

  const std::thread::id owner;
  const uint32_t index;
  std::unique_ptr<std::atomic<LaunchEntry*>[]> chunks;
  const uint64_t capacity;
  // Written only by the owner thread (load + store, never RMW); read by Snapshot.
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> dropped{0};
  // Launches whose events were not yet reached at AfterLaunch; owner-only
  // until the producers are quiescent.
  std::vector<PendingTimes> pending;
};

Recorder::Recorder(Options options)
    : id_(next_recorder_id.fetch_add(1)),
      max_chunks_(std::max<uint32_t>(1, (options.max_entries_per_thread + kChunkEntries - 1) / kChunkEntries)) {}

Recorder::~Recorder() = default;

Recorder::ThreadBuffer* Recorder::BufferForThisThread() {
  for (const ThreadCacheSlot& slot : thread_cache) {
    if (slot.recorder_id == id_) return static_cast<ThreadBuffer*>(slot.buffer);
  }
  ThreadBuffer* tb = RegisterThread();
  thread_cache[thread_cache_next++ % kThreadCacheSlots] = ThreadCacheSlot{id_, tb};
  return tb;
}

Recorder::ThreadBuffer* Recorder::RegisterThread() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::thread::id me = std::this_thread::get_id();
  for (const auto& tb : threads_) {
    if (tb->owner == me) return tb.get();  // fell out of the small cache
  }
  threads_.push_back(std::make_unique<ThreadBuffer>(me, static_cast<uint32_t>(threads_.size()), max_chunks_));
  ThreadBuffer* tb = threads_.back().get();
  // The first chunk now, so a thread's first launch does not pay for it.
  tb->chunks[0].store(new LaunchEntry[kChunkEntries], std::memory_order_release);
  return tb;
}

void Recorder::BeforeLaunch(const LaunchRecord& rec) {
  ThreadBuffer* tb = BufferForThisThread();
  const uint64_t n = tb->count.load(std::memory_order_relaxed);
  if (n >= tb->capacity) {
    tb->dropped.store(tb->dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return;
  }
  std::atomic<LaunchEntry*>& chunk_slot = tb->chunks[n / kChunkEntries];
  LaunchEntry* chunk = chunk_slot.load(std::memory_order_relaxed);
  if (chunk == nullptr) {
    chunk = new LaunchEntry[kChunkEntries];  // once per kChunkEntries launches
    chunk_slot.store(chunk, std::memory_order_release);
  }
  LaunchEntry& e = chunk[n % kChunkEntries];

  e.seq = rec.seq;
  e.op_id = rec.op_id;
  e.op_name = rec.op ? InternName(rec.op->name) : "";
  e.device = rec.device;
  e.device_name = rec.device ? InternName(rec.device->name()) : "host";
  e.stream_id = rec.stream_id;
  e.thread_index = tb->index;
  e.host_enqueue_ns = rec.host_enqueue_ns;
  e.host_done_ns = -1;
  e.device_start_ns = -1;
  e.device_end_ns = -1;
  CopyName(e.kernel, rec.kernel);
  e.completed = false;
  e.num_launches = 0;
  e.total_launches = 0;

  // Per-input fingerprints line up with reads only when no optional input was omitted.
  const bool aligned = rec.fingerprints.size() == rec.reads.size();
  uint64_t inputs_hash = 0;
  for (const Fingerprint& f : rec.fingerprints) inputs_hash = HashMix(inputs_hash, f.Hash());
  e.inputs_hash = inputs_hash;
  e.total_reads = static_cast<uint16_t>(std::min<size_t>(rec.reads.size(), UINT16_MAX));
  e.num_reads = static_cast<uint16_t>(std::min<size_t>(rec.reads.size(), LaunchEntry::kMaxBuffers));
  for (int i = 0; i < e.num_reads; ++i) {
    e.reads[i] = {rec.reads[i].ptr, rec.reads[i].bytes, aligned ? rec.fingerprints[i].Hash() : 0};
  }
  e.total_writes = static_cast<uint16_t>(std::min<size_t>(rec.writes.size(), UINT16_MAX));
  e.num_writes = static_cast<uint16_t>(std::min<size_t>(rec.writes.size(), LaunchEntry::kMaxBuffers));
  for (int i = 0; i < e.num_writes; ++i) e.writes[i] = {rec.writes[i].ptr, rec.writes[i].bytes, 0};

  tb->count.store(n + 1, std::memory_order_release);
}

void Recorder::AfterLaunch(const LaunchRecord& rec) {
  ThreadBuffer* tb = BufferForThisThread();
  const uint64_t n = tb->count.load(std::memory_order_relaxed);
  const uint64_t stop = n > kMaxNestingLookback ? n - kMaxNestingLookback : 0;
  for (uint64_t i = n; i > stop; --i) {
    LaunchEntry& e = tb->at(i - 1);
    if (e.seq != rec.seq || e.completed) continue;
    e.completed = true;
    e.host_done_ns = SteadyNowNs();
    e.total_launches = static_cast<uint16_t>(std::min<size_t>(rec.launches.size(), UINT16_MAX));
    e.num_launches = static_cast<uint16_t>(std::min<size_t>(rec.launches.size(), LaunchEntry::kMaxLaunches));
    for (int k = 0; k < e.num_launches; ++k) {
      const KernelLaunchInfo& l = rec.launches[k];
      LaunchEntry::Launch& out = e.launches[k];
      CopyName(out.name, l.name);
      out.grid[0] = l.config.grid.x, out.grid[1] = l.config.grid.y, out.grid[2] = l.config.grid.z;
      out.block[0] = l.config.block.x, out.block[1] = l.config.block.y, out.block[2] = l.config.block.z;
      out.vector_width = l.config.vector_width;
      out.registers_per_thread = l.registers_per_thread;
      out.shared_bytes_per_block = l.shared_bytes_per_block;
      out.active_blocks_per_sm = l.active_blocks_per_sm;
      out.occupancy = l.occupancy;
    }
    if (rec.start && rec.end) {
      if (rec.start->Query() && rec.end->Query()) {
        auto s = rec.start->TimestampNs();
        auto t = rec.end->TimestampNs();
        if (s.ok() && t.ok()) e.device_start_ns = *s, e.device_end_ns = *t;
      } else {
        tb->pending.push_back({i - 1, rec.start, rec.end});  // asynchronous launch: read at Snapshot
      }
    }
    return;
  }
  // Not found: its BeforeLaunch was dropped (buffer full), already counted.
}

RecorderSnapshot Recorder::Snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  RecorderSnapshot snap;
  size_t total = 0;
  for (const auto& tb : threads_) total += tb->count.load(std::memory_order_acquire);
  snap.entries.reserve(total);
  for (const auto& tb : threads_) {
    const uint64_t n = tb->count.load(std::memory_order_acquire);
    std::erase_if(tb->pending, [&](ThreadBuffer::PendingTimes& p) {
      if (p.index >= n) return true;
      if (!p.start->Query() || !p.end->Query()) return false;
      auto s = p.start->TimestampNs();
      auto t = p.end->TimestampNs();
      if (s.ok() && t.ok()) tb->at(p.index).device_start_ns = *s, tb->at(p.index).device_end_ns = *t;
      return true;
    });
    for (uint64_t i = 0; i < n; ++i) snap.entries.push_back(tb->at(i));
    snap.dropped += tb->dropped.load(std::memory_order_relaxed);
    if (n > 0 || tb->dropped.load(std::memory_order_relaxed) > 0) ++snap.threads;
  }
  std::sort(snap.entries.begin(), snap.entries.end(),
            [](const LaunchEntry& a, const LaunchEntry& b) { return a.seq < b.seq; });
  return snap;
}

void Recorder::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& tb : threads_) {
    tb->count.store(0, std::memory_order_release);
    tb->dropped.store(0, std::memory_order_relaxed);
    tb->pending.clear();
  }
}

uint64_t Recorder::ApproximateCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const auto& tb : threads_) n += tb->count.load(std::memory_order_relaxed);
  return n;
}

}  // namespace opscope
