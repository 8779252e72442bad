#include "analysis/diagnose/attribution_facts.h"

#include <cmath>

#include "core/text_format.h"

namespace opscope::attribution {
namespace {

// The largest x whose exp the dtype still holds (ln of its largest finite value).
double ExpLimit(const std::string& dtype) {
  if (dtype == "float16") return 11.09;
  if (dtype == "float64") return 709.78;
  return 88.72;  // float32 and bfloat16 share the exponent range
}

}  // namespace

void NumericOrigin(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  for (const DiagLaunch& l : d.trajectory) {
    if (l.kind != "launch") continue;
    bool inputs_finite = true, any_input = false;
    for (const DiagTensor& t : l.tensors) {
      if (t.role != "input") continue;
      if (!t.has_stats) { inputs_finite = false; break; }
      any_input = true;
      inputs_finite = inputs_finite && Finite(t);
    }
    if (!inputs_finite || !any_input) continue;
    for (const DiagTensor& o : l.tensors) {
      if (o.role != "output" || !o.has_stats || (o.nan == 0 && o.inf == 0)) continue;
      DiagCause cause;
      cause.rule = "nan-origin";
      const bool nan = o.nan > 0;
      cause.cause = std::string(nan ? "NaN" : "Inf") + " first appears in " + LaunchText(l) + ": its output " + o.name +
                    " holds " + std::to_string(nan ? o.nan : o.inf) + " of " + std::to_string(o.count) + " " +
                    (nan ? "NaN" : "Inf") + " while its inputs are finite: numerical instability in " + l.op;
      cause.confidence = "high";
      // Inf alone: values grew past the dtype's range; NaN: 0/0, Inf-Inf, or a log or sqrt of a negative.
      std::string hint = !nan ? "an overflow: values past the dtype's range (an exp, a square or a product)" : "";
      bool overflow = false;
      if (!o.first_bad.empty()) {
        std::string at;
        for (size_t k = 0; k < o.first_bad.size(); ++k) at += (k ? "," : "") + std::to_string(o.first_bad[k]);
        cause.evidence.push_back("first " + std::string(nan ? "NaN" : "Inf") + " at " + o.name + "[" + at + "], row " +
                                 std::to_string(o.row));
      }
      for (const DiagTensor& t : l.tensors) {
        if (t.role != "input") continue;
        cause.evidence.push_back("input " + RangeText(t));
        if (t.row >= 0) {
          cause.evidence.push_back("row " + std::to_string(t.row) + " of " + t.name + " is in [" + ShortNum(t.row_min) +
                                   ", " + ShortNum(t.row_max) + "]" +
                                   (t.row_min == 0 && t.row_max == 0 ? ": all zeros" : ""));
          // A row reaching past ln(max) overflows an exp to Inf, and Inf/Inf
          // or Inf - Inf (a softmax's sum, a log-sum-exp) makes the NaN: an
          // overflow, whatever else the row holds (it may well hold 0 too).
          const double limit = ExpLimit(o.dtype.empty() ? t.dtype : o.dtype);
          if (!overflow && t.row_max > limit) {
            hint = "an overflow: row " + std::to_string(t.row) + " of " + t.name + " reaches " + ShortNum(t.row_max) +
                   ", past " + ShortNum(limit) + " where exp overflows " + (o.dtype.empty() ? t.dtype : o.dtype) +
                   (nan ? " (exp to Inf, then Inf/Inf or Inf - Inf is NaN)" : "");
            overflow = true;
          }
          if (!overflow && nan && t.row_min <= 0 && t.row_max >= 0) {
            hint = "row " + std::to_string(t.row) + " of " + t.name +
                   " reaches 0: a division by (about) zero, e.g. a norm without an epsilon";
          }
        }
        const std::string dtype = o.dtype.empty() ? t.dtype : o.dtype;
        if (!overflow && t.row < 0 && t.max > ExpLimit(dtype)) {
          hint = "an overflow: " + t.name + " reaches " + ShortNum(t.max) + ", past " + ShortNum(ExpLimit(dtype)) +
                 " where exp overflows " + dtype + (nan ? " (exp to Inf, then Inf/Inf or Inf - Inf is NaN)" : "");
          overflow = true;
        }
        if (!hint.empty()) continue;
        if (nan && t.min <= 0 && t.max >= 0) hint = "an input range that includes 0: a division by (about) zero or a log/sqrt of a non-positive value";
        else if (nan) hint = "0/0, Inf - Inf, or a log or sqrt of a negative value";
      }
      cause.evidence.push_back("output " + RangeText(o));
      if (!hint.empty()) cause.evidence.push_back("likely: " + hint);
      cause.fix = overflow ? "subtract the row's max before exp (as a stable softmax or log-sum-exp does), or compute in a wider type"
                           : "add an epsilon to the denominator (or under the sqrt), clamp before exp/log, or accumulate in a wider type";
      cause.score = 70;
      out.push_back(cause);
      return;  // the first origin is the one that matters
    }
  }
}

void Upstream(const AttributionInput& in, std::vector<DiagCause>& out) {
  const Diagnosis& d = *in.diagnosis;
  if (in.failing < 0) return;
  const DiagLaunch& l = d.trajectory[in.failing];
  for (const DiagTensor& t : l.tensors) {
    if (t.role != "input" || !Extreme(t)) continue;
    const DiagLaunch* p = Producer(d, in.failing, t.address);
    DiagCause cause;
    cause.rule = "upstream-values";
    cause.confidence = "medium";
    cause.cause = "input " + t.name + " of " + LaunchText(l) + " already held " +
                  (t.nan || t.inf ? std::string("NaN/Inf") : "extreme values (|x| >= 1e30)") + ": the fault is upstream, " +
                  (p ? "in " + LaunchText(*p) + " that wrote it" : "in the data the program passed in");
    cause.evidence.push_back("input " + RangeText(t));
    if (p) cause.evidence.push_back("written by " + LaunchText(*p) + " (record #" + std::to_string(p->seq) + ")");
    cause.fix = p ? "diagnose " + p->op + " first: it produced these values" : "check the program's input data";
    cause.score = 55;
    out.push_back(cause);
  }
}

}  // namespace opscope::attribution
