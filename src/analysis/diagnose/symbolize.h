// File: analysis/diagnose/symbolize.h
// Stacks as a person reads them: function, source line and module of each pc,
// for the stacks capture/stack_capture.h takes in a crashing child and for
// every thread of a child that hangs. Runs in the supervisor, never in the
// process that crashed: it allocates, opens files and reads debug info (libdw).
//
//   // child died; it left pcs[] (CaptureStackFromSignal) and its maps text
//   for (const StackFrame& f : SymbolizeStack(pcs, maps_text))
//     std::cout << FormatFrame(f) << "\n";
//
//   // child hangs: every thread's stack, over ptrace
//   OPSCOPE_ASSIGN_OR_RETURN(std::vector<ThreadStack> threads, ThreadStacksOfProcess(child_pid));
//
// Function names come from the ELF symbol tables (demangled): an inlined
// function is reported as the function it was inlined into, while file:line
// are those of the inlined code (the line table knows them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"

namespace opscope {

struct StackFrame {
  uint64_t pc = 0;
  std::string module;          // path of the mapped file ("/.../libopscope.so"); "" unknown
  uint64_t module_offset = 0;  // pc in the module's own addresses (what addr2line -e module takes)
  std::string function;        // demangled ("opscope::Foo(int)"); "" unknown
  std::string file;            // source file where debug info exists (its compile dir prepended), else ""
  int line = 0;                // 0 with no debug info
};

// Symbolises `pcs` of a process, possibly dead, whose /proc/PID/maps text
// was `maps_text`. pcs[i] for i >= first_return_address are return addresses
// and are looked up at pc - 1 (the call); the frame still reports pc itself.
// Never fails: a pc no mapping or symbol covers keeps empty fields, and maps
// text that does not parse leaves every frame unknown.
std::vector<StackFrame> SymbolizeStack(const std::vector<uint64_t>& pcs, std::string_view maps_text,
                                       int first_return_address = 1);

struct ThreadStack {
  int tid = 0;
  std::string name;  // /proc/PID/task/TID/comm
  std::vector<StackFrame> frames;  // innermost first
};

// Every thread's stack of a live process the caller may trace (typically its
// own child that hangs), unwound by libdw over ptrace: each thread is stopped
// while it is unwound and resumed afterwards, the process keeps running.
// An error if the process does not exist or no thread of it could be
// attached (ptrace not permitted, already traced, our own process).
StatusOr<std::vector<ThreadStack>> ThreadStacksOfProcess(int pid);

// Why this build takes no stacks, "" where it does: the minimal build
// (symbolize_minimal.cc) has neither libunwind nor libdw.
std::string StacksOffReason();

// One line: "opscope::Foo(int) at src/x.cc:12 (libopscope.so+0x1234)"; the
// parts that are unknown are left out ("?? (libc.so.6+0x8a1b)", "0x7f12...").
std::string FormatFrame(const StackFrame& f);

}  // namespace opscope
