#include <cmath>
#include <limits>

#include "opscope/op.h"
#include "opscope/trace.h"

namespace opscope {

void TraceSink::Add(TracepointHit hit) {
  std::lock_guard<std::mutex> lock(mu_);
  hits_.push_back(std::move(hit));
}

std::vector<TracepointHit> TraceSink::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

int TraceSink::NextOrder(uint64_t op_id, bool reference) {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const TracepointHit& h : hits_) n += h.op_id == op_id && h.reference == reference;
  return n;
}

TracepointHit SummarizeTensor(std::string_view name, const Tensor& t) {
  TracepointHit hit;
  hit.name = std::string(name);
  hit.dtype = t.dtype();
  hit.shape = t.shape();
  hit.count = t.numel();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.FlatGetAsDouble(i);
    if (i < TracepointHit::kFirstValues) hit.first.push_back(v);
    if (std::isnan(v)) { ++hit.nan_count; continue; }
    if (std::isinf(v)) { ++hit.inf_count; continue; }
    lo = std::min(lo, v), hi = std::max(hi, v), sum += v, ++finite;
  }
  if (finite) hit.min = lo, hit.max = hi, hit.mean = sum / static_cast<double>(finite);
  return hit;
}

void RecordTracepoint(KernelContext& ctx, std::string_view name, const Tensor& t) {
  TraceSink* sink = ctx.trace_sink();
  if (sink == nullptr) return;
  StatusOr<Tensor> host = ToHost(t);
  TracepointHit hit = host.ok() ? SummarizeTensor(name, *host) : TracepointHit{.name = std::string(name)};
  hit.op_id = ctx.op_id();
  hit.reference = ctx.is_reference();
  hit.order = sink->NextOrder(hit.op_id, hit.reference);
  sink->Add(std::move(hit));
}

}  // namespace opscope
