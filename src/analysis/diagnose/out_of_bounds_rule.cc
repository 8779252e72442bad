#include "analysis/diagnose/attribution_facts.h"

#include <signal.h>

#include <algorithm>

#include "analysis/diagnose/supervise.h"
#include "core/text_format.h"

namespace opscope::attribution {

void OutOfBounds(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  const CrashRecord* c = in.crash;
  if (c == nullptr || !c->written || (c->signal != SIGSEGV && c->signal != SIGBUS)) return;
  const uint64_t fault = c->fault_address;
  const DiagLaunch* failing = in.failing >= 0 ? &d.trajectory[in.failing] : nullptr;
  // The tensor the fault lies next to: the checked allocation holding the
  // fault, else a tensor of the failing launch within a page of it.
  const DiagTensor* tensor = nullptr;
  const DiagLaunch* owner = nullptr;
  uint64_t begin = 0, bytes = 0;
  bool guard = c->in_checked_allocation != 0;
  if (guard) {
    begin = c->alloc_begin, bytes = c->alloc_bytes;
    for (int i = in.failing >= 0 ? in.failing : static_cast<int>(d.trajectory.size()) - 1; i >= 0 && !tensor; --i) {
      for (const DiagTensor& t : d.trajectory[i].tensors) {
        if (t.address == begin && d.trajectory[i].kind == "launch") {
          tensor = &t, owner = &d.trajectory[i];
          break;
        }
      }
    }
  } else if (failing) {
    for (const DiagTensor& t : failing->tensors) {
      if (fault + 4096 >= t.address && fault < t.address + t.bytes + 4096 && (fault < t.address || fault >= t.address + t.bytes)) {
        tensor = &t, owner = failing, begin = t.address, bytes = t.bytes;
        break;
      }
    }
  }
  const DiagThread* thread = FaultingThread(d);
  const DiagFrame* frame = thread ? SourceFrame(*thread) : nullptr;
  DiagCause cause;
  cause.rule = "out-of-bounds";
  const std::string verb = c->access == 2 ? "writes" : c->access == 1 ? "reads" : "accesses";
  if (tensor == nullptr && !guard) {
    const bool null = fault < 4096;
    const std::string what = null ? "a null pointer dereference"
                             : c->signal == SIGBUS ? "a read or write of a mapping past the end of its file (or misaligned)"
                                                   : "an invalid memory access";
    cause.cause = SignalName(c->signal) + ": " + what + " at " + Hex(fault) + (frame ? " in " + FrameText(*frame) : "");
    cause.confidence = null ? "high" : "medium";
    cause.evidence.push_back("fault address " + Hex(fault) + " lies in no tensor the recorded launches used");
    if (failing) cause.evidence.push_back("running: " + LaunchText(*failing));
    cause.fix = "a pointer the kernel computes or receives is wrong: check it against the tensors' addresses";
    cause.score = 50;
    out.push_back(cause);
    return;
  }
  const std::string name = tensor ? tensor->name : std::string(c->alloc_label[0] ? c->alloc_label : "a buffer");
  const size_t item = tensor ? ItemSize(*tensor) : 1;
  const int64_t n = tensor ? Numel(*tensor) : static_cast<int64_t>(bytes);
  const std::string desc = tensor ? ShapeText(*tensor) : std::to_string(bytes) + " bytes";
  std::string where;
  if (fault >= begin + bytes) {
    const int64_t index = static_cast<int64_t>((fault - begin) / item);
    const int64_t past = index - n + 1;
    where = verb + " " + name + "[" + std::to_string(index) + "]: " + std::to_string(past) + " element" +
            (past == 1 ? "" : "s") + " past the end of " + name + ", " + desc;
  } else {
    const int64_t before = static_cast<int64_t>((begin - fault + item - 1) / item);
    where = verb + " " + name + "[-" + std::to_string(before) + "]: " + std::to_string(before) + " element" +
            (before == 1 ? "" : "s") + " before the start of " + name + ", " + desc;
  }
  const bool is_output = tensor && tensor->role == "output";
  cause.cause = "out-of-bounds " + std::string(c->access == 2 || (c->access == 0 && is_output) ? "write" : "read") +
                " on " + name + (owner ? " in " + LaunchText(*owner) : "") + ": " + where;
  cause.confidence = guard ? "high" : "medium";
  cause.evidence.push_back(std::string(guard ? "fault address " + Hex(fault) + " is in the guard page of " : "fault address " + Hex(fault) + " is next to ") +
                           name + " (" + Hex(begin) + ", " + std::to_string(bytes) + " bytes)");
  if (owner && !owner->grid.empty()) {
    const int64_t threads = owner->grid[0] * owner->grid[1] * owner->grid[2] * owner->block[0] * owner->block[1] * owner->block[2];
    cause.evidence.push_back("launch grid=[" + std::to_string(owner->grid[0]) + "," + std::to_string(owner->grid[1]) + "," +
                             std::to_string(owner->grid[2]) + "] block=[" + std::to_string(owner->block[0]) + "," +
                             std::to_string(owner->block[1]) + "," + std::to_string(owner->block[2]) + "]: " +
                             std::to_string(threads) + " threads for " + std::to_string(n) + " elements");
  }
  if (frame) cause.evidence.push_back("the faulting instruction: " + FrameText(*frame));
  if (fault >= begin + bytes) {
    cause.fix = "likely index arithmetic: guard the access with `if (i < n)` for the tail, where n (" + std::to_string(n) +
                ") need not be a multiple of the block, and check the bound (`<` not `<=`)";
  } else {
    cause.fix = "an index below 0 reached the kernel: check the index arithmetic, or where the indices come from";
    // An integer input holding negative values is where such an index comes from.
    if (owner) {
      for (const DiagTensor& t : owner->tensors) {
        if (t.role == "input" && t.has_stats && t.min < 0 && t.dtype.find("int") != std::string::npos) {
          cause.evidence.push_back("index input " + RangeText(t) + ": negative indices");
          cause.fix = "the index input " + t.name + " holds negative values: find who wrote it (see the other causes)";
        }
      }
    }
  }
  cause.score = guard ? 90 : 60;
  out.push_back(cause);
  // An input smaller than the output it was read for: a broadcast the kernel does not do.
  if (tensor && tensor->role == "input" && owner) {
    for (const DiagTensor& o : owner->tensors) {
      if (o.role == "output" && Broadcasts(*tensor, o)) {
        DiagCause b;
        b.rule = "shape";
        b.confidence = "high";
        b.cause = "broadcast not handled: " + LaunchText(*owner) + " reads " + name + " " + ShapeText(*tensor) +
                  " as if it had the output's shape " + ShapeText(o);
        b.evidence.push_back(where);
        b.fix = "index " + name + " with broadcast strides (0 along its size-1 or missing dims), or refuse the shape in the op's shape inference";
        b.score = 88;
        out.push_back(b);
        break;
      }
    }
  }
}

}  // namespace opscope::attribution
