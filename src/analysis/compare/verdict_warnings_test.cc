// A pass that hides wrong values is never silent (issue 25): the exact
// negation of tiny expected values passes the mixed rule's floor, and says
// why it should not be trusted; correct outputs carry no warning.
#include "analysis/compare/verdict_warnings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

namespace opscope {
namespace {

Tensor WarnFilled(int64_t n, const std::function<double(int64_t)>& value) {
  auto t = Tensor::Empty(DType::kF32, Shape({n}));
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < n; ++i) t->FlatSetFromDouble(i, value(i));
  return *t;
}

// Values in (0, 3.4e-9), spread without a pattern.
double Tiny(int64_t i) { return 3.4e-9 * (0.05 + 0.9 * std::fmod(0.6180339887 * static_cast<double>(i + 1), 1.0)); }

std::set<std::string> Kinds(const CompareResult& r) {
  std::set<std::string> kinds;
  for (const CompareFinding& w : r.warnings) kinds.insert(w.kind);
  return kinds;
}

TEST(VerdictWarnings, TheNegationOfTinyValuesPassesWithAllThreeWarnings) {
  Tensor e = WarnFilled(1000, Tiny), a = WarnFilled(1000, [](int64_t i) { return -Tiny(i); });
  auto r = CompareTensors(a, e, DefaultTolerance(DType::kF32));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->mismatched, 0);
  EXPECT_TRUE(r->passed());
  EXPECT_EQ(r->floor_decides, 1000);
  EXPECT_EQ(r->floor_allows_tenth, 1000);
  EXPECT_EQ(r->sign_flips, 1000);
  EXPECT_EQ(Kinds(*r), (std::set<std::string>{"floor_decides", "low_cosine", "sign_flip"}));
  for (const CompareFinding& w : r->warnings) {
    if (w.kind == "floor_decides") {
      EXPECT_EQ(w.text.rfind("the absolute floor 1e-05 decides for 100% of elements (|expected| < abserr/relerr = 1)", 0), 0u)
          << w.text;
      EXPECT_NE(w.text.find("--abserr 0 to see them"), std::string::npos) << w.text;
    }
    if (w.kind == "low_cosine") EXPECT_EQ(w.text.rfind("cosine similarity -1 is below 0.99", 0), 0u) << w.text;
    if (w.kind == "sign_flip") {
      EXPECT_EQ(w.text, "the sign is flipped on 100% of the 1,000 elements where neither side is zero");
    }
  }
  // --strict fails the same pass; --abserr 0 sees every element wrong.
  Tolerance strict = DefaultTolerance(DType::kF32);
  strict.strict = true;
  auto s = CompareTensors(a, e, strict);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->passed());
  EXPECT_EQ(s->mismatched, 0);
  auto no_floor = CompareTensors(a, e, Tolerance{.atol = 0, .rtol = 1e-5});
  ASSERT_TRUE(no_floor.ok());
  EXPECT_EQ(no_floor->mismatched, 1000);
  EXPECT_TRUE(no_floor->warnings.empty());  // a failure is loud already
}

TEST(VerdictWarnings, CorrectOutputsCarryNone) {
  // Values around 0.5 (a sigmoid's): the floor decides there (|e| < 1) but
  // still sees a 0.002% error, so it hides nothing worth a warning.
  Tensor e = WarnFilled(4096, [](int64_t i) { return 0.2 + 0.6 * std::fmod(0.7548776662 * static_cast<double>(i), 1.0); });
  Tensor a = WarnFilled(4096, [&](int64_t i) { return e.FlatGetAsDouble(i) * (1 + 1e-7); });
  auto r = CompareTensors(a, e, DefaultTolerance(DType::kF32));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->passed());
  EXPECT_EQ(r->floor_decides, 4096);
  EXPECT_EQ(r->floor_allows_tenth, 0);
  EXPECT_TRUE(r->warnings.empty()) << r->warnings[0].text;
  // Signed values of both signs, right to rounding: no flip, cosine 1.
  Tensor se = WarnFilled(4096, [](int64_t i) { return std::sin(0.37 * static_cast<double>(i)) * 3; });
  auto signed_r = CompareTensors(se, se, DefaultTolerance(DType::kF32));
  ASSERT_TRUE(signed_r.ok());
  EXPECT_TRUE(signed_r->warnings.empty());
  EXPECT_EQ(signed_r->sign_flips, 0);
  // Rules without a floor count none.
  auto abs_rule = CompareTensors(se, se, Tolerance{.atol = 1e-3, .rule = CompareRule::kAbsolute});
  ASSERT_TRUE(abs_rule.ok());
  EXPECT_EQ(abs_rule->floor_decides, -1);
}

TEST(VerdictWarnings, AllZeroAgainstTinyValuesIsALowCosineNotAFlip) {
  Tensor e = WarnFilled(100, Tiny), a = WarnFilled(100, [](int64_t) { return 0.0; });
  auto r = CompareTensors(a, e, DefaultTolerance(DType::kF32));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->passed());
  EXPECT_EQ(Kinds(*r), (std::set<std::string>{"floor_decides", "low_cosine"}));
  EXPECT_EQ(r->nonzero_pairs, 0);
}

}  // namespace
}  // namespace opscope
