// File: device/stream_observer.h
// One process-wide observer of the ordering work a program puts on streams:
// event records and waits, copies, and host synchronisation, in the order the
// host enqueues them. ops-debug diagnose's flight recorder registers one, so
// its race check sees the program's own happens-before edges on any backend,
// from the records alone. Kernel launches the dispatcher makes are not
// reported here (its hooks know the op and the buffers); a launch on a
// stream an op created for itself is (OnLaunch), so it is not unseen.
//
//   class Log : public StreamObserver { void OnRecord(const StreamRef& s, const void* ev) override; ... };
//   SetStreamObserver(&log);                   // the backends now call it
//   { PauseStreamObserver pause; stream.Record(internal_event); }  // not the program's own edge
#pragma once

#include <cstddef>

#include "opscope/device.h"

namespace opscope {

// A stream as the observer sees it: the device's name ("cpu", "cuda:0") and
// the stream's id, unique within the device.
struct StreamRef {
  const char* device = "";
  int id = -1;
};

class StreamObserver {
 public:
  virtual ~StreamObserver() = default;
  virtual void OnRecord(const StreamRef&, const void* /*event*/) {}
  virtual void OnWait(const StreamRef&, const void* /*event*/) {}
  virtual void OnMemcpy(const StreamRef&, void* /*dst*/, const void* /*src*/, size_t /*bytes*/, CopyKind) {}
  virtual void OnStreamSynchronize(const StreamRef&) {}   // the host waited for one stream
  virtual void OnEventSynchronize(const void* /*event*/) {}  // the host waited for one event
  virtual void OnDeviceSynchronize(const char* /*device*/) {}  // the host waited for every stream
  // A device buffer was handed out: whatever used these addresses before
  // was done with them (else it is a use after free, not a race), so no
  // access before this one races with an access after it.
  virtual void OnAllocate(const char* /*device*/, const void* /*ptr*/, size_t /*bytes*/) {}
  // A kernel launched on a stream outside the dispatcher's own launches: a
  // side stream an op made for itself. Its buffers are not known here.
  virtual void OnLaunch(const StreamRef&, const char* /*kernel*/) {}
};

// While alive, this thread's launches are the dispatcher's (KernelContext::
// Launch): the stream observer is not told of them again.
class DispatchedLaunch {
 public:
  DispatchedLaunch();
  ~DispatchedLaunch();
  DispatchedLaunch(const DispatchedLaunch&) = delete;
  DispatchedLaunch& operator=(const DispatchedLaunch&) = delete;
};
bool InDispatchedLaunch();

// nullptr: none (the default; then each call costs one relaxed load).
void SetStreamObserver(StreamObserver* observer);
// The observer, or nullptr while none is set or this thread paused it.
StreamObserver* ActiveStreamObserver();

// True while this thread has paused the observer: work it hands to another
// thread (a kernel queued on a stream's worker) is paused there too.
bool StreamObserverPausedHere();

// While alive, this thread's stream work is not reported: the dispatcher's
// own timing events and the synchronisations ops-debug diagnose inserts are
// not edges of the program being diagnosed.
class PauseStreamObserver {
 public:
  PauseStreamObserver();
  ~PauseStreamObserver();
  PauseStreamObserver(const PauseStreamObserver&) = delete;
  PauseStreamObserver& operator=(const PauseStreamObserver&) = delete;
};

}  // namespace opscope
