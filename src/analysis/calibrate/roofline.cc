// The roofline arithmetic (opscope/roofline.h). Times are in microseconds,
// bandwidth in 1e9 bytes/s and compute in 1e9 FLOP/s, so a byte count over
// (GB/s * 1e3) is microseconds. A roof of 0 (or not a positive number) is
// unknown: whatever needs it gets bound kNone, never a division by it.
#include "opscope/roofline.h"

#include <algorithm>
#include <ctime>
#include <utility>

namespace opscope {

RoofPeaks RoofPeaksFrom(const DevicePeaks& p) {
  return RoofPeaks{.bandwidth_gbs = p.triad_gbs,
                   .gflops_f32 = p.gemm_gflops_f32,
                   .gflops_f64 = p.gemm_gflops_f64,
                   .fma_gflops_f32 = p.fma_gflops_f32,
                   .fma_gflops_f64 = p.fma_gflops_f64,
                   .source = std::string("calibrated") + (p.from_cache ? " (" + p.cache_file + ")" : "")};
}

StatusOr<RoofPeaks> ObtainRoofPeaks(const std::string& device, double peak_bw_gbs, double peak_gflops) {
  if (peak_bw_gbs > 0 && peak_gflops > 0) {
    return RoofPeaks{.bandwidth_gbs = peak_bw_gbs, .gflops_f32 = peak_gflops, .gflops_f64 = peak_gflops,
                     .source = "--peak-bw/--peak-flops"};
  }
  auto measured = CalibrateDevice({.device = device});
  if (!measured.ok()) return std::move(measured).status().WithContext("calibrating " + device);
  RoofPeaks peaks = RoofPeaksFrom(*measured);
  // How old the roofs are, how loaded the machine was, how widely the
  // rounds spread: every efficiency moves with them.
  peaks.source = CalibrationProvenance(*measured, static_cast<int64_t>(std::time(nullptr))) +
                 (measured->from_cache ? "" : " (first use on this machine)") + ", cached in " + measured->cache_file;
  if (peak_bw_gbs > 0) peaks.bandwidth_gbs = peak_bw_gbs, peaks.source += "; memory roof given (--peak-bw)";
  if (peak_gflops > 0) {
    peaks.gflops_f32 = peaks.gflops_f64 = peak_gflops;
    // A roof given by hand has no hardware peak beside it to say it is beaten by a better kernel.
    peaks.fma_gflops_f32 = peaks.fma_gflops_f64 = 0;
    peaks.source += "; compute roof given (--peak-flops)";
  }
  return peaks;
}

AboveRoof AboveRoofOf(const RooflinePoint& r) {
  if (!(r.efficiency() > 1)) return AboveRoof::kNo;
  if (r.bound == Bound::kMemory) return AboveRoof::kCache;
  return r.fma_bound_us > 0 && r.measured_us >= r.fma_bound_us ? AboveRoof::kBeatsGemm : AboveRoof::kRoofTooLow;
}

const char* AboveRoofName(AboveRoof a) {
  switch (a) {
    case AboveRoof::kCache: return "cache";
    case AboveRoof::kBeatsGemm: return "beats_gemm";
    case AboveRoof::kRoofTooLow: return "roof_too_low";
    case AboveRoof::kNo: break;
  }
  return "no";
}

std::string AboveRoofNote(const RooflinePoint& r) {
  switch (AboveRoofOf(r)) {
    case AboveRoof::kCache: return "above the memory roof: its data came from cache, not DRAM";
    case AboveRoof::kBeatsGemm:
      return "above the compute roof (the calibrated GEMM's rate): faster than that GEMM, under the FMA loop's peak";
    case AboveRoof::kRoofTooLow:
      return "above the compute roof, which is then too low for this machine: calibrated on a loaded machine, or "
             "--peak-flops; `ops-debug calibrate --refresh` when it is quiet";
    case AboveRoof::kNo: break;
  }
  return "";
}

std::string AboveRoofGroups(const std::vector<std::pair<std::string, std::string>>& named_notes,
                            const std::string& indent) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // note, names
  for (const auto& named : named_notes) {
    const std::string& note = named.second;
    if (note.empty()) continue;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == note; });
    if (g == groups.end()) g = groups.insert(groups.end(), {note, {}});
    g->second.push_back(named.first);
  }
  constexpr size_t kNames = 6;
  std::string out;
  for (const auto& [note, names] : groups) {
    out += indent;
    for (size_t i = 0; i < names.size() && i < kNames; ++i) out += (i ? ", " : "") + names[i];
    if (names.size() > kNames) out += " and " + std::to_string(names.size() - kNames) + " more";
    out += ": " + note + "\n";
  }
  return out;
}

const char* BoundName(Bound b) {
  switch (b) {
    case Bound::kMemory: return "memory";
    case Bound::kCompute: return "compute";
    case Bound::kNone: break;
  }
  return "none";
}

double RooflinePoint::efficiency() const {
  return bound != Bound::kNone && measured_us > 0 ? lower_bound_us / measured_us : -1;
}

double RooflinePoint::slowdown() const {
  return bound != Bound::kNone && measured_us > 0 && lower_bound_us > 0 ? measured_us / lower_bound_us : -1;
}

std::optional<Cost> CostOf(const OpSchema& op, const std::vector<TensorDesc>& inputs,
                           const std::vector<TensorDesc>& outputs, const Attrs& attrs) {
  if (!op.cost) return std::nullopt;
  return op.cost(OpCall(inputs, outputs, attrs));
}

RooflinePoint Roofline(const std::optional<Cost>& cost, DType dtype, double measured_us, const RoofPeaks& peaks) {
  RooflinePoint r;
  r.measured_us = measured_us < 0 ? -1 : measured_us;
  if (!cost) return r;
  r.has_cost = true;
  r.bytes = cost->bytes_read + cost->bytes_written;
  r.flops = cost->flops;
  if (r.bytes > 0) r.intensity = r.flops / static_cast<double>(r.bytes);
  if (measured_us > 0) {
    r.achieved_gbs = static_cast<double>(r.bytes) / (measured_us * 1e3);
    r.achieved_gflops = r.flops / (measured_us * 1e3);
  }
  const double bandwidth = peaks.bandwidth_gbs, compute = peaks.GflopsFor(dtype);
  if (bandwidth > 0) r.memory_bound_us = static_cast<double>(r.bytes) / (bandwidth * 1e3);
  if (compute > 0) r.compute_bound_us = r.flops / (compute * 1e3);
  if (const double fma = peaks.FmaGflopsFor(dtype); fma > 0) r.fma_bound_us = r.flops / (fma * 1e3);
  // A roof the op needs is unknown, or the op costs nothing: no bound to hold it to.
  const bool memory_known = r.bytes <= 0 || bandwidth > 0, compute_known = r.flops <= 0 || compute > 0;
  if (!memory_known || !compute_known || (r.bytes <= 0 && r.flops <= 0)) return r;
  r.lower_bound_us = std::max(r.memory_bound_us, r.compute_bound_us);
  r.bound = r.compute_bound_us > r.memory_bound_us ? Bound::kCompute : Bound::kMemory;
  return r;
}

}  // namespace opscope
