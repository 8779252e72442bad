// Placeholder arithmetic until the roofline branch lands (taken from there on merge).
#include "opscope/roofline.h"

#include <algorithm>

namespace opscope {

RoofPeaks RoofPeaksFrom(const DevicePeaks& p) {
  return {.bandwidth_gbs = p.triad_gbs, .gflops_f32 = p.gemm_gflops_f32, .gflops_f64 = p.gemm_gflops_f64, .source = "calibrated"};
}

const char* BoundName(Bound b) {
  switch (b) {
    case Bound::kMemory: return "memory";
    case Bound::kCompute: return "compute";
    case Bound::kNone: break;
  }
  return "none";
}

double RooflinePoint::efficiency() const { return has_cost && measured_us > 0 && lower_bound_us > 0 ? lower_bound_us / measured_us : -1; }
double RooflinePoint::slowdown() const { return has_cost && measured_us > 0 && lower_bound_us > 0 ? measured_us / lower_bound_us : -1; }

std::optional<Cost> CostOf(const OpSchema& op, const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                           const Attrs& attrs) {
  if (!op.cost) return std::nullopt;
  return op.EstimateCost(in, out, attrs);
}

RooflinePoint Roofline(const std::optional<Cost>& cost, DType dtype, double measured_us, const RoofPeaks& peaks) {
  RooflinePoint r;
  r.measured_us = measured_us;
  if (!cost) return r;
  r.has_cost = true;
  r.bytes = cost->bytes_read + cost->bytes_written;
  r.flops = cost->flops;
  if (peaks.bandwidth_gbs > 0) r.memory_bound_us = r.bytes / (peaks.bandwidth_gbs * 1e3);
  if (peaks.GflopsFor(dtype) > 0) r.compute_bound_us = r.flops / (peaks.GflopsFor(dtype) * 1e3);
  r.lower_bound_us = std::max(r.memory_bound_us, r.compute_bound_us);
  r.bound = r.lower_bound_us <= 0 ? Bound::kNone : r.memory_bound_us >= r.compute_bound_us ? Bound::kMemory : Bound::kCompute;
  if (measured_us > 0) {
    r.achieved_gbs = r.bytes / (measured_us * 1e3);
    r.achieved_gflops = r.flops / (measured_us * 1e3);
  }
  if (r.bytes > 0) r.intensity = r.flops / r.bytes;
  return r;
}

std::string RooflineSvg(const RoofPeaks&, const std::vector<RooflineChartPoint>&) { return "<svg xmlns=\"http://www.w3.org/2000/svg\"/>"; }

}  // namespace opscope
