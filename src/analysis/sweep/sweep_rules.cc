// The sweep's verdicts (opscope/sweep.h): the noise rule, which candidate is
// best, and what a winning change means in words. Apart from the running so
// that they are tested on synthetic times.
#include <cmath>

#include "opscope/sweep.h"

namespace opscope {

const char* CandidateStatusName(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::kPassed: return "passed";
    case CandidateStatus::kFailed: return "FAILED";
    case CandidateStatus::kError: return "error";
  }
  return "error";
}

double NoiseUs(const TimingStats& current, const TimingStats& candidate) {
  return (current.iqr() + candidate.iqr()) / 2;
}

bool IsFaster(const TimingStats& candidate, const TimingStats& current) {
  if (candidate.count == 0 || current.count == 0) return false;
  // Both spreads judge it: the medians apart by more than the mean IQR, or
  // the candidate's slower quartile faster than the current's faster one (a
  // tight 0.52 ms is faster than a loaded 2.48 ms whose own wide IQR would
  // otherwise shield it).
  return current.median - candidate.median > NoiseUs(current, candidate) || candidate.p75 < current.p25;
}

std::string CandidateText(const TunableValues& t) {
  std::string s;
  for (const auto& [name, value] : t) s += (s.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return s;
}

std::string SweepFlagFor(const std::string& tunable) {
  if (tunable == "block" || tunable == "vec") return "--" + tunable;
  return "--tunable " + tunable;
}

std::string DirectionHint(const TunableValues& from, const TunableValues& to) {
  std::string hint;
  for (const auto& [name, value] : to) {
    auto it = from.find(name);
    if (it == from.end() || it->second == value) continue;
    const bool larger = value > it->second;
    std::string words;
    if (name == "block") {
      words = larger ? "larger blocks: fewer scheduling steps" : "smaller blocks: more of them to spread over the workers";
    } else if (name == "vec") {
      words = larger ? "more elements per work item" : "fewer elements per work item";
    } else {
      words = std::string(larger ? "larger " : "smaller ") + name;
    }
    hint += (hint.empty() ? "" : "; ") + words + " (" + name + " " + std::to_string(it->second) + " -> " +
            std::to_string(value) + ")";
  }
  return hint;
}

void ChooseBest(SweepReport& r) {
  r.best = -1;
  r.fastest = -1;
  r.faster = false;
  r.gain_pct = 0;
  r.noise_us = 0;
  r.direction.clear();
  int fastest = -1;
  for (int i = 0; i < static_cast<int>(r.candidates.size()); ++i) {
    const SweepCandidate& c = r.candidates[i];
    if (!c.passed() || c.device_us.count == 0) continue;  // a wrong candidate is never best
    if (fastest < 0 || c.device_us.median < r.candidates[fastest].device_us.median) fastest = i;
  }
  if (fastest < 0) return;
  r.fastest = fastest;
  const SweepCandidate* current = r.current_candidate();
  const bool current_usable = current != nullptr && current->passed() && current->device_us.count > 0;
  if (current_usable && !IsFaster(r.candidates[fastest].device_us, current->device_us)) {
    r.best = r.current;  // within the noise: not called faster
    if (fastest != r.current) r.noise_us = NoiseUs(current->device_us, r.candidates[fastest].device_us);
    return;
  }
  r.best = fastest;
  r.faster = fastest != r.current;
  if (current == nullptr || current->device_us.count == 0) return;
  const SweepCandidate& best = r.candidates[fastest];
  r.noise_us = NoiseUs(current->device_us, best.device_us);
  if (best.device_us.median > 0) r.gain_pct = (current->device_us.median / best.device_us.median - 1) * 100;
  if (r.gain_pct > 50) r.direction = DirectionHint(current->tunables, best.tunables);
}

}  // namespace opscope
