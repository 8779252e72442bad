#include "capture/flight_recorder.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>

#include "capture/op_instance.h"
#include "core/clock.h"

namespace opscope {
namespace {

int32_t ThisTid() { return static_cast<int32_t>(syscall(SYS_gettid)); }

template <typename T>
std::atomic_ref<T> Atomic(T& v) {
  return std::atomic_ref<T>(v);
}

uint64_t StreamKey(const char* device, int id) {
  uint64_t h = 1469598103934665603ull;
  for (const char* p = device; p && *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  h ^= static_cast<uint64_t>(static_cast<uint32_t>(id)) * 0x9e3779b97f4a7c15ull;
  return h | 1;  // never 0: 0 marks an unused stream ring
}

// Adds the time since `t0` to a counter of the header: what diagnose costs.
struct Spent {
  int64_t& counter;
  int64_t t0 = SteadyNowNs();
  ~Spent() { Atomic(counter).fetch_add(SteadyNowNs() - t0, std::memory_order_relaxed); }
};

const char* DeviceNameOf(const LaunchRecord& rec) { return rec.device ? rec.device->name().c_str() : "host"; }

FlightRecorder* g_active = nullptr;
std::shared_ptr<FlightRecorder>* g_keep = nullptr;  // the recorder the environment started

// The slot this thread started last: AfterLaunch follows its BeforeLaunch on
// the same thread, so the scan of the stream's ring is rarely needed.
thread_local LaunchSlot* t_last_slot = nullptr;

}  // namespace

size_t FlightRingBytes(uint32_t slots) {
  return sizeof(RingHeader) + sizeof(StreamRing) * kFlightMaxStreams +
         sizeof(LaunchSlot) * kFlightMaxStreams * slots + sizeof(SyncRecord) * kFlightSyncSlots + kFlightMapsBytes;
}

StreamRing* RingStreams(void* base) {
  return reinterpret_cast<StreamRing*>(static_cast<char*>(base) + sizeof(RingHeader));
}
LaunchSlot* RingLaunches(void* base, uint32_t slots, int stream) {
  char* p = reinterpret_cast<char*>(RingStreams(base) + kFlightMaxStreams);
  return reinterpret_cast<LaunchSlot*>(p) + static_cast<size_t>(stream) * slots;
}
SyncRecord* RingSyncs(void* base, uint32_t slots) {
  return reinterpret_cast<SyncRecord*>(RingLaunches(base, slots, kFlightMaxStreams));
}
char* RingMaps(void* base, uint32_t slots) {
  return reinterpret_cast<char*>(RingSyncs(base, slots) + kFlightSyncSlots);
}

StatusOr<std::shared_ptr<FlightRecorder>> FlightRecorder::Open(const std::string& path,
                                                              FlightRecorderOptions options) {
  if (options.slots == 0 || options.slots > 4096) {
    return InvalidArgumentError("flight recorder: slots per stream must be in [1, 4096], got " +
                                std::to_string(options.slots));
  }
  const size_t bytes = FlightRingBytes(options.slots);
  // A new file of our own, never one that is there already: O_EXCL with
  // O_NOFOLLOW neither truncates what a link planted at the path points at
  // nor shares a ring with another process. Whoever asks for a ring removes an
  // earlier one first (diagnose, the race check).
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    return FailedPreconditionError(path + ": cannot create the flight recorder's ring: something is there already "
                                   "(another process's ring, or a link): never written through");
  }
  if (fd < 0) return InvalidArgumentError(path + ": cannot create the flight recorder's ring: " + std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int e = errno;
    close(fd);
    return InternalError(path + ": cannot size the ring to " + std::to_string(bytes) + " bytes: " + std::strerror(e));
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);  // the mapping keeps the file
  if (base == MAP_FAILED) return InternalError(path + ": cannot map the ring: " + std::strerror(errno));
  return std::shared_ptr<FlightRecorder>(new FlightRecorder(base, bytes, options));
}

FlightRecorder::FlightRecorder(void* base, size_t bytes, FlightRecorderOptions options)
    : base_(base), bytes_(bytes), options_(options) {
  // The file is fresh (truncated): every byte is zero, every slot empty.
  RingHeader& h = header();
  h.version = kFlightRingVersion;
  h.slots_per_stream = options_.slots;
  h.pid = getpid();
  h.start_ns = SteadyNowNs();
  h.sync_points = Dispatcher::Global().sync_points() ? 1 : 0;
  h.next_seq = 1;
  std::ifstream cmd("/proc/self/cmdline", std::ios::binary);
  std::string line((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
  for (char& c : line) c = c == '\0' ? ' ' : c;
  CopyField(h.program, line.c_str());
  Atomic(h.magic).store(kFlightRingMagic, std::memory_order_release);  // last: the header is whole
}

FlightRecorder::~FlightRecorder() {
  if (g_active == this) g_active = nullptr;
  munmap(base_, bytes_);
}

FlightRecorder* FlightRecorder::Active() { return g_active; }

LaunchSlot* FlightRecorder::SlotFor(const char* device, int stream_id, uint64_t seq) {
  const uint64_t key = StreamKey(device, stream_id);
  StreamRing* rings = RingStreams(base_);
  for (int i = 0; i < kFlightMaxStreams; ++i) {
    uint64_t expected = 0;
    auto k = Atomic(rings[i].key);
    if (k.load(std::memory_order_acquire) != key && !k.compare_exchange_strong(expected, key)) {
      if (expected != key) continue;  // another stream's ring
    }
    if (rings[i].stream_id < 0) {
      CopyField(rings[i].device, device);
      rings[i].stream_id = stream_id;
    }
    const uint64_t n = Atomic(rings[i].head).fetch_add(1, std::memory_order_relaxed);
    LaunchSlot* slot = RingLaunches(base_, options_.slots, i) + n % options_.slots;
    Atomic(slot->committed).store(0, std::memory_order_release);  // torn until rewritten
    std::memset(static_cast<void*>(reinterpret_cast<char*>(slot) + sizeof(uint64_t)), 0,
                sizeof(LaunchSlot) - sizeof(uint64_t));
    slot->seq = seq;
    return slot;
  }
  Atomic(header().dropped_streams).fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

LaunchSlot* FlightRecorder::FindStarted(uint64_t dispatch_seq, const char* device, int stream_id) {
  // Only a slot of this recorder's mapping (another may have been unmapped since).
  const char* lo = static_cast<const char*>(base_);
  if (LaunchSlot* last = t_last_slot; last && reinterpret_cast<const char*>(last) >= lo &&
      reinterpret_cast<const char*>(last) < lo + bytes_ && last->dispatch_seq == dispatch_seq &&
      Atomic(last->committed).load(std::memory_order_acquire) != 0 && last->stream_id == stream_id &&
      std::strncmp(last->device, device, sizeof last->device) == 0) {
    return last;
  }
  const uint64_t key = StreamKey(device, stream_id);
  StreamRing* rings = RingStreams(base_);
  for (int i = 0; i < kFlightMaxStreams; ++i) {
    if (Atomic(rings[i].key).load(std::memory_order_acquire) != key) continue;
    LaunchSlot* slots = RingLaunches(base_, options_.slots, i);
    for (uint32_t j = 0; j < options_.slots; ++j) {
      if (Atomic(slots[j].committed).load(std::memory_order_acquire) != 0 && slots[j].dispatch_seq == dispatch_seq) {
        return &slots[j];
      }
    }
  }
  return nullptr;
}

void FlightRecorder::Summarise(const Tensor& t, FlightTensor& out, bool stats, Stream* stream) {
  if (!t.defined()) return;
  out.dtype = static_cast<int32_t>(t.dtype());
  out.rank = static_cast<int32_t>(std::min<int64_t>(t.rank(), kFlightMaxRanks));
  for (int d = 0; d < out.rank; ++d) out.dims[d] = t.dim(d);
  out.address = reinterpret_cast<uint64_t>(t.raw_data());
  out.bytes = t.nbytes();
  if (!stats || !options_.tensor_summaries || t.numel() == 0) return;
  Spent spent{header().summary_ns};
  PauseStreamObserver not_the_programs;  // the summary's copies and waits are ours
  Device* device = t.on_host() && t.device() == nullptr ? nullptr : t.device();
  auto run = Dispatcher::Global().Run("opscope_tensor_stats", {t}, {},
                                      RunOptions{.device = device, .stream = device ? stream : nullptr, .fingerprint = false});
  if (!run.ok()) return;  // no stats kernel for this dtype or device: shapes only
  auto host = ToHost(run->outputs[0]);
  if (!host.ok()) return;
  const double* s = host->data<double>();
  out.count = static_cast<int64_t>(s[0]);
  out.nan = static_cast<int64_t>(s[1]);
  out.inf = static_cast<int64_t>(s[2]);
  out.min = s[3], out.max = s[4], out.mean = s[5];
  out.has_stats = 1;
}

void FlightRecorder::BeforeLaunch(const LaunchRecord& rec) {
  const uint64_t seq = Atomic(header().next_seq).fetch_add(1, std::memory_order_relaxed);
  const char* device = DeviceNameOf(rec);
  LaunchSlot* slot;
  {
    Spent spent{header().record_ns};
    slot = SlotFor(device, rec.stream_id, seq);
    if (slot == nullptr) return;
    slot->dispatch_seq = rec.seq;
    slot->op_id = rec.op_id;
    CopyField(slot->op, rec.op ? rec.op->name.c_str() : "");
    CopyField(slot->kernel, rec.kernel.c_str());
    CopyField(slot->device, device);
    slot->stream_id = rec.stream_id;
    slot->host_tid = ThisTid();
    slot->start_ns = rec.host_enqueue_ns;
    slot->state = static_cast<int32_t>(FlightState::kStarted);
    if (rec.attrs) FormatAttrs(*rec.attrs, slot->attrs, sizeof slot->attrs);
  }
  // Inputs summarised in the launch's stream order (after the waits queued
  // before it), at sync points: what the kernel is about to read.
  const bool stats = Dispatcher::Global().sync_points();
  if (rec.inputs) {
    uint64_t combined = kFingerprintBasis;
    slot->num_inputs = static_cast<int32_t>(std::min<size_t>(rec.inputs->size(), kFlightMaxTensors));
    for (size_t i = 0; i < rec.inputs->size(); ++i) {
      const uint64_t fp = i < rec.fingerprints.size() && (*rec.inputs)[i].defined() ? rec.fingerprints[i].Hash() : 0;
      combined = CombineFingerprint(combined, fp);
      if (i >= static_cast<size_t>(kFlightMaxTensors)) continue;
      FlightTensor& t = slot->inputs[i];
      if (rec.op && !rec.op->inputs.empty()) CopyField(t.name, rec.op->inputs[std::min(i, rec.op->inputs.size() - 1)].name.c_str());
      Summarise((*rec.inputs)[i], t, stats, rec.stream);
      t.fingerprint = fp;
    }
    slot->input_fingerprint = combined;
    if (rec.op && rec.attrs) slot->instance_key = OpInstanceKey(rec.op->name, *rec.attrs, *rec.inputs);
  }
  if (rec.outputs) {
    slot->num_outputs = static_cast<int32_t>(std::min<size_t>(rec.outputs->size(), kFlightMaxTensors));
    for (int i = 0; i < slot->num_outputs; ++i) {
      FlightTensor& t = slot->outputs[i];
      if (rec.op && !rec.op->outputs.empty()) CopyField(t.name, rec.op->outputs[std::min<size_t>(i, rec.op->outputs.size() - 1)].name.c_str());
      Summarise((*rec.outputs)[i], t, false, nullptr);  // allocated, not yet written
    }
  }
  Atomic(slot->committed).store(seq + 1, std::memory_order_release);
  Atomic(header().launches).fetch_add(1, std::memory_order_relaxed);
  t_last_slot = slot;
  current_.store(slot, std::memory_order_release);
}

void FlightRecorder::Finish(const LaunchRecord& rec, FlightState state, const Status* error) {
  LaunchSlot* slot = FindStarted(rec.seq, DeviceNameOf(rec), rec.stream_id);
  if (slot == nullptr) return;
  LaunchSlot* in_progress = slot;
  current_.compare_exchange_strong(in_progress, nullptr, std::memory_order_acq_rel);  // its kernel function returned
  Atomic(header().sync_wait_ns).fetch_add(rec.sync_point_ns, std::memory_order_relaxed);
  // The outputs are written, and an asynchronous launch's list of kernel
  // launches filled (by the stream thread), once the kernel's end event is
  // reached: before that the list is being written on the other thread, and
  // reading it raced with the write (a crash now and then on a 100,000-node
  // model with two streams).
  const bool done = state == FlightState::kFinished && (rec.end == nullptr || rec.end->Query());
  {
    Spent spent{header().record_ns};
    static const std::vector<KernelLaunchInfo> kNone;
    const std::vector<KernelLaunchInfo>& launches =
        !rec.launches.empty() || !rec.async_launches ? rec.launches : done ? *rec.async_launches : kNone;
    if (!launches.empty()) {
      const LaunchConfig& c = launches.back().config;
      slot->grid[0] = c.grid.x, slot->grid[1] = c.grid.y, slot->grid[2] = c.grid.z;
      slot->block[0] = c.block.x, slot->block[1] = c.block.y, slot->block[2] = c.block.z;
      slot->vector_width = c.vector_width;
    }
    if (error) CopyField(slot->error, error->ToString().c_str());
  }
  if (done && rec.outputs) {
    for (int i = 0; i < slot->num_outputs; ++i) {
      Summarise((*rec.outputs)[i], slot->outputs[i], true, rec.stream);
      if (slot->outputs[i].nan + slot->outputs[i].inf > 0 && rec.inputs) LocateFirstBad(rec, *slot, i);
    }
  }
  if (state != FlightState::kFinished || done) {
    Atomic(slot->end_ns).store(SteadyNowNs(), std::memory_order_relaxed);
    Atomic(slot->state).store(static_cast<int32_t>(state), std::memory_order_release);
  }
  // An asynchronous launch not yet reached stays "started": the parent asks
  // its end event's stream order (a later record on the same stream that
  // finished) before calling it never finished.
}

// Host-readable tensors only (a scan on the host): the first non-finite
// element of output `o`, and each input's range over that element's row.
void FlightRecorder::LocateFirstBad(const LaunchRecord& rec, LaunchSlot& slot, int o) {
  const Tensor& out = (*rec.outputs)[o];
  if (!out.on_host() || !out.is_contiguous() || out.rank() == 0) return;
  Spent spent{header().summary_ns};
  const int64_t n = out.numel();
  int64_t bad = -1;
  for (int64_t i = 0; i < n && bad < 0; ++i) {
    if (!std::isfinite(out.FlatGetAsDouble(i))) bad = i;
  }
  if (bad < 0) return;
  FlightTensor& ft = slot.outputs[o];
  ft.first_bad = bad;
  const int64_t inner = out.dim(out.rank() - 1);
  const int64_t row = inner > 0 ? bad / inner : 0;
  ft.row = row;
  for (int i = 0; i < slot.num_inputs; ++i) {
    const Tensor& in = (*rec.inputs)[i];
    if (!in.defined() || !in.on_host() || !in.is_contiguous() || in.rank() == 0) continue;
    const int64_t in_inner = in.dim(in.rank() - 1);
    if (in_inner <= 0 || in.numel() / in_inner != n / std::max<int64_t>(inner, 1)) continue;  // rows do not line up
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t k = row * in_inner; k < (row + 1) * in_inner; ++k) {
      const double v = in.FlatGetAsDouble(k);
      lo = std::min(lo, v), hi = std::max(hi, v);
    }
    slot.inputs[i].row = row;
    slot.inputs[i].row_min = lo;
    slot.inputs[i].row_max = hi;
  }
}

void FlightRecorder::AfterLaunch(const LaunchRecord& rec) { Finish(rec, FlightState::kFinished, nullptr); }

void FlightRecorder::LaunchFailed(const LaunchRecord& rec, const Status& st) {
  Finish(rec, FlightState::kFailed, &st);
}

void FlightRecorder::CallRejected(const LaunchRecord& rec, const Status& st) {
  BeforeLaunch(rec);  // op, inputs and attrs; no stream (-1)
  LaunchSlot* slot = FindStarted(rec.seq, DeviceNameOf(rec), rec.stream_id);
  if (slot == nullptr) return;
  CopyField(slot->error, st.ToString().c_str());
  Atomic(slot->end_ns).store(SteadyNowNs(), std::memory_order_relaxed);
  Atomic(slot->state).store(static_cast<int32_t>(FlightState::kFailed), std::memory_order_release);
}

void FlightRecorder::WriteSync(SyncKind kind, const char* device, int stream_id, uint64_t event, FlightRange read,
                               FlightRange write) {
  Spent spent{header().record_ns};
  const uint64_t seq = Atomic(header().next_seq).fetch_add(1, std::memory_order_relaxed);
  const uint64_t n = Atomic(header().sync_head).fetch_add(1, std::memory_order_relaxed);
  SyncRecord* r = RingSyncs(base_, options_.slots) + n % kFlightSyncSlots;
  Atomic(r->committed).store(0, std::memory_order_release);
  r->seq = seq;
  r->kind = static_cast<int32_t>(kind);
  CopyField(r->device, device ? device : "");
  r->stream_id = stream_id;
  r->event = event;
  r->read = read;
  r->write = write;
  const RunningKernel* k = CurrentRunningKernel();
  CopyField(r->op, k ? k->op : "");
  r->op_id = k ? k->op_id : 0;
  r->host_tid = ThisTid();
  r->time_ns = SteadyNowNs();
  Atomic(r->committed).store(seq + 1, std::memory_order_release);
}

void FlightRecorder::OnRecord(const StreamRef& s, const void* event) {
  WriteSync(SyncKind::kRecord, s.device, s.id, reinterpret_cast<uint64_t>(event), {}, {});
}
void FlightRecorder::OnWait(const StreamRef& s, const void* event) {
  WriteSync(SyncKind::kWait, s.device, s.id, reinterpret_cast<uint64_t>(event), {}, {});
}
void FlightRecorder::OnMemcpy(const StreamRef& s, void* dst, const void* src, size_t bytes, CopyKind) {
  WriteSync(SyncKind::kMemcpy, s.device, s.id, 0, {reinterpret_cast<uint64_t>(src), bytes},
            {reinterpret_cast<uint64_t>(dst), bytes});
}
void FlightRecorder::OnStreamSynchronize(const StreamRef& s) {
  if (ConsumeInsertedStreamSync()) return;  // a sync point, not the program's
  WriteSync(SyncKind::kStreamSync, s.device, s.id, 0, {}, {});
}
void FlightRecorder::OnEventSynchronize(const void* event) {
  WriteSync(SyncKind::kEventSync, "", -1, reinterpret_cast<uint64_t>(event), {}, {});
}
void FlightRecorder::OnLaunch(const StreamRef& s, const char* kernel) {
  const uint64_t seq = Atomic(header().next_seq).fetch_add(1, std::memory_order_relaxed);
  Spent spent{header().record_ns};
  // The op whose kernel function made this launch: this thread's call in
  // progress, else the one started last.
  LaunchSlot* op = t_last_slot;
  if (op == nullptr || Atomic(op->state).load(std::memory_order_acquire) != static_cast<int32_t>(FlightState::kStarted)) {
    op = current_.load(std::memory_order_acquire);
  }
  LaunchSlot* slot = SlotFor(s.device, s.id, seq);
  if (slot == nullptr) return;
  if (op != nullptr && op != slot) {
    slot->op_id = op->op_id;
    slot->instance_key = op->instance_key;
    slot->input_fingerprint = op->input_fingerprint;
    std::memcpy(slot->op, op->op, sizeof slot->op);
    std::memcpy(slot->attrs, op->attrs, sizeof slot->attrs);
    // Its buffers are not known: the op's tensors stand for them (and the
    // race check adds the allocations the op made before it).
    slot->num_inputs = op->num_inputs;
    slot->num_outputs = op->num_outputs;
    std::memcpy(static_cast<void*>(slot->inputs), op->inputs, sizeof slot->inputs);
    std::memcpy(static_cast<void*>(slot->outputs), op->outputs, sizeof slot->outputs);
  }
  CopyField(slot->kernel, kernel);
  CopyField(slot->device, s.device);
  slot->stream_id = s.id;
  slot->host_tid = ThisTid();
  slot->start_ns = SteadyNowNs();
  slot->state = static_cast<int32_t>(FlightState::kSide);
  Atomic(slot->committed).store(seq + 1, std::memory_order_release);
  Atomic(header().launches).fetch_add(1, std::memory_order_relaxed);
}

void FlightRecorder::OnAllocate(const char* device, const void* ptr, size_t bytes) {
  WriteSync(SyncKind::kAllocate, device, -1, 0, {}, {reinterpret_cast<uint64_t>(ptr), bytes});
}
void FlightRecorder::OnDeviceSynchronize(const char* device) {
  WriteSync(SyncKind::kDeviceSync, device, -1, 0, {}, {});
}

namespace {

// The diagnosed program's recorder, from the environment at load time.
[[maybe_unused]] const bool started_from_environment = [] {
  const char* dir = std::getenv(kDiagnoseEnv);
  if (dir == nullptr || *dir == '\0') return false;
  const char* pid = std::getenv(kDiagnosePidEnv);
  if (pid == nullptr || std::strtoll(pid, nullptr, 10) != getpid()) return false;  // a program it started
  FlightRecorderOptions options;
  if (const char* slots = std::getenv(kDiagnoseSlotsEnv)) options.slots = static_cast<uint32_t>(std::strtoul(slots, nullptr, 10));
  const char* sync = std::getenv(kDiagnoseSyncEnv);
  Dispatcher::Global().SetSyncPoints(sync == nullptr || std::string_view(sync) != "0");
  auto rec = FlightRecorder::Open(std::string(dir) + "/" + kFlightRingFile, options);
  if (!rec.ok()) {
    std::fprintf(stderr, "opscope: %s=%s: %s; recording nothing\n", kDiagnoseEnv, dir, rec.status().ToString().c_str());
    return false;
  }
  // Never destroyed (a crash at exit is diagnosed too), and held by a
  // global, so LeakSanitizer sees it reachable at exit.
  g_keep = new std::shared_ptr<FlightRecorder>(std::move(rec).value());
  auto* keep = g_keep;
  g_active = keep->get();
  const char* checked = std::getenv("OPSCOPE_CHECKED_ALLOCATION");
  g_active->header().checked_allocation = checked && std::string_view(checked) == "1";
  Dispatcher::Global().AddHook(*keep);
  SetStreamObserver(keep->get());
  InstallFlightCrashHandlers(&g_active->header(), RingMaps(&g_active->header(), options.slots), kFlightMapsBytes);
  return true;
}();

}  // namespace
}  // namespace opscope
