#include "analysis/compare/verdict_warnings.h"

#include "core/text_format.h"

namespace opscope {
namespace {

std::string Share(int64_t part, int64_t whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return text;
}

double Fraction(int64_t part, int64_t whole) { return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0; }

}  // namespace

void AddVerdictWarnings(CompareResult& r) {
  if (r.mismatched > 0 || r.finite_pairs == 0) return;
  const int64_t n = r.finite_pairs;
  const Tolerance& t = r.tolerance;
  // The floor hides errors only where it is both the deciding bound and
  // large against the values: a floor of 1e-5 on values near 0.5 decides
  // there, but still sees a 0.002% error.
  if (r.floor_decides * 2 > n && r.floor_allows_tenth * 2 > n) {
    const std::string below = t.rtol > 0 ? "|expected| < abserr/relerr = " + ShortNum(t.atol / t.rtol) : "relerr 0";
    r.warnings.push_back({"floor_decides", "tolerance",
                          "the absolute floor " + ShortNum(t.atol) + " decides for " + Share(r.floor_decides, n) +
                              " of elements (" + below + ") and allows an error of a tenth of |expected| or more on " +
                              Share(r.floor_allows_tenth, n) + ": errors below it are invisible; --abserr 0 to see them",
                          0, Fraction(r.floor_decides, n),
                          {{"abserr", t.atol}, {"floor_decides", static_cast<double>(r.floor_decides)},
                           {"allows_a_tenth", static_cast<double>(r.floor_allows_tenth)}}});
  }
  if (n >= 2 && r.cosine < kCosineWarnBelow) {
    r.warnings.push_back({"low_cosine", "actual",
                          "cosine similarity " + ShortNum(r.cosine) + " is below " + ShortNum(kCosineWarnBelow) +
                              ": actual does not point the way expected does, though every element is within the tolerance",
                          0, 1, {{"cosine", r.cosine}, {"bound", kCosineWarnBelow}}});
  }
  if (r.nonzero_pairs > 0 && r.sign_flips * 2 > r.nonzero_pairs) {
    r.warnings.push_back({"sign_flip", "actual",
                          "the sign is flipped on " + Share(r.sign_flips, r.nonzero_pairs) + " of the " +
                              WithThousands(r.nonzero_pairs) + " elements where neither side is zero",
                          0, Fraction(r.sign_flips, n),
                          {{"flipped", static_cast<double>(r.sign_flips)}, {"nonzero", static_cast<double>(r.nonzero_pairs)}}});
  }
}

}  // namespace opscope
