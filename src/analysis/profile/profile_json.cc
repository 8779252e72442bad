#include "analysis/profile/profile_json.h"

#include "analysis/compare/launch_resources_json.h"
#include "analysis/suspects/suspects_json.h"

namespace opscope {

nlohmann::json TimingStatsJson(const TimingStats& s) {
  return {{"count", s.count}, {"min_us", s.min}, {"p25_us", s.p25}, {"median_us", s.median},
          {"mean_us", s.mean},  {"p75_us", s.p75}, {"max_us", s.max}, {"iqr_us", s.iqr()}};
}

nlohmann::json RooflineJson(const RooflinePoint& r) {
  auto or_null = [](double v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(); };
  return {{"has_cost_model", r.has_cost},       {"bytes", r.bytes},
          {"flops", r.flops},                   {"measured_us", or_null(r.measured_us)},
          {"memory_bound_us", r.memory_bound_us}, {"compute_bound_us", r.compute_bound_us},
          {"lower_bound_us", r.lower_bound_us}, {"bound", BoundName(r.bound)},
          {"achieved_gbs", r.achieved_gbs},     {"achieved_gflops", r.achieved_gflops},
          {"intensity_flops_per_byte", r.intensity}, {"efficiency", or_null(r.efficiency())},
          {"slowdown", or_null(r.slowdown())}};
}

nlohmann::json OpProfileJson(const OpProfile& p) {
  nlohmann::json phases = nlohmann::json::array();
  for (const PhaseProfile& ph : p.phases) phases.push_back({{"phase", ph.name}, {"us", TimingStatsJson(ph.us)}});
  nlohmann::json launches = nlohmann::json::array();
  for (const KernelLaunchInfo& l : p.launches) {
    launches.push_back({{"name", l.name},
                        {"grid", {l.config.grid.x, l.config.grid.y, l.config.grid.z}},
                        {"block", {l.config.block.x, l.config.block.y, l.config.block.z}},
                        {"vector_width", l.config.vector_width}});
    AddLaunchResources(l, launches.back());
  }
  nlohmann::json cost = nullptr;
  if (p.cost) cost = {{"bytes_read", p.cost->bytes_read}, {"bytes_written", p.cost->bytes_written}, {"flops", p.cost->flops}};
  return {{"scope", ProfileScopeName(p.scope)},
          {"warmup", p.warmup},
          {"iterations", p.iterations},
          {"cold_cache", p.cold_cache},
          {"api", TimingStatsJson(p.api_us)},
          {"device", TimingStatsJson(p.device_us)},
          {"queue", TimingStatsJson(p.queue_us)},
          {"phases", phases},
          {"launches", launches},
          {"cost", cost},
          {"dtype", DTypeName(p.dtype)},
          {"peaks", {{"bandwidth_gbs", p.peaks.bandwidth_gbs}, {"gflops_f32", p.peaks.gflops_f32},
                     {"gflops_f64", p.peaks.gflops_f64}, {"source", p.peaks_note}}},
          {"roofline", RooflineJson(p.roofline)},
          {"suspects", SuspectsJson(p.suspects)},
          {"overhead", {{"recorded_api", TimingStatsJson(p.api_us)}, {"unrecorded_api", TimingStatsJson(p.unrecorded_api_us)},
                        {"per_call_us", p.overhead_us}}},
          {"timeline", p.timeline_file.empty() ? nlohmann::json() : nlohmann::json(p.timeline_file)},
          {"html", p.html_file.empty() ? nlohmann::json() : nlohmann::json(p.html_file)}};
}

}  // namespace opscope
