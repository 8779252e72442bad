// The minimal build's stand-in for stack_capture.cc (no libunwind there): no
// stack is captured, so a crash's snapshot holds none; ops-debug diagnose says
// stacks are off in this build (analysis/diagnose/symbolize_minimal.cc).
#include "capture/stack_capture.h"

namespace opscope {

int CaptureStackFromSignal(void*, uint64_t*, int) { return 0; }

int CaptureStackHere(uint64_t*, int) { return 0; }

}  // namespace opscope
