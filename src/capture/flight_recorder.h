// File: capture/flight_recorder.h
// The flight recorder of `ops-debug diagnose`: inside the supervised program,
// it keeps the last launches of every stream, the program's event records,
// waits, copies and synchronisations, and what the fault handler saw, in a
// memory-mapped file the supervising parent reads once the program is gone
// (capture/flight_ring.h has the layout).
//
// Like a capture session, it starts from the environment at load time, so
// any program on libopscope is diagnosed with no change to its code:
//   OPSCOPE_DIAGNOSE=DIR            the ring is DIR/flight.ring
//   OPSCOPE_DIAGNOSE_PID=PID        only the process with this pid records
//                                   (not the programs it starts in turn)
//   OPSCOPE_DIAGNOSE_SLOTS=64       launches kept per stream
//   OPSCOPE_DIAGNOSE_SYNC=1|0       sync points (Dispatcher::SetSyncPoints)
//   OPSCOPE_CHECKED_ALLOCATION=1    guard pages on cpu devices (device/cpu/cpu_device.h)
//
// The hot path (a launch's two records) stores into its slot and allocates
// nothing; tensor summaries, taken at sync points only, run the device's
// opscope_tensor_stats kernel.
//
//   auto rec = FlightRecorder::Open("DIR/flight.ring", {.slots = 64});
//   Dispatcher::Global().AddHook(*rec);  SetStreamObserver(rec->get());
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "capture/dispatcher.h"
#include "capture/flight_ring.h"
#include "device/stream_observer.h"

namespace opscope {

inline constexpr char kDiagnoseEnv[] = "OPSCOPE_DIAGNOSE";
inline constexpr char kDiagnosePidEnv[] = "OPSCOPE_DIAGNOSE_PID";
inline constexpr char kDiagnoseSlotsEnv[] = "OPSCOPE_DIAGNOSE_SLOTS";
inline constexpr char kDiagnoseSyncEnv[] = "OPSCOPE_DIAGNOSE_SYNC";
inline constexpr char kFlightRingFile[] = "flight.ring";

struct FlightRecorderOptions {
  uint32_t slots = 64;
  bool tensor_summaries = true;  // at sync points (inputs before, outputs after the kernel)
};

class FlightRecorder : public DispatchHook, public StreamObserver {
 public:
  // Creates (or truncates) the ring file at `path` and maps it.
  static StatusOr<std::shared_ptr<FlightRecorder>> Open(const std::string& path, FlightRecorderOptions options);
  ~FlightRecorder() override;

  void BeforeLaunch(const LaunchRecord& rec) override;
  void AfterLaunch(const LaunchRecord& rec) override;
  void LaunchFailed(const LaunchRecord& rec, const Status& st) override;
  void CallRejected(const LaunchRecord& rec, const Status& st) override;

  void OnRecord(const StreamRef& s, const void* event) override;
  void OnWait(const StreamRef& s, const void* event) override;
  void OnMemcpy(const StreamRef& s, void* dst, const void* src, size_t bytes, CopyKind kind) override;
  void OnStreamSynchronize(const StreamRef& s) override;
  void OnEventSynchronize(const void* event) override;
  void OnDeviceSynchronize(const char* device) override;
  void OnAllocate(const char* device, const void* ptr, size_t bytes) override;
  void OnLaunch(const StreamRef& s, const char* kernel) override;

  RingHeader& header() { return *static_cast<RingHeader*>(base_); }
  // The recorder the environment started in this process, or nullptr.
  static FlightRecorder* Active();

 private:
  FlightRecorder(void* base, size_t bytes, FlightRecorderOptions options);
  LaunchSlot* SlotFor(const char* device, int stream_id, uint64_t seq);
  LaunchSlot* FindStarted(uint64_t dispatch_seq, const char* device, int stream_id);
  void WriteSync(SyncKind kind, const char* device, int stream_id, uint64_t event, FlightRange read,
                 FlightRange write);
  // `stream`: where the summary kernel goes, in stream order after what the
  // launch waits for, so it sees what the kernel sees (nullptr: the default).
  void Summarise(const Tensor& t, FlightTensor& out, bool stats, Stream* stream);
  void Finish(const LaunchRecord& rec, FlightState state, const Status* error);
  void LocateFirstBad(const LaunchRecord& rec, LaunchSlot& slot, int output);

  void* base_;
  size_t bytes_;
  FlightRecorderOptions options_;
  // The dispatcher's call started last and not finished: a side launch's op
  // when the launching thread has none of its own (a kernel function queued
  // on a stream's worker).
  std::atomic<LaunchSlot*> current_{nullptr};
};

// Installs the fault handlers (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) and
// the std::terminate handler that write `header.crash` and then let the
// signal take its course (the handler before, else the default action).
void InstallFlightCrashHandlers(RingHeader* header, char* maps, size_t maps_cap);

}  // namespace opscope
