#include "analysis/diagnose/attribution.h"

#include <algorithm>

#include "analysis/diagnose/attribution_facts.h"
#include "core/text_format.h"

// The rules live one family per file beside this one (out_of_bounds_rule.cc,
// hang_rule.cc, value_rules.cc, refused_rule.cc, race_rule.cc,
// sanitizer_rule.cc, verdict_rule.cc, signal_rules.cc); here they run and are ranked.
namespace opscope {

std::string ShapeText(const DiagTensor& t) { return t.dtype + CoordsText(t.shape); }

std::vector<DiagCause> Attribute(const AttributionInput& in) {
  std::vector<DiagCause> out;
  if (in.diagnosis == nullptr) return out;
  using namespace attribution;
  OutOfBounds(in, out);
  Hang(in, out);
  Refused(in, out);
  Races(in, out);
  NumericOrigin(in, out);
  Upstream(in, out);
  SanitizerReports(in, out);
  RunVerdict(in, out);
  Signals(in, out);
  // Values that were already bad when the failing launch read them explain
  // its crash: their origin, then the hand-over, rank above the symptom.
  const bool upstream = std::any_of(out.begin(), out.end(), [](const DiagCause& c) { return c.rule == "upstream-values"; });
  for (DiagCause& c : out) {
    if (upstream && c.rule == "upstream-values") c.score = 93;
    if (upstream && c.rule == "nan-origin") c.score = 95;
  }
  std::stable_sort(out.begin(), out.end(), [](const DiagCause& a, const DiagCause& b) { return a.score > b.score; });
  return out;
}

}  // namespace opscope
