// ToleranceSpec: the thresholds a user asks for, over the dtype's defaults.
#include <cstdio>
#include <string>

#include "core/text_format.h"
#include "opscope/compare.h"

namespace opscope {

const char* const kToleranceHelp =
    "Rules (--mode): mixed |a-e| <= abserr + relerr*|e| (the default for floats); abs |a-e| <= abserr;\n"
    "rel |a-e| <= max(abserr, relerr*|e|): where |e| < abserr/relerr, near zero, the absolute bound decides,\n"
    "so a relative error against an expected 0 never fails an element alone (max rel err is reported over\n"
    "expected != 0 only); exact: identical bits (the default for integers and bool); ulp:N at most N steps\n"
    "apart in the actual's dtype. Default abserr/relerr by dtype: float64 1e-12/1e-10, float32 1e-5/1e-5,\n"
    "float16 1e-3/1e-3, bfloat16 1e-2/1e-2. NaN matches only NaN, an infinity only the same infinity.\n"
    "The threshold applied is always printed. Conv, ConvTranspose, Gemm, MatMul and their fused forms, with no\n"
    "tolerance given, raise abserr to the rounding of their K-term float sums, 2 sqrt(K) u K mean|A| mean|B|, and say so.\n"
    "A pass is said with warnings when the absolute floor judges most\n"
    "elements alone and allows a tenth of |e| there, when the cosine similarity is below 0.99, or when most\n"
    "signs are flipped; --strict fails such a pass (exit 1).";

StatusOr<Tolerance> ResolveTolerance(const ToleranceSpec& f, DType dtype) {
  Tolerance t = DefaultTolerance(dtype);
  std::optional<int64_t> max_ulp = f.max_ulp;
  if (!f.rule.empty()) {
    std::string rule = f.rule;
    // "ulp:4" is the ulp rule with its step count.
    if (rule.rfind("ulp:", 0) == 0) {
      int64_t n = -1;
      try {
        size_t used = 0;
        n = std::stoll(rule.substr(4), &used);
        if (used != rule.size() - 4) n = -1;
      } catch (...) {
        n = -1;
      }
      if (n < 0) return InvalidArgumentError("rule '" + f.rule + "': expected ulp:N with N a whole number >= 0");
      rule = "ulp";
      max_ulp = n;
    }
    auto parsed = ParseCompareRule(rule);
    if (!parsed.ok()) return std::move(parsed).status().WithContext("rule");
    t.rule = *parsed;
    if (t.rule != CompareRule::kBitExact && !IsFloat(dtype) && t.rule != CompareRule::kUlp) t = {0, 0, t.rule};
  } else if ((f.atol || f.rtol) && t.rule == CompareRule::kBitExact) {
    t.rule = CompareRule::kMixed;  // a tolerance given for integers asks for a tolerant rule
  }
  if (f.atol) {
    if (!(*f.atol >= 0)) return InvalidArgumentError("atol: must be >= 0, got " + ShortNum(*f.atol));
    t.atol = *f.atol;
  }
  if (f.rtol) {
    if (!(*f.rtol >= 0)) return InvalidArgumentError("rtol: must be >= 0, got " + ShortNum(*f.rtol));
    t.rtol = *f.rtol;
  }
  if (max_ulp) {
    if (*max_ulp < 0) return InvalidArgumentError("max_ulp: must be >= 0, got " + std::to_string(*max_ulp));
    if (t.rule != CompareRule::kUlp) return InvalidArgumentError("max_ulp: only used with `rule` ulp");
    t.max_ulp = *max_ulp;
  }
  if (f.worst_k < 0) return InvalidArgumentError("worst_k: must be >= 0, got " + std::to_string(f.worst_k));
  t.strict = f.strict;
  return t;
}

std::string ToleranceSpecFlags(const ToleranceSpec& f) {
  std::string s;
  char buf[64];
  if (!f.rule.empty()) s += " --mode " + ShellQuote(f.rule);
  if (f.atol) std::snprintf(buf, sizeof buf, " --abserr %.17g", *f.atol), s += buf;
  if (f.rtol) std::snprintf(buf, sizeof buf, " --relerr %.17g", *f.rtol), s += buf;
  if (f.max_ulp) s += " --max-ulp " + std::to_string(*f.max_ulp);
  if (f.strict) s += " --strict";
  return s;
}

}  // namespace opscope
