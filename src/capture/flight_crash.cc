// The flight recorder's fault handlers: what a dying program can still say.
// Everything here runs inside a signal handler, so it only stores into the
// mapped ring and makes async-signal-safe calls (clock_gettime, syscall,
// open/read via SnapshotSelfMaps, libunwind's local unwinder); the parent
// symbolises the raw PCs afterwards, with libdw, against the maps snapshot.
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <cxxabi.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <typeinfo>

#include "capture/flight_recorder.h"
#include "capture/stack_capture.h"
#include "opscope/device.h"

namespace opscope {
namespace {

RingHeader* g_header = nullptr;
char* g_maps = nullptr;
size_t g_maps_cap = 0;
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous[64];
std::atomic<int> g_entered{0};
std::terminate_handler g_previous_terminate = nullptr;

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // steady_clock's clock on Linux
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Hands the signal on as if we had not been here: to the handler before
// (a sanitizer, the checked allocator's), else the default action.
void PassOn(int sig, siginfo_t* info, void* context) {
  const struct sigaction& prev = g_previous[sig];
  sigaction(sig, &prev, nullptr);
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, context);
    return;
  }
  if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // Default action. A fault raised by the hardware recurs when the handler
  // returns; one sent (raise, kill, abort) must be sent again.
  if (info == nullptr || info->si_code <= 0 || sig == SIGABRT) raise(sig);
}

void OnFatalSignal(int sig, siginfo_t* info, void* context) {
  if (g_entered.exchange(1) != 0) {
    // Another thread faulted first (two blocks of one kernel often do): let
    // it finish writing its record before this one ends the process.
    for (int i = 0; i < 2000 && g_header && !std::atomic_ref<int32_t>(g_header->crash.written).load(); ++i) {
      timespec ms{0, 1000000};
      nanosleep(&ms, nullptr);
    }
  } else if (g_header != nullptr) {
    CrashRecord& c = g_header->crash;
    c.signal = sig;
    c.code = info ? info->si_code : 0;
    c.fault_address = info ? reinterpret_cast<uint64_t>(info->si_addr) : 0;
    c.tid = static_cast<int32_t>(syscall(SYS_gettid));
    c.time_ns = MonotonicNs();
#if defined(__x86_64__)
    // Bit 1 of the page fault's error code: the access was a write.
    if (sig == SIGSEGV && context != nullptr && info != nullptr && info->si_code > 0) {
      c.access = (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) ? 2 : 1;
    }
#endif
    if ((sig == SIGSEGV || sig == SIGBUS) && info != nullptr) {
      // Static: no stack space taken from a thread that may have overflowed it.
      static GuardedFault fault;
      if (FindGuardedFaultOnOpenDevices(info->si_addr, &fault)) {
        c.in_checked_allocation = 1;
        c.alloc_begin = fault.begin;
        c.alloc_bytes = fault.bytes;
        static_assert(sizeof c.alloc_label == sizeof fault.label && sizeof c.message == sizeof fault.message);
        std::memcpy(c.alloc_label, fault.label, sizeof c.alloc_label - 1);
        std::memcpy(c.message, fault.message, sizeof c.message - 1);
      }
    }
    c.stack.tid = c.tid;
    c.stack.depth = CaptureStackFromSignal(context, c.stack.pcs, kFlightMaxStack);
    const size_t n = SnapshotSelfMaps(g_maps, g_maps_cap);
    std::atomic_ref<uint64_t>(g_header->maps_bytes).store(n, std::memory_order_release);
    std::atomic_ref<int32_t>(c.written).store(1, std::memory_order_release);
  }
  PassOn(sig, info, context);
}

// An exception nobody caught: keep its message before abort() raises SIGABRT.
void OnTerminate() {
  if (g_header != nullptr && g_header->crash.message[0] == '\0') {
    const char* what = "std::terminate called without an active exception";
    std::string text;
    if (std::exception_ptr e = std::current_exception()) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        int status = 0;
        char* name = abi::__cxa_demangle(typeid(ex).name(), nullptr, nullptr, &status);
        text = std::string("uncaught exception ") + (status == 0 && name ? name : typeid(ex).name()) + ": " + ex.what();
        std::free(name);
      } catch (...) {
        text = "uncaught exception of a type not derived from std::exception";
      }
      what = text.c_str();
    }
    CopyField(g_header->crash.message, what);
  }
  if (g_previous_terminate != nullptr) g_previous_terminate();
  std::abort();
}

}  // namespace

void InstallFlightCrashHandlers(RingHeader* header, char* maps, size_t maps_cap) {
  if (g_header != nullptr) return;
  g_header = header;
  g_maps = maps;
  g_maps_cap = maps_cap;
  // Warm the unwinder up outside any handler: its first use may load
  // libgcc_s or fill caches, which a signal handler must not do.
  uint64_t pcs[4];
  (void)CaptureStackHere(pcs, 4);
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_sigaction = OnFatalSignal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int sig : kSignals) sigaction(sig, &action, &g_previous[sig]);
  g_previous_terminate = std::set_terminate(OnTerminate);
}

}  // namespace opscope
