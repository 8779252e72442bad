// sweep.json ("opscope.sweep/1"), and reading it back: the file is also the
// cache a rerun resumes from, so every candidate keeps what the report needs.
#include <nlohmann/json.hpp>

#include "analysis/profile/profile_json.h"
#include "core/json_text.h"
#include "opscope/sweep.h"

namespace opscope {
namespace {

using nlohmann::json;
using ordered = nlohmann::ordered_json;  // sweep.json reads top-down: schema first

constexpr char kSchema[] = "opscope.sweep/1";

json TunablesJson(const TunableValues& t) {
  json j = json::object();
  for (const auto& [name, value] : t) j[name] = value;
  return j;
}

json CandidateRef(const SweepReport& r, int index) {
  const SweepCandidate* c = r.At(index);
  if (c == nullptr) return nullptr;
  return {{"index", index}, {"tunables", TunablesJson(c->tunables)}, {"median_us", c->device_us.median}};
}

TimingStats StatsFrom(const json& j) {
  TimingStats s;
  s.count = j.value("count", 0);
  s.min = j.value("min_us", 0.0);
  s.p25 = j.value("p25_us", 0.0);
  s.median = j.value("median_us", 0.0);
  s.mean = j.value("mean_us", 0.0);
  s.p75 = j.value("p75_us", 0.0);
  s.max = j.value("max_us", 0.0);
  return s;
}

double NumberOr(const json& j, const char* key, double fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

RooflinePoint RooflineFrom(const json& j) {
  RooflinePoint p;
  p.has_cost = j.value("has_cost_model", false);
  p.bytes = j.value("bytes", int64_t{0});
  p.flops = NumberOr(j, "flops", 0);
  p.measured_us = NumberOr(j, "measured_us", -1);
  p.memory_bound_us = NumberOr(j, "memory_bound_us", 0);
  p.compute_bound_us = NumberOr(j, "compute_bound_us", 0);
  p.lower_bound_us = NumberOr(j, "lower_bound_us", 0);
  const std::string bound = j.value("bound", "none");
  p.bound = bound == "memory" ? Bound::kMemory : bound == "compute" ? Bound::kCompute : Bound::kNone;
  p.achieved_gbs = NumberOr(j, "achieved_gbs", 0);
  p.achieved_gflops = NumberOr(j, "achieved_gflops", 0);
  p.intensity = NumberOr(j, "intensity_flops_per_byte", 0);
  return p;
}

}  // namespace

std::string SweepJson(const SweepReport& r) {
  ordered axes = ordered::array();
  for (const SweepAxis& a : r.axes) axes.push_back({{"name", a.name}, {"values", a.values}});
  ordered candidates = ordered::array();
  for (const SweepCandidate& c : r.candidates) {
    candidates.push_back(ordered{{"tunables", TunablesJson(c.tunables)},
                          {"status", CandidateStatusName(c.status)},
                          {"why", c.why},
                          {"kernel", c.kernel},
                          {"cached", c.cached},
                          {"device", ordered(TimingStatsJson(c.device_us))},
                          {"roofline", ordered(RooflineJson(c.roofline))}});
  }
  ordered j = {{"schema", kSchema},
            {"complete", r.complete},
            {"op", r.op},
            {"device", r.device},
            {"instance", r.instance},
            {"key", r.key},
            {"build", r.build},
            {"tunables", axes},
            {"warmup", r.warmup},
            {"iterations", r.iterations},
            {"peaks", {{"bandwidth_gbs", r.peaks.bandwidth_gbs}, {"gflops_f32", r.peaks.gflops_f32},
                       {"gflops_f64", r.peaks.gflops_f64}, {"source", r.peaks.source}}},
            {"noise_rule", "faster only when median(current) - median(candidate) > (IQR(current) + IQR(candidate)) / 2, "
                           "or p75(candidate) < p25(current)"},
            {"candidates_planned", r.total},
            {"candidates_done", r.candidates.size()},
            {"cached", r.cached},
            {"measured", r.measured},
            {"candidates", candidates},
            {"current", ordered(CandidateRef(r, r.current))},
            {"best", ordered(CandidateRef(r, r.best))},
            {"fastest", ordered(CandidateRef(r, r.fastest))},
            {"faster", r.faster},
            {"gain_pct", r.gain_pct},
            {"noise_us", r.noise_us},
            {"direction", r.direction},
            {"repro", r.repro}};
  return JsonText(j, 2) + "\n";
}

StatusOr<SweepReport> ParseSweepJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgumentError("not JSON");
  if (j.value("schema", "") != kSchema) return InvalidArgumentError(std::string("schema is not ") + kSchema);
  SweepReport r;
  try {
    r.complete = j.value("complete", false);
    r.op = j.value("op", "");
    r.device = j.value("device", "");
    r.instance = j.value("instance", "");
    r.key = j.value("key", "");
    r.build = j.value("build", "");
    r.warmup = j.value("warmup", 0);
    r.iterations = j.value("iterations", 0);
    r.total = j.value("candidates_planned", 0);
    r.repro = j.value("repro", "");
    for (const json& a : j.at("tunables")) r.axes.push_back({a.at("name").get<std::string>(), a.at("values").get<std::vector<int64_t>>()});
    for (const json& c : j.at("candidates")) {
      SweepCandidate k;
      for (const auto& [name, value] : c.at("tunables").items()) k.tunables[name] = value.get<int64_t>();
      const std::string status = c.value("status", "error");
      k.status = status == "passed" ? CandidateStatus::kPassed
                 : status == "FAILED" ? CandidateStatus::kFailed : CandidateStatus::kError;
      k.why = c.value("why", "");
      k.kernel = c.value("kernel", "");
      k.cached = c.value("cached", false);
      k.device_us = StatsFrom(c.at("device"));
      k.roofline = RooflineFrom(c.at("roofline"));
      r.candidates.push_back(std::move(k));
    }
    if (j.contains("current") && j["current"].is_object()) r.current = j["current"].value("index", -1);
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("malformed: ") + e.what());
  }
  ChooseBest(r);
  return r;
}

}  // namespace opscope
