// Roofline: every figure hand-computed against round peaks (100 GB/s, 1000
// GFLOP/s float32, 500 float64), so a microsecond is 1e5 bytes or 1e6 FLOPs
// (5e5 in float64). RooflineSvg: well-formed, one circle per drawable point,
// labels escaped, the rest counted in its note.
#include "opscope/roofline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/text_format.h"

namespace opscope {
namespace {

const RoofPeaks kPeaks{.bandwidth_gbs = 100, .gflops_f32 = 1000, .gflops_f64 = 500, .source = "test"};

bool AllFinite(const RooflinePoint& r) {
  for (double v : {r.measured_us, r.memory_bound_us, r.compute_bound_us, r.lower_bound_us, r.achieved_gbs,
                   r.achieved_gflops, r.intensity, r.efficiency(), r.slowdown()}) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

TEST(Roofline, MemoryBound) {
  // 12 MB at 100 GB/s: 120 us; 1 MFLOP at 1000 GFLOP/s: 1 us.
  RooflinePoint r = Roofline(Cost{.bytes_read = 8'000'000, .bytes_written = 4'000'000, .flops = 1e6}, DType::kF32,
                             240, kPeaks);
  EXPECT_TRUE(r.has_cost);
  EXPECT_EQ(r.bytes, 12'000'000);
  EXPECT_DOUBLE_EQ(r.memory_bound_us, 120);
  EXPECT_DOUBLE_EQ(r.compute_bound_us, 1);
  EXPECT_DOUBLE_EQ(r.lower_bound_us, 120);
  EXPECT_EQ(r.bound, Bound::kMemory);
  EXPECT_STREQ(BoundName(r.bound), "memory");
  EXPECT_DOUBLE_EQ(r.efficiency(), 0.5);
  EXPECT_DOUBLE_EQ(r.slowdown(), 2);
  EXPECT_DOUBLE_EQ(r.achieved_gbs, 50);  // 12e6 bytes in 240 us
  EXPECT_NEAR(r.achieved_gflops, 1e6 / 240e3, 1e-12);
  EXPECT_NEAR(r.intensity, 1.0 / 12, 1e-15);
}

TEST(Roofline, ComputeBound) {
  // 1 MB: 10 us; 2 GFLOP: 2000 us.
  RooflinePoint r = Roofline(Cost{.bytes_read = 1'000'000, .flops = 2e9}, DType::kF32, 4000, kPeaks);
  EXPECT_DOUBLE_EQ(r.memory_bound_us, 10);
  EXPECT_DOUBLE_EQ(r.compute_bound_us, 2000);
  EXPECT_DOUBLE_EQ(r.lower_bound_us, 2000);
  EXPECT_EQ(r.bound, Bound::kCompute);
  EXPECT_STREQ(BoundName(r.bound), "compute");
  EXPECT_DOUBLE_EQ(r.efficiency(), 0.5);
  EXPECT_DOUBLE_EQ(r.achieved_gflops, 500);
  EXPECT_DOUBLE_EQ(r.intensity, 2000);
}

TEST(Roofline, Float64UsesItsOwnRoof) {
  const Cost c{.bytes_read = 1'000'000, .flops = 2e9};
  EXPECT_DOUBLE_EQ(Roofline(c, DType::kF64, 4000, kPeaks).compute_bound_us, 4000);
  EXPECT_DOUBLE_EQ(Roofline(c, DType::kF64, 4000, kPeaks).efficiency(), 1);
  // Narrower floats are held to the float32 roof.
  EXPECT_DOUBLE_EQ(Roofline(c, DType::kF16, 4000, kPeaks).compute_bound_us, 2000);
}

TEST(Roofline, FasterThanTheDramRoofIsAboveOne) {
  // 120 us of DRAM traffic done in 60 us: the data stayed in cache.
  RooflinePoint r = Roofline(Cost{.bytes_read = 12'000'000}, DType::kF32, 60, kPeaks);
  EXPECT_EQ(r.bound, Bound::kMemory);
  EXPECT_DOUBLE_EQ(r.efficiency(), 2);
  EXPECT_DOUBLE_EQ(r.slowdown(), 0.5);
  EXPECT_DOUBLE_EQ(r.achieved_gbs, 200);
}

TEST(Roofline, NoCostModel) {
  RooflinePoint r = Roofline(std::nullopt, DType::kF32, 10, kPeaks);
  EXPECT_FALSE(r.has_cost);
  EXPECT_EQ(r.bound, Bound::kNone);
  EXPECT_STREQ(BoundName(r.bound), "none");
  EXPECT_DOUBLE_EQ(r.measured_us, 10);
  EXPECT_EQ(r.efficiency(), -1);
  EXPECT_EQ(r.slowdown(), -1);

  OpSchema op;
  op.name = "Plain";
  const std::vector<TensorDesc> in{{DType::kF32, Shape({4, 8})}}, out{{DType::kF32, Shape({4, 8})}};
  EXPECT_FALSE(CostOf(op, in, out, Attrs{}).has_value());  // not EstimateCost's byte-counting fallback
  op.cost = [](const OpCall& c) {
    return Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(), .flops = 7};
  };
  std::optional<Cost> c = CostOf(op, in, out, Attrs{});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->bytes_read, 128);
  EXPECT_EQ(c->bytes_written, 128);
  EXPECT_EQ(c->flops, 7);
}

TEST(Roofline, UntimedHasBoundsButNoEfficiency) {
  RooflinePoint r = Roofline(Cost{.bytes_read = 12'000'000}, DType::kF32, -1, kPeaks);
  EXPECT_EQ(r.measured_us, -1);
  EXPECT_EQ(r.bound, Bound::kMemory);
  EXPECT_DOUBLE_EQ(r.lower_bound_us, 120);
  EXPECT_EQ(r.achieved_gbs, 0);
  EXPECT_EQ(r.efficiency(), -1);
  EXPECT_EQ(r.slowdown(), -1);
  // A zero duration (below the clock's resolution) divides by nothing either.
  EXPECT_EQ(Roofline(Cost{.bytes_read = 100}, DType::kF32, 0, kPeaks).efficiency(), -1);
  EXPECT_TRUE(AllFinite(Roofline(Cost{.bytes_read = 100}, DType::kF32, 0, kPeaks)));
}

TEST(Roofline, UnknownRoofsGiveNoBound) {
  const Cost gemm{.bytes_read = 1'000'000, .flops = 2e9};
  RooflinePoint none = Roofline(gemm, DType::kF32, 100, RoofPeaks{});
  EXPECT_TRUE(none.has_cost);
  EXPECT_EQ(none.bound, Bound::kNone);
  EXPECT_EQ(none.lower_bound_us, 0);
  EXPECT_EQ(none.efficiency(), -1);
  EXPECT_EQ(none.slowdown(), -1);
  EXPECT_DOUBLE_EQ(none.achieved_gflops, 20000);  // 2 GFLOP in 100 us: what it reached is still known
  EXPECT_TRUE(AllFinite(none));

  // Bandwidth alone bounds an op without FLOPs, not one with them.
  const RoofPeaks bandwidth_only{.bandwidth_gbs = 100};
  EXPECT_EQ(Roofline(Cost{.bytes_read = 1'000'000}, DType::kF32, 20, bandwidth_only).bound, Bound::kMemory);
  EXPECT_EQ(Roofline(gemm, DType::kF32, 20, bandwidth_only).bound, Bound::kNone);
  EXPECT_EQ(Roofline(gemm, DType::kF64, 20, {.bandwidth_gbs = 100, .gflops_f32 = 1000}).bound, Bound::kNone);

  // An op that costs nothing (a view) has nothing to be bound by.
  RooflinePoint view = Roofline(Cost{}, DType::kF32, 3, kPeaks);
  EXPECT_EQ(view.bound, Bound::kNone);
  EXPECT_EQ(view.intensity, 0);
  EXPECT_TRUE(AllFinite(view));
}

TEST(Roofline, PeaksFromCalibration) {
  DevicePeaks p;
  p.triad_gbs = 31;
  p.copy_gbs = 40;
  p.gemm_gflops_f32 = 190;
  p.fma_gflops_f32 = 220;
  p.gemm_gflops_f64 = 95;
  RoofPeaks r = RoofPeaksFrom(p);
  EXPECT_EQ(r.bandwidth_gbs, 31);
  EXPECT_EQ(r.gflops_f32, 190);
  EXPECT_EQ(r.gflops_f64, 95);
  EXPECT_EQ(r.GflopsFor(DType::kBF16), 190);
  EXPECT_EQ(r.GflopsFor(DType::kF64), 95);
  EXPECT_EQ(r.FmaGflopsFor(DType::kF32), 220);  // the hardware's peak, kept beside the practical roof
  EXPECT_FALSE(r.source.empty());
}

// Past 100% a bound was beaten, and which roof and why follow from the point:
// a memory-bound kernel read from cache; a compute-bound one between the
// GEMM's roof and the FMA loop's beat that GEMM; past both (or with no FMA
// peak beside a given roof) the roof is too low.
TEST(Roofline, AboveWhichRoofAndWhy) {
  RoofPeaks peaks = kPeaks;
  peaks.fma_gflops_f32 = 2000;  // 1e9 FLOPs: 1000 us at the GEMM's roof, 500 at the FMA loop's
  const Cost gemm{.bytes_read = 1000, .flops = 1e9};
  EXPECT_EQ(AboveRoofOf(Roofline(gemm, DType::kF32, 1000, peaks)), AboveRoof::kNo);
  EXPECT_EQ(AboveRoofNote(Roofline(gemm, DType::kF32, 1000, peaks)), "");
  const RooflinePoint beats = Roofline(gemm, DType::kF32, 600, peaks);
  EXPECT_DOUBLE_EQ(beats.fma_bound_us, 500);
  EXPECT_EQ(AboveRoofOf(beats), AboveRoof::kBeatsGemm);
  EXPECT_NE(AboveRoofNote(beats).find("faster than that GEMM"), std::string::npos);
  EXPECT_EQ(AboveRoofOf(Roofline(gemm, DType::kF32, 400, peaks)), AboveRoof::kRoofTooLow);
  EXPECT_EQ(AboveRoofOf(Roofline(gemm, DType::kF32, 600, kPeaks)), AboveRoof::kRoofTooLow);  // no FMA peak known
  EXPECT_EQ(AboveRoofOf(Roofline(Cost{.bytes_read = 12'000'000}, DType::kF32, 60, peaks)), AboveRoof::kCache);
  EXPECT_STREQ(AboveRoofName(AboveRoof::kBeatsGemm), "beats_gemm");
  // The float64 kernel against the float64 FMA peak, unknown here.
  EXPECT_EQ(AboveRoofOf(Roofline(gemm, DType::kF64, 1500, peaks)), AboveRoof::kRoofTooLow);
}

TEST(Roofline, AboveRoofGroupsNamesUnderTheirNote) {
  EXPECT_EQ(AboveRoofGroups({{"Relu", ""}, {"Gemm", ""}}, "  "), "");
  EXPECT_EQ(AboveRoofGroups({{"Relu", "cache"}, {"Gemm", "gemm"}, {"Add", "cache"}, {"Mul", ""}}, "  "),
            "  Relu, Add: cache\n  Gemm: gemm\n");
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 8; ++i) many.emplace_back("k" + std::to_string(i), "cache");
  EXPECT_EQ(AboveRoofGroups(many, ""), "k0, k1, k2, k3, k4, k5 and 2 more: cache\n");
}

// Every element closed in order, every attribute quoted: enough of XML to
// know a browser's parser and an XML one read the same tree.
bool WellFormed(const std::string& s, std::string* why) {
  std::vector<std::string> open;
  for (size_t i = s.find('<'); i != std::string::npos; i = s.find('<', i + 1)) {
    const size_t end = s.find('>', i);
    if (end == std::string::npos) return *why = "unclosed tag at " + std::to_string(i), false;
    std::string tag = s.substr(i + 1, end - i - 1);
    if (CountOccurrences(tag, "\"") % 2 != 0 || tag.find('<') != std::string::npos) return *why = "bad tag <" + tag + ">", false;
    if (tag.starts_with("/")) {
      if (open.empty() || open.back() != tag.substr(1)) return *why = "</" + tag.substr(1) + "> closes nothing", false;
      open.pop_back();
    } else if (!tag.ends_with("/")) {
      open.push_back(tag.substr(0, tag.find_first_of(" \n")));
    }
    i = end;
  }
  if (!open.empty()) return *why = "<" + open.back() + "> never closed", false;
  return true;
}

// The FMA loop's peak is drawn dashed above the practical float32 roof when
// it is higher, and a point above its roof says which and why in its tooltip.
TEST(RooflineSvg, TheFmaPeakDashedAboveThePracticalRoof) {
  RoofPeaks peaks = kPeaks;
  peaks.fma_gflops_f32 = 2000;
  const Cost gemm{.bytes_read = 1000, .flops = 1e9};
  const std::string svg = RooflineSvg(peaks, {{"fast", DType::kF32, Roofline(gemm, DType::kF32, 600, peaks)}});
  std::string why;
  EXPECT_TRUE(WellFormed(svg, &why)) << why << "\n" << svg;
  EXPECT_EQ(CountOccurrences(svg, "class=\"fma-peak\""), 1u) << svg;
  EXPECT_NE(svg.find(">float32 FMA peak 2000 GFLOP/s</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("efficiency 166.7% (compute bound, float32); above the compute roof (the calibrated GEMM&apos;s rate)"),
            std::string::npos)
      << svg;
  // No FMA peak known, or none above the roof: no dashed line.
  EXPECT_EQ(RooflineSvg(kPeaks, {}).find("fma-peak"), std::string::npos);
  peaks.fma_gflops_f32 = kPeaks.gflops_f32;
  EXPECT_EQ(RooflineSvg(peaks, {}).find("fma-peak"), std::string::npos);
}

TEST(RooflineSvg, OneCirclePerDrawablePointLabelsEscaped) {
  const Cost stream{.bytes_read = 8'000'000, .bytes_written = 4'000'000, .flops = 1e6};
  const Cost gemm{.bytes_read = 1'000'000, .flops = 2e9};
  std::vector<RooflineChartPoint> points{
      {"Add", DType::kF32, Roofline(stream, DType::kF32, 240, kPeaks)},
      {"a<b & \"c\"", DType::kF32, Roofline(gemm, DType::kF32, 4000, kPeaks)},
      {"MatMul f64", DType::kF64, Roofline(gemm, DType::kF64, 4000, kPeaks)},
      {"Custom", DType::kF32, Roofline(std::nullopt, DType::kF32, 10, kPeaks)},
      {"Never ran", DType::kF32, Roofline(stream, DType::kF32, -1, kPeaks)},
      {"Transpose", DType::kF32, Roofline(Cost{.bytes_read = 400, .bytes_written = 400}, DType::kF32, 1, kPeaks)}};
  const std::string svg = RooflineSvg(kPeaks, points);
  std::string why;
  EXPECT_TRUE(WellFormed(svg, &why)) << why << "\n" << svg;
  EXPECT_EQ(CountOccurrences(svg, "<svg"), 1u);
  EXPECT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(CountOccurrences(svg, "<circle"), 3u) << svg;
  EXPECT_EQ(CountOccurrences(svg, "<title>"), 3u);
  EXPECT_NE(svg.find("a&lt;b &amp; &quot;c&quot;"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
  EXPECT_NE(svg.find("Add: 50 GB/s, 4.17 GFLOP/s, efficiency 50.0%"), std::string::npos) << svg;
  EXPECT_NE(svg.find("float32 roof 1000 GFLOP/s"), std::string::npos) << svg;
  EXPECT_NE(svg.find("float64 roof 500 GFLOP/s"), std::string::npos) << svg;
  EXPECT_NE(svg.find("memory roof 100 GB/s"), std::string::npos) << svg;
  EXPECT_NE(svg.find("1 without a cost model; 1 not timed; 1 without FLOPs"), std::string::npos) << svg;
  // Decade ticks: intensities 1/12 .. 2000, and 4.17 .. 1000 GFLOP/s.
  EXPECT_NE(svg.find(">0.01</text>"), std::string::npos);
  EXPECT_NE(svg.find(">10000</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">0.1</text>", svg.find(">10000</text>")), std::string::npos);  // y starts at 1
}

TEST(RooflineSvg, UnknownRoofsAndNoPoints) {
  const std::string svg = RooflineSvg(RoofPeaks{}, {});
  std::string why;
  EXPECT_TRUE(WellFormed(svg, &why)) << why;
  EXPECT_EQ(CountOccurrences(svg, "<circle"), 0u);
  EXPECT_NE(svg.find("bandwidth unknown"), std::string::npos);
  EXPECT_EQ(svg.find("roof 0"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace opscope
