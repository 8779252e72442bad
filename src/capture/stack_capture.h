// File: capture/stack_capture.h
// Stacks captured where a crash happens: inside a signal handler of the
// process that is dying, with nothing but the stack and a few syscalls, so
// the supervisor (another process) can symbolise them afterwards
// (analysis/diagnose/symbolize.h).
//
//   void OnFatalSignal(int sig, siginfo_t* info, void* ucontext) {
//     uint64_t pcs[64];
//     int n = CaptureStackFromSignal(ucontext, pcs, 64);
//     static char maps[64 << 10];  // static: no stack or heap spent on it
//     size_t len = SnapshotSelfMaps(maps, sizeof(maps));
//     write(fd, pcs, n * sizeof(uint64_t)); write(fd, maps, len);
//     ...
//   }
//   // installed with sigaction(SIGSEGV, {.sa_sigaction = OnFatalSignal,
//   //                                     .sa_flags = SA_SIGINFO | SA_ONSTACK})
//
// WHICH PCS ARE RETURN ADDRESSES. From a signal, pcs[0] is the interrupted
// instruction itself (the faulting one for SIGSEGV/SIGBUS/SIGILL/SIGFPE) and
// pcs[1..] are return addresses: a symboliser looks those up at pc - 1, the
// call instruction, or a call that ends a line is reported on the next line
// (SymbolizeStack(pcs, maps, /*first_return_address=*/1)). From
// CaptureStackHere every pc is a return address (first_return_address = 0).
//
// Async-signal-safety: libunwind's local-only unwinder walking the DWARF CFI
// of the loaded objects; no malloc, no locks of ours, no stdio. (libunwind
// finds an object's unwind table with dl_iterate_phdr, which takes the
// loader's lock: a signal that interrupts dlopen on the same thread would
// wait on it. A crash inside dlopen is the one case this cannot capture.)
#pragma once

#include <cstddef>
#include <cstdint>

namespace opscope {

// The interrupted thread's stack from a signal handler's ucontext (the third
// argument of an SA_SIGINFO handler), the interrupted pc first; at most `max`
// pcs into `pcs`. Returns how many were written, 0 if none (null ucontext, the
// unwinder failed to start).
int CaptureStackFromSignal(void* ucontext, uint64_t* pcs, int max);

// The calling thread's stack, starting at the return address into the caller
// (this function's own frame is not reported). Async-signal-safe too: a
// handler of a signal sent to every thread can call it.
int CaptureStackHere(uint64_t* pcs, int max);

// Copies /proc/self/maps into `buf` with open/read/close only, for the
// symboliser to map pcs to files once this process is gone. Returns the bytes
// written, at most `cap` (cut there if the maps are longer), and NUL-terminates
// the text when there is room for it; 0 if the file cannot be read.
size_t SnapshotSelfMaps(char* buf, size_t cap);

}  // namespace opscope
