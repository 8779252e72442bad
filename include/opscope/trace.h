// File: opscope/trace.h
// Tracepoints: a kernel (and its reference) may summarise an intermediate
// tensor at a chosen point, so that a wrong output can be traced back to the
// first step that went wrong:
//
//   OPSCOPE_TRACE(ctx, "energy", energy);   // inside a kernel or a reference
//
// The macro compiles to nothing unless OPSCOPE_ENABLE_TRACEPOINTS is defined
// (the opscope CMake target defines it for whatever links it; configure with
// -DOPSCOPE_TRACEPOINTS=OFF to compile them out). Even when built in, a hit
// costs one pointer test unless the call was dispatched with a TraceSink
// (`ops-debug run --trace`): then each hit records shape, dtype, min, max,
// mean, NaN/Inf counts and the first values, tagged with the op_id, the side
// (kernel or reference) and its order among the call's hits.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/dtype.h"
#include "opscope/tensor.h"

namespace opscope {

class KernelContext;

struct TracepointHit {
  static constexpr int kFirstValues = 8;
  std::string name;
  uint64_t op_id = 0;
  bool reference = false;  // hit by the reference kernel
  int order = 0;           // 0, 1, 2... among the hits of one side of one call
  DType dtype = DType::kF32;
  Shape shape;
  int64_t count = 0;       // elements summarised
  double min = 0, max = 0, mean = 0;  // over finite values
  int64_t nan_count = 0, inf_count = 0;
  std::vector<double> first;  // the first kFirstValues elements, row-major
};

// Collects hits; safe to share between the kernel's and the reference's calls.
class TraceSink {
 public:
  void Add(TracepointHit hit);
  std::vector<TracepointHit> hits() const;
  // The next order number for (op_id, side).
  int NextOrder(uint64_t op_id, bool reference);

 private:
  mutable std::mutex mu_;
  std::vector<TracepointHit> hits_;
};

// Summarises `t` (a host-readable tensor or a view; device tensors are copied
// to the host first) into the sink of the call `ctx` belongs to, if any.
void RecordTracepoint(KernelContext& ctx, std::string_view name, const Tensor& t);

// The summary alone, for tests and for comparing two hits.
TracepointHit SummarizeTensor(std::string_view name, const Tensor& t);

}  // namespace opscope

#ifdef OPSCOPE_ENABLE_TRACEPOINTS
#define OPSCOPE_TRACE(ctx, name, tensor) ::opscope::RecordTracepoint((ctx), (name), (tensor))
#else
#define OPSCOPE_TRACE(ctx, name, tensor) ((void)0)
#endif
