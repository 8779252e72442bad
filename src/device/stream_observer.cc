#include "device/stream_observer.h"

#include <atomic>

namespace opscope {
namespace {

std::atomic<StreamObserver*> g_observer{nullptr};
thread_local int t_paused = 0;
thread_local int t_dispatched = 0;

}  // namespace

void SetStreamObserver(StreamObserver* observer) { g_observer.store(observer, std::memory_order_release); }

StreamObserver* ActiveStreamObserver() {
  StreamObserver* o = g_observer.load(std::memory_order_acquire);
  return o != nullptr && t_paused == 0 ? o : nullptr;
}

bool StreamObserverPausedHere() { return t_paused > 0; }

PauseStreamObserver::PauseStreamObserver() { ++t_paused; }
PauseStreamObserver::~PauseStreamObserver() { --t_paused; }

DispatchedLaunch::DispatchedLaunch() { ++t_dispatched; }
DispatchedLaunch::~DispatchedLaunch() { --t_dispatched; }
bool InDispatchedLaunch() { return t_dispatched > 0; }

}  // namespace opscope
