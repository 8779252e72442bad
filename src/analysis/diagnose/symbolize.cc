#include "analysis/diagnose/symbolize.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>

namespace opscope {
namespace {

// Modules are found by the paths in the maps (dwfl_linux_proc_find_elf opens
// an absolute path as is), their DWARF in the file itself or, for a stripped
// one, at the standard debuginfo places (.gnu_debuglink, build-id).
const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = nullptr,  // libdw's default places
};

struct DwflEnd {
  void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
};
using DwflPtr = std::unique_ptr<Dwfl, DwflEnd>;

std::string Demangle(const char* symbol) {
  std::string name(symbol);
  // A dynamic symbol's version ("__libc_start_main@@GLIBC_2.34") tells a
  // reader nothing about where the thread was; no mangled name contains '@'.
  if (size_t at = name.find('@'); at != std::string::npos) name.resize(at);
  int status = 0;
  char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;  // a C name, or not a mangled one
  std::string out(demangled);
  std::free(demangled);
  return out;
}

StackFrame Symbolize(Dwfl* dwfl, uint64_t pc, bool is_return_address) {
  StackFrame f;
  f.pc = pc;
  // A return address is the instruction after the call; the call itself is
  // what the thread was doing, and may belong to another line or (a call to
  // a noreturn function at the end of one) another function.
  const Dwarf_Addr lookup = is_return_address && pc > 0 ? pc - 1 : pc;
  Dwfl_Module* module = dwfl != nullptr ? dwfl_addrmodule(dwfl, lookup) : nullptr;
  if (module == nullptr) return f;

  Dwarf_Addr start = 0;
  const char* name = dwfl_module_info(module, nullptr, &start, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (name != nullptr) f.module = name;
  Dwarf_Addr bias = start;  // what the load address is when the file cannot be read
  dwfl_module_getelf(module, &bias);
  f.module_offset = pc - bias;

  GElf_Off offset = 0;
  GElf_Sym symbol;
  const char* symbol_name = dwfl_module_addrinfo(module, lookup, &offset, &symbol, nullptr, nullptr, nullptr);
  if (symbol_name != nullptr && symbol_name[0] != '\0') f.function = Demangle(symbol_name);

  int line_number = 0;
  const char* file = nullptr;
  const char* comp_dir = nullptr;
  if (Dwfl_Line* line = dwfl_module_getsrc(module, lookup)) {
    file = dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr);
    comp_dir = dwfl_line_comp_dir(line);
  } else {
    // libdw finds an address's compile unit by .debug_aranges, which clang
    // (DWARF 5) does not emit: a plugin built by clang would have no lines.
    // Without it, each unit's own ranges say whether it holds the address.
    Dwarf_Addr dwarf_bias = 0;
    Dwarf* dwarf = dwfl_module_getdwarf(module, &dwarf_bias);
    Dwarf_Off offset_cu = 0, next = 0;
    size_t header_size = 0;
    while (dwarf != nullptr && file == nullptr &&
           dwarf_nextcu(dwarf, offset_cu, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
      Dwarf_Die cu;
      if (dwarf_offdie(dwarf, offset_cu + header_size, &cu) != nullptr && dwarf_haspc(&cu, lookup - dwarf_bias) > 0) {
        if (Dwarf_Line* line = dwarf_getsrc_die(&cu, lookup - dwarf_bias)) {
          file = dwarf_linesrc(line, nullptr, nullptr);
          dwarf_lineno(line, &line_number);
          Dwarf_Attribute attr;
          comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
        }
      }
      offset_cu = next;
    }
  }
  if (file != nullptr) {
    // The line table names a file relative to the directory it was compiled
    // in ("../src/x.cc" from build/); anchored there, it is a path a reader
    // can open. A relative compile directory (a distribution's
    // -fdebug-prefix-map) is already part of what libdw returns.
    std::filesystem::path path(file);
    if (path.is_relative() && comp_dir != nullptr && comp_dir[0] == '/') {
      path = std::filesystem::path(comp_dir) / path;
    }
    f.file = path.lexically_normal().string();
    f.line = line_number;
  }
  return f;
}

std::string DwflError() { return dwfl_errmsg(-1); }

// Unwinding collects (pc, is_return_address) pairs; symbolising waits until
// every thread is resumed, so each one is stopped only as long as its unwind.
struct RawFrame {
  uint64_t pc;
  bool is_return_address;
};
struct RawThread {
  int tid;
  std::vector<RawFrame> frames;
  std::string error;  // why its unwind stopped before producing any frame
};

int OnFrame(Dwfl_Frame* frame, void* arg) {
  auto* thread = static_cast<RawThread*>(arg);
  Dwarf_Addr pc = 0;
  bool is_activation = false;
  if (!dwfl_frame_pc(frame, &pc, &is_activation)) return DWARF_CB_ABORT;
  // An "activation" is a frame whose pc was not reached by a call: the
  // innermost one, or one interrupted by a signal.
  thread->frames.push_back({pc, !is_activation});
  return DWARF_CB_OK;
}

int OnThread(Dwfl_Thread* dwfl_thread, void* arg) {
  auto* threads = static_cast<std::vector<RawThread>*>(arg);
  RawThread& thread = threads->emplace_back();
  thread.tid = static_cast<int>(dwfl_thread_tid(dwfl_thread));
  // -1 once the unwinder cannot go further: at the outermost frame that is
  // how a walk ends, so it is an error only when nothing came before it.
  if (dwfl_thread_getframes(dwfl_thread, OnFrame, &thread) != 0 && thread.frames.empty()) {
    thread.error = DwflError();
  }
  return DWARF_CB_OK;
}

std::string ThreadName(int pid, int tid) {
  std::ifstream in(fmt::format("/proc/{}/task/{}/comm", pid, tid));
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace

std::vector<StackFrame> SymbolizeStack(const std::vector<uint64_t>& pcs, std::string_view maps_text,
                                       int first_return_address) {
  DwflPtr dwfl(dwfl_begin(&kCallbacks));
  if (dwfl != nullptr && !maps_text.empty()) {
    // fmemopen reads from the caller's buffer; a copy keeps it off the
    // string_view's (possibly not NUL-terminated, const) memory.
    std::string text(maps_text);
    if (FILE* maps = fmemopen(text.data(), text.size(), "r")) {
      dwfl_report_begin(dwfl.get());
      // A line that does not parse ends the report; the modules before it
      // stay, and a pc in none of them is reported unknown.
      dwfl_linux_proc_maps_report(dwfl.get(), maps);
      dwfl_report_end(dwfl.get(), nullptr, nullptr);
      std::fclose(maps);
    }
  }
  std::vector<StackFrame> frames;
  frames.reserve(pcs.size());
  for (size_t i = 0; i < pcs.size(); ++i) {
    frames.push_back(Symbolize(dwfl.get(), pcs[i], static_cast<int>(i) >= first_return_address));
  }
  return frames;
}

StatusOr<std::vector<ThreadStack>> ThreadStacksOfProcess(int pid) {
  if (pid <= 0) return InvalidArgumentError(fmt::format("no process {}", pid));
  // ptrace refuses a thread of the tracer's own process; say so plainly.
  if (pid == getpid()) return FailedPreconditionError("a process cannot unwind its own threads over ptrace");
  std::error_code ec;
  if (!std::filesystem::exists(fmt::format("/proc/{}/task", pid), ec)) {
    return NotFoundError(fmt::format("no process {}", pid));
  }
  DwflPtr dwfl(dwfl_begin(&kCallbacks));
  if (dwfl == nullptr) return InternalError("dwfl_begin: " + DwflError());
  dwfl_report_begin(dwfl.get());
  int err = dwfl_linux_proc_report(dwfl.get(), pid);
  dwfl_report_end(dwfl.get(), nullptr, nullptr);
  if (err != 0) {
    return FailedPreconditionError(
        fmt::format("reading /proc/{}/maps: {}", pid, err > 0 ? std::strerror(err) : DwflError()));
  }
  // false: libdw stops (PTRACE_ATTACH) each thread itself while unwinding it.
  err = dwfl_linux_proc_attach(dwfl.get(), pid, false);
  if (err != 0) {
    return FailedPreconditionError(
        fmt::format("attaching to process {}: {}", pid, err > 0 ? std::strerror(err) : DwflError()));
  }
  std::vector<RawThread> raw;
  if (dwfl_getthreads(dwfl.get(), OnThread, &raw) != 0 && raw.empty()) {
    return FailedPreconditionError(fmt::format("listing the threads of process {}: {}", pid, DwflError()));
  }
  bool any_unwound = false;
  std::vector<ThreadStack> threads;
  for (const RawThread& t : raw) {
    ThreadStack& out = threads.emplace_back();
    out.tid = t.tid;
    out.name = ThreadName(pid, t.tid);
    for (const RawFrame& frame : t.frames) {
      out.frames.push_back(Symbolize(dwfl.get(), frame.pc, frame.is_return_address));
    }
    any_unwound = any_unwound || !t.frames.empty();
  }
  if (!any_unwound) {
    return FailedPreconditionError(fmt::format("unwinding process {}: no thread could be traced ({})", pid,
                                               raw.empty() ? "no threads" : raw.front().error));
  }
  return threads;
}

std::string StacksOffReason() { return ""; }

std::string FormatFrame(const StackFrame& f) {
  if (f.module.empty() && f.function.empty()) return fmt::format("{:#x}", f.pc);
  std::string out = f.function.empty() ? "??" : f.function;
  if (!f.file.empty()) out += fmt::format(" at {}:{}", f.file, f.line);
  if (!f.module.empty()) {
    out += fmt::format(" ({}+{:#x})", std::filesystem::path(f.module).filename().string(), f.module_offset);
  } else {
    out += fmt::format(" ({:#x})", f.pc);
  }
  return out;
}

}  // namespace opscope
