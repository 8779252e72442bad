// The run-verdict rule: a failed `ops-debug run` child is a wrong result; one
// whose repeats differed is nondeterministic, and the unordered launches the
// race check saw are named as the likely reason (or their absence said).
#include <gtest/gtest.h>

#include <string>

#include "analysis/diagnose/attribution_facts.h"

namespace opscope {
namespace {

Diagnosis Verdict(const std::string& status) {
  Diagnosis d;
  d.run_status = status;
  d.run_verdict = {"output y float32[4096] FAILED 12 / 4,096 mismatched", "errors only where x < 0"};
  return d;
}

StreamAccess Launch(const std::string& kernel, const std::string& stream) {
  StreamAccess a;
  a.kernel = kernel;
  a.stream = stream;
  return a;
}

std::vector<DiagCause> Causes(const Diagnosis& d, const RaceCheckResult* races) {
  std::vector<DiagCause> out;
  attribution::RunVerdict(AttributionInput{.diagnosis = &d, .races = races}, out);
  return out;
}

TEST(VerdictRule, AFailedRunIsAWrongResultWithItsFindingsAsEvidence) {
  const std::vector<DiagCause> c = Causes(Verdict("failed"), nullptr);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "wrong-result");
  EXPECT_EQ(c[0].cause, "the op ran to the end and its result is wrong: output y float32[4096] FAILED 12 / 4,096 mismatched");
  EXPECT_EQ(c[0].evidence, std::vector<std::string>{"errors only where x < 0"});
}

TEST(VerdictRule, DifferingRepeatsNameTheUnorderedLaunchesTheRaceCheckSaw) {
  RaceCheckResult races;
  Race r;
  r.first = Launch("side_stream_sum_cpu", "cpu/0");
  r.second = Launch("side_stream_add", "cpu/3");
  races.races = {r, r};
  const std::vector<DiagCause> c = Causes(Verdict("nondeterministic"), &races);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule, "nondeterministic");
  ASSERT_EQ(c[0].evidence.size(), 2u);
  EXPECT_EQ(c[0].evidence[1], "unordered launches touch one buffer: kernel side_stream_sum_cpu on stream cpu/0 and "
                              "kernel side_stream_add on stream cpu/3, with no event between them (2 races below): "
                              "the likely reason the repeats differ");

  const std::vector<DiagCause> none = Causes(Verdict("nondeterministic"), nullptr);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].evidence.back().find("no unordered launches were seen"), std::string::npos);
}

TEST(VerdictRule, NoVerdictNoCause) {
  Diagnosis d;
  EXPECT_TRUE(Causes(d, nullptr).empty());
}

}  // namespace
}  // namespace opscope
