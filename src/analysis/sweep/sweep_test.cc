// The sweep's rules on synthetic times (no op runs, nothing timed): the noise
// rule, the choice of the best, the direction, the heatmap's cells and
// escaping, and sweep.json read back as the cache.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "core/sha256.h"
#include "core/text_format.h"
#include "opscope/sweep.h"

namespace opscope {
namespace {

TimingStats Stats(double median, double iqr) {
  TimingStats s;
  s.count = 20;
  s.median = s.mean = median;
  s.p25 = median - iqr / 2;
  s.p75 = median + iqr / 2;
  s.min = s.p25 - 1;
  s.max = s.p75 + 1;
  return s;
}

SweepCandidate Candidate(TunableValues t, CandidateStatus status, double median, double iqr) {
  return {.tunables = std::move(t), .status = status, .device_us = Stats(median, iqr)};
}

TEST(SweepNoise, HalfTheSumOfBothIqrs) {
  EXPECT_DOUBLE_EQ(NoiseUs(Stats(100, 10), Stats(80, 6)), 8);
  // current 100 (IQR 10), candidate IQR 10: noise 10; a difference of exactly 10 is not faster.
  EXPECT_FALSE(IsFaster(Stats(90, 10), Stats(100, 10)));
  EXPECT_TRUE(IsFaster(Stats(89.9, 10), Stats(100, 10)));
  // A wide box on either side widens the noise.
  EXPECT_FALSE(IsFaster(Stats(60, 2), Stats(100, 80)));
  EXPECT_TRUE(IsFaster(Stats(60, 2), Stats(100, 70)));
  // No spread (one timed call): any difference counts; a slower one never does.
  EXPECT_TRUE(IsFaster(Stats(99.9, 0), Stats(100, 0)));
  EXPECT_FALSE(IsFaster(Stats(101, 0), Stats(100, 0)));
  // Untimed: never faster.
  EXPECT_FALSE(IsFaster(TimingStats{}, Stats(100, 0)));
}

TEST(SweepNoise, ACurrentsOwnWideSpreadDoesNotShieldIt) {
  // Under load: the current at median 2.48 ms with a 4.63 ms IQR (a slow
  // tail), a candidate at 0.52 ms (IQR 0.07 ms). The medians are 1.96 ms
  // apart, inside the mean IQR of 2.35 ms, but every quartile of the
  // candidate is below the current's fast quarter: faster.
  TimingStats current = Stats(2480, 0), candidate = Stats(520, 0);
  current.p25 = 900, current.p75 = 5530;
  candidate.p25 = 485, candidate.p75 = 555;
  EXPECT_GT(NoiseUs(current, candidate), current.median - candidate.median);
  EXPECT_TRUE(IsFaster(candidate, current));
  // Overlapping boxes and medians within the noise: not faster.
  candidate.p75 = 1000;
  EXPECT_FALSE(IsFaster(candidate, current));
}

SweepReport Report(std::vector<SweepCandidate> c) {
  SweepReport r{.op = "op", .axes = {{"block", {64, 128, 256, 512}}}, .candidates = std::move(c), .current = 0};
  r.total = static_cast<int>(r.candidates.size());
  return r;
}

TEST(SweepBest, AFastWrongCandidateIsNeverBest) {
  SweepReport r = Report({Candidate({{"block", 64}}, CandidateStatus::kPassed, 100, 4),
                          Candidate({{"block", 128}}, CandidateStatus::kPassed, 60, 4),
                          Candidate({{"block", 512}}, CandidateStatus::kFailed, 10, 1),  // fastest, wrong
                          Candidate({{"block", 256}}, CandidateStatus::kError, 0, 0)});
  r.candidates[3].device_us = {};
  ChooseBest(r);
  ASSERT_EQ(r.best, 1);
  EXPECT_TRUE(r.faster);
  EXPECT_NEAR(r.gain_pct, 100.0 / 60 * 100 - 100, 1e-9);
  EXPECT_DOUBLE_EQ(r.noise_us, 4);
  EXPECT_EQ(r.direction, "larger blocks: fewer scheduling steps (block 64 -> 128)");
}

TEST(SweepBest, WithinTheNoiseTheCurrentStays) {
  SweepReport r = Report({Candidate({{"block", 64}}, CandidateStatus::kPassed, 100, 30),
                          Candidate({{"block", 128}}, CandidateStatus::kPassed, 80, 20)});  // 20 < (30+20)/2
  ChooseBest(r);
  EXPECT_EQ(r.best, 0);
  EXPECT_EQ(r.fastest, 1);  // faster, but within the noise: not called best
  EXPECT_FALSE(r.faster);
  EXPECT_DOUBLE_EQ(r.gain_pct, 0);
  EXPECT_EQ(r.direction, "");
  // The text does not tag the slower current [best]; it names the fastest.
  std::ostringstream text;
  PrintSweep(r, text, false);
  EXPECT_EQ(text.str().find("[best]"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("block=128  passed  median 80.0 us  IQR 20.0 us  [fastest, within the noise]"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("verdict   no candidate is faster than the current one beyond the noise: the fastest, block=128"),
            std::string::npos)
      << text.str();
}

TEST(SweepBest, NoDirectionUnderFiftyPercent) {
  SweepReport r = Report({Candidate({{"block", 64}}, CandidateStatus::kPassed, 140, 2),
                          Candidate({{"block", 256}}, CandidateStatus::kPassed, 100, 2)});
  ChooseBest(r);
  EXPECT_EQ(r.best, 1);
  EXPECT_NEAR(r.gain_pct, 40, 1e-9);
  EXPECT_EQ(r.direction, "");
}

TEST(SweepBest, AWrongCurrentIsBeatenByAnyPassedOne) {
  SweepReport r = Report({Candidate({{"block", 512}}, CandidateStatus::kFailed, 10, 1),
                          Candidate({{"block", 64}}, CandidateStatus::kPassed, 100, 50)});
  ChooseBest(r);
  EXPECT_EQ(r.best, 1);
  EXPECT_TRUE(r.faster);
}

TEST(SweepBest, NoneBestWhenNonePassed) {
  SweepReport r = Report({Candidate({{"block", 512}}, CandidateStatus::kFailed, 10, 1)});
  ChooseBest(r);
  EXPECT_EQ(r.best, -1);
  EXPECT_EQ(r.best_candidate(), nullptr);
  EXPECT_FALSE(r.faster);
}

TEST(SweepDirection, NamesWhatChangedAndHow) {
  EXPECT_EQ(DirectionHint({{"block", 256}, {"vec", 1}}, {{"block", 256}, {"vec", 4}}),
            "more elements per work item (vec 1 -> 4)");
  EXPECT_EQ(DirectionHint({{"block", 512}}, {{"block", 64}}),
            "smaller blocks: more of them to spread over the workers (block 512 -> 64)");
  EXPECT_EQ(DirectionHint({{"block", 64}, {"tile", 8}}, {{"block", 128}, {"tile", 4}}),
            "larger blocks: fewer scheduling steps (block 64 -> 128); smaller tile (tile 8 -> 4)");
  EXPECT_EQ(DirectionHint({{"block", 64}}, {{"block", 64}}), "");
}

SweepReport Grid2x2() {
  SweepReport r{.op = "op<&\"x\">", .axes = {{"block", {64, 128}}, {"vec", {1, 4}}}, .current = 0};
  r.candidates = {Candidate({{"block", 64}, {"vec", 1}}, CandidateStatus::kPassed, 200, 2),
                  Candidate({{"block", 128}, {"vec", 1}}, CandidateStatus::kPassed, 100, 2),
                  Candidate({{"block", 64}, {"vec", 4}}, CandidateStatus::kFailed, 20, 2),
                  Candidate({{"block", 128}, {"vec", 4}}, CandidateStatus::kPassed, 150, 2)};
  r.candidates[2].why = "y: 3 / 8 mismatched <&>";
  r.total = 4;
  r.complete = true;
  ChooseBest(r);
  return r;
}

TEST(SweepHeatmap, OneCellPerCombinationFailedOnesCrossed) {
  const SweepReport r = Grid2x2();
  ASSERT_EQ(r.best, 1);
  const std::string svg = SweepHeatmapSvg(r);
  EXPECT_EQ(CountOccurrences(svg, "<g class=\"cell"), 4) << svg;
  EXPECT_EQ(CountOccurrences(svg, "<g class=\"cell failed"), 1);
  EXPECT_EQ(CountOccurrences(svg, "class=\"cross\""), 2);  // two strokes of one cross
  EXPECT_EQ(CountOccurrences(svg, ">FAILED</text>"), 1);
  EXPECT_EQ(CountOccurrences(svg, "cell passed best"), 1);
  EXPECT_EQ(CountOccurrences(svg, "cell passed current"), 1);
  EXPECT_NE(svg.find("<g class=\"cell failed\" data-x=\"64\" data-y=\"4\">"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1.00x</text>"), std::string::npos);  // the best against itself
  EXPECT_NE(svg.find(">2.00x</text>"), std::string::npos);  // 200 over 100
  // Escaped: the op's name and the failure's words never open a tag.
  EXPECT_EQ(svg.find("op<&"), std::string::npos);
  EXPECT_NE(svg.find("op&lt;&amp;&quot;x&quot;&gt;"), std::string::npos);
  EXPECT_NE(svg.find("mismatched &lt;&amp;&gt;"), std::string::npos);
  EXPECT_TRUE(std::regex_search(svg, std::regex("^<svg xmlns=\"http://www.w3.org/2000/svg\"")));
  const std::string html = SweepHtml(r);
  EXPECT_EQ(html.find("op<&"), std::string::npos);
  EXPECT_NE(html.find(svg), std::string::npos);
}

// The page is opened from someone's sweep folder: a policy lets only its own
// stylesheet apply (by its hash), no script, nothing fetched.
TEST(SweepPage, PolicyAllowsOnlyItsOwnStyle) {
  const std::string html = SweepHtml(Grid2x2());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, std::regex("Content-Security-Policy\" content=\"([^\"]*)\"")));
  const std::string policy = m[1];
  EXPECT_EQ(policy.rfind("default-src 'none';", 0), 0u) << policy;
  EXPECT_EQ(policy.find("script-src"), std::string::npos) << policy;
  EXPECT_EQ(policy.find("unsafe-inline"), std::string::npos) << policy;
  EXPECT_EQ(CountOccurrences(html, "<style>"), 1);
  const size_t at = html.find("<style>") + 7;
  const std::string style = html.substr(at, html.find("</style>") - at);
  EXPECT_NE(policy.find("style-src 'sha256-" + Base64(Sha256(style)) + "'"), std::string::npos) << policy;
  EXPECT_LT(html.find("Content-Security-Policy"), html.find("<style>")) << "the policy comes first";
}

TEST(SweepHeatmap, OneTunableIsOneRowAndUnrunCellsSaySo) {
  SweepReport r = Report({Candidate({{"block", 64}}, CandidateStatus::kPassed, 100, 1),
                          Candidate({{"block", 128}}, CandidateStatus::kPassed, 50, 1)});
  r.total = 4;  // stopped: 256 and 512 not run
  ChooseBest(r);
  const std::string svg = SweepHeatmapSvg(r);
  EXPECT_EQ(CountOccurrences(svg, "<g class=\"cell"), 4);
  EXPECT_EQ(CountOccurrences(svg, "<g class=\"cell missing"), 2);
  EXPECT_EQ(CountOccurrences(svg, "data-y="), 0);
}

TEST(SweepJson, ReadsBackAsTheCache) {
  SweepReport r = Grid2x2();
  r.key = "op=x device=cpu";
  r.candidates[1].cached = true;
  const std::string text = SweepJson(r);
  EXPECT_EQ(text.rfind("{\n  \"schema\": \"opscope.sweep/1\"", 0), 0u) << text.substr(0, 80);
  auto back = ParseSweepJson(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->key, r.key);
  EXPECT_TRUE(back->complete);
  ASSERT_EQ(back->candidates.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(back->candidates[i].tunables, r.candidates[i].tunables);
    EXPECT_EQ(back->candidates[i].status, r.candidates[i].status);
    EXPECT_DOUBLE_EQ(back->candidates[i].device_us.median, r.candidates[i].device_us.median);
    EXPECT_DOUBLE_EQ(back->candidates[i].device_us.iqr(), r.candidates[i].device_us.iqr());
  }
  EXPECT_EQ(back->best, 1);
  EXPECT_FALSE(ParseSweepJson("{\"schema\": \"opscope.report/1\"}").ok());
  EXPECT_FALSE(ParseSweepJson("{ not json").ok());
}

// Every candidate is held to the compute roof of its own dtype: a float64
// op against the float64 roof, not the float32 one the sweep also knows.
TEST(SweepRun, EachCandidateKeepsTheComputeRoofOfItsDtype) {
  const int64_t n = 1 << 12;
  SweepRequest r{.base = {.run = {.op = "Add", .input_shapes = {Shape({n}), Shape({n})}, .dtypes = {DType::kF64}},
                          .warmup = 0, .iterations = 2,
                          .peaks = RoofPeaks{.bandwidth_gbs = 1000, .gflops_f32 = 1000, .gflops_f64 = 0.001,
                                             .source = "test"}},
                 .values = {{"block", {16384, 65536}}}, .use_cache = false};
  auto report = RunSweep(r);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->peaks.gflops_f64, 0.001);
  ASSERT_EQ(report->candidates.size(), 2u);
  for (const SweepCandidate& c : report->candidates) {
    ASSERT_TRUE(c.passed()) << c.why;
    EXPECT_EQ(c.roofline.bound, Bound::kCompute);
    EXPECT_DOUBLE_EQ(c.roofline.compute_bound_us, c.roofline.flops / (0.001 * 1e3));  // n FLOPs at 1 MFLOP/s
    EXPECT_DOUBLE_EQ(c.roofline.flops, static_cast<double>(n));
  }
}

}  // namespace
}  // namespace opscope
