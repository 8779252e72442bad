#include "capture/stack_capture.h"

// Local unwinding only (this process, no ptrace/remote accessors): the
// _UL* entry points, which keep no malloc'd state per call.
#define UNW_LOCAL_ONLY
#include <libunwind.h>

namespace opscope {
namespace {

// Walks `cursor` outwards, writing each frame's pc, until the outermost frame,
// an unwind error or `max`.
int Walk(unw_cursor_t* cursor, uint64_t* pcs, int max) {
  int n = 0;
  while (n < max) {
    unw_word_t ip = 0;
    if (unw_get_reg(cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
    pcs[n++] = static_cast<uint64_t>(ip);
    if (unw_step(cursor) <= 0) break;
  }
  return n;
}

}  // namespace

int CaptureStackFromSignal(void* ucontext, uint64_t* pcs, int max) {
  if (ucontext == nullptr || pcs == nullptr || max <= 0) return 0;
  // On Linux unw_context_t is the kernel's ucontext_t, so the handler's
  // ucontext is a valid start. UNW_INIT_SIGNAL_FRAME: the first frame was
  // interrupted, not a call, so its pc is looked up as is, not at pc - 1.
  unw_cursor_t cursor;
  if (unw_init_local2(&cursor, static_cast<unw_context_t*>(ucontext), UNW_INIT_SIGNAL_FRAME) < 0) {
    return 0;
  }
  return Walk(&cursor, pcs, max);
}

__attribute__((noinline)) int CaptureStackHere(uint64_t* pcs, int max) {
  if (pcs == nullptr || max <= 0) return 0;
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) < 0 || unw_init_local(&cursor, &context) < 0) return 0;
  // The first frame is this function's; the caller's frame starts after it.
  if (unw_step(&cursor) <= 0) return 0;
  return Walk(&cursor, pcs, max);
}

}  // namespace opscope
