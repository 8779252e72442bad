// File: capture/op_instance.h
// What names one op instance across processes, and which op's kernel is
// running on this thread.
//
// op_id is an identity within one process (it hashes addresses). Reports of
// different processes (`run`, then `diagnose`) are linked by the instance
// key instead: op, attrs, input shapes and dtypes, the same in every process;
// the input fingerprint then tells whether the data was the same too.
//
//   uint64_t key = OpInstanceKey("Relu", attrs, inputs);
//   uint64_t data = InputFingerprint(inputs);   // equal keys, other data: other fingerprints
//   { ScopedRunningKernel k("my_op", op_id); stream.Memcpy(...); }  // the copy is my_op's
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "opscope/op.h"
#include "opscope/tensor.h"

namespace opscope {

// Both allocate nothing: the flight recorder computes them on every launch.
uint64_t OpInstanceKey(std::string_view op, const Attrs& attrs, const std::vector<Tensor>& inputs);
// Over each input's Fingerprint::Hash (host-readable inputs; 0 for the others).
uint64_t InputFingerprint(const std::vector<Tensor>& inputs);
// The same, one fingerprint at a time: h = kFingerprintBasis, then h = Combine(h, fp) per input.
inline constexpr uint64_t kFingerprintBasis = 1469598103934665603ull;
uint64_t CombineFingerprint(uint64_t h, uint64_t fingerprint);

// Writes attrs as "name=value,..." (the --attrs syntax, tensors as <tensor>)
// into buf, NUL-terminated and cut to fit, allocating nothing.
void FormatAttrs(const Attrs& attrs, char* buf, size_t cap);

struct RunningKernel {
  const char* op = "";
  uint64_t op_id = 0;
};
// The kernel the dispatcher is running on this thread, or nullptr.
const RunningKernel* CurrentRunningKernel();

// A synchronisation the dispatcher inserts (a sync point) is not an edge of
// the program's order; it cannot pause the observer around it, since a cpu
// stream's Synchronize may run queued kernels on the waiting thread, and
// their copies are the program's. So it marks the one notification to skip.
void MarkNextStreamSyncInserted();
bool ConsumeInsertedStreamSync();  // true once after a mark, on the same thread
void ClearInsertedStreamSync();

class ScopedRunningKernel {
 public:
  ScopedRunningKernel(const char* op, uint64_t op_id);
  ~ScopedRunningKernel();
  ScopedRunningKernel(const ScopedRunningKernel&) = delete;
  ScopedRunningKernel& operator=(const ScopedRunningKernel&) = delete;

 private:
  RunningKernel self_;
  const RunningKernel* previous_;
};

}  // namespace opscope
