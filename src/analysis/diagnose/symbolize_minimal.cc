// The minimal build's stand-in for symbolize.cc (no libdw there, and no
// libunwind to capture stacks with: capture/stack_capture_minimal.cc). A
// diagnosis says so in a note rather than showing empty stacks.
#include <fmt/format.h>

#include "analysis/diagnose/symbolize.h"

namespace opscope {

std::vector<StackFrame> SymbolizeStack(const std::vector<uint64_t>& pcs, std::string_view, int) {
  std::vector<StackFrame> frames;
  for (uint64_t pc : pcs) frames.push_back({.pc = pc});
  return frames;
}

// No threads rather than an error: the one note of StacksOffReason covers a hang too.
StatusOr<std::vector<ThreadStack>> ThreadStacksOfProcess(int) { return std::vector<ThreadStack>{}; }

std::string StacksOffReason() {
  return "stacks are off in this build: the minimal build (OPSCOPE_MINIMAL) has no libunwind or libdw to take "
         "and symbolise them";
}

std::string FormatFrame(const StackFrame& f) { return fmt::format("{:#x}", f.pc); }

}  // namespace opscope
