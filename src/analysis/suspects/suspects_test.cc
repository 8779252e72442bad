// The hot chain's suspects on hand-built facts: the fusion's bytes and
// microseconds worked out by hand, the critical path deciding ties, the small
// grid, and read patterns from index maps written here.
#include "opscope/suspects.h"

#include <gtest/gtest.h>

namespace opscope {
namespace {

constexpr int64_t kMi = 1 << 20;
const RoofPeaks kSuspectPeaks{.bandwidth_gbs = 100, .gflops_f32 = 1000, .gflops_f64 = 500, .source = "test"};

// A streaming node: reads `bytes`, writes `bytes`, took `us` (-1: untimed).
SuspectNode Streaming(const std::string& name, int64_t bytes, double us) {
  SuspectNode n{.name = name};
  n.roofline = Roofline(Cost{.bytes_read = bytes, .bytes_written = bytes, .flops = 0}, DType::kF32, us, kSuspectPeaks);
  return n;
}

const Suspect* FindKind(const std::vector<Suspect>& all, SuspectKind k) {
  for (const Suspect& s : all) {
    if (s.kind == k) return &s;
  }
  return nullptr;
}

// 64 MiB written by A and read again by B: 128 MiB saved. Without a
// calibrated roof, at the pair's rate: it moved 256 MiB in 4000 us
// (67.108864 GB/s), so 128 MiB takes 2000 us; with one, at the roof.
TEST(Suspects, FusionSavesTheIntermediateWrittenAndReadAgainAtTheMeasuredBandwidth) {
  SuspectFacts f{.nodes = {Streaming("A", 64 * kMi, 1000), Streaming("B", 64 * kMi, 3000)},
                 .edges = {{.producer = 0, .consumer = 1, .tensor = "t", .bytes = 64 * kMi}}};
  std::vector<Suspect> s = FindSuspects(f);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, SuspectKind::kFusion);
  EXPECT_EQ(s[0].direction, "fuse A into B");
  EXPECT_EQ(s[0].traffic_bytes, 134217728);
  EXPECT_DOUBLE_EQ(s[0].bandwidth_gbs, 256.0 * kMi / 4000 / 1e3);
  EXPECT_DOUBLE_EQ(s[0].saving_us, 2000.0);
  EXPECT_NE(s[0].text.find("saves 128.00 MiB (134217728 bytes) of traffic, about 2.000 ms"), std::string::npos)
      << s[0].text;

  // With a calibrated roof (timed or not): 134217728 bytes / 10 GB/s = 13421.7728 us.
  f.bandwidth_gbs = 10;
  s = FindSuspects(f);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].saving_us, 13421.7728);
  EXPECT_EQ(s[0].bandwidth_source, "calibrated");
  f.nodes = {Streaming("A", 64 * kMi, -1), Streaming("B", 64 * kMi, -1)};
  s = FindSuspects(f);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].saving_us, 13421.7728);
  EXPECT_EQ(s[0].bandwidth_source, "calibrated");
}

TEST(Suspects, NoFusionWhereTheIntermediateMustBeWrittenAnywayOrIsSmall) {
  SuspectFacts f{.nodes = {Streaming("A", 64 * kMi, 1000), Streaming("B", 64 * kMi, 1000)}};
  f.edges = {{.producer = 0, .consumer = 1, .bytes = 64 * kMi, .consumers = 2}};
  EXPECT_TRUE(FindSuspects(f).empty());
  f.edges = {{.producer = 0, .consumer = 1, .bytes = 64 * kMi, .graph_output = true}};
  EXPECT_TRUE(FindSuspects(f).empty());
  f.edges = {{.producer = 0, .consumer = 1, .bytes = 4096}};
  EXPECT_TRUE(FindSuspects(f).empty());
  // Without a cost model nobody knows the pair streams it.
  f.nodes[1].roofline = Roofline(std::nullopt, DType::kF32, 1000, kSuspectPeaks);
  f.edges = {{.producer = 0, .consumer = 1, .bytes = 64 * kMi}};
  EXPECT_TRUE(FindSuspects(f).empty());
}

// Two equally slow small-grid kernels; the one whose output feeds a node on
// the critical path ranks first though it comes second, and so does one on it.
TEST(Suspects, TheCriticalPathDecidesBetweenEquallySlowSuspects) {
  auto slow = [](const std::string& name) {
    SuspectNode n = Streaming(name, 1 * kMi, 1000);  // bound 20.97 us: far below it
    n.launches = {{.name = name + "_k", .config = {.grid = {1, 1, 1}, .block = {64, 1, 1}}}};
    return n;
  };
  SuspectFacts f{.nodes = {slow("off"), slow("producer"), Streaming("sink", 1, 1)}, .compute_units = 8};
  f.nodes[2].on_critical_path = true;
  f.edges = {{.producer = 1, .consumer = 2, .bytes = 1}};
  std::vector<Suspect> s = FindSuspects(f);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].names[0], "producer");
  EXPECT_TRUE(s[0].critical);
  EXPECT_EQ(s[1].names[0], "off");
  EXPECT_FALSE(s[1].critical);
  EXPECT_DOUBLE_EQ(s[0].saving_us, s[1].saving_us);

  f.edges.clear();
  f.nodes[0].on_critical_path = true;
  s = FindSuspects(f);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].names[0], "off");
}

TEST(Suspects, SmallGridOnlyWhenFarBelowItsBoundWithFewBlocksPerUnit) {
  SuspectNode n = Streaming("k", 1 * kMi, 1000);
  n.launches = {{.name = "big", .config = {.grid = {64, 1, 1}}}, {.name = "tiny", .config = {.grid = {3, 1, 1}}}};
  std::vector<Suspect> s = NodeSuspects(n, 16);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, SuspectKind::kSmallGrid);
  EXPECT_EQ(s[0].kernel, "tiny");
  EXPECT_EQ(s[0].grid_blocks, 3);
  EXPECT_EQ(s[0].compute_units, 16);
  EXPECT_DOUBLE_EQ(s[0].saving_us, 1000 - 2.0 * kMi / 100e3);
  EXPECT_TRUE(NodeSuspects(n, 1).empty());  // 3 blocks on 1 unit: enough
  n.roofline = Roofline(Cost{.bytes_read = kMi, .bytes_written = kMi}, DType::kF32, 25, kSuspectPeaks);  // 84%
  EXPECT_TRUE(NodeSuspects(n, 16).empty());
}

// Hand-made index maps over x [1,1,8,8].
OpSchema WithMap(RegionFn fn) {
  OpSchema op;
  op.name = "mapped";
  op.inputs = {ArgDef{.name = "x"}};
  op.input_region = std::move(fn);
  return op;
}

const std::vector<TensorDesc> kX{TensorDesc{.shape = Shape({1, 1, 8, 8})}};

// Clamped 3x3 windows: per dim 2+3*6+2 = 22 taps over 8 positions, so the
// boxes add up to 22*22 = 484 elements of a 64-element input: 7.5625x.
TEST(Suspects, AWindowMapIsStridedWindowReadsAndItsOverReadRatioIsExact) {
  OpSchema op = WithMap([](const OpCall&, int, const std::vector<int64_t>& o) {
    return std::vector<IndexBox>{{{o[0], o[1], o[2] - 1, o[3] - 1}, {o[0] + 1, o[1] + 1, o[2] + 2, o[3] + 2}}};
  });
  ReadPattern p = ReadPatternOf(op, kX, kX, Attrs(), 0);
  ASSERT_TRUE(p.known);
  EXPECT_DOUBLE_EQ(p.ratio, 484.0 / 64.0);
  EXPECT_EQ(p.box_elements, 9);
  EXPECT_EQ(p.box_runs, 3);
  EXPECT_EQ(p.run_stride, 8);
  EXPECT_EQ(p.neighbour_step, 1);
  EXPECT_EQ(p.Name(), "strided window reads");

  SuspectNode n{.name = "w", .op = &op, .inputs = kX, .outputs = kX};
  n.roofline = Roofline(Cost{.bytes_read = 256, .bytes_written = 256}, DType::kF32, 1, kSuspectPeaks);
  std::vector<Suspect> s = NodeSuspects(n, 4);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].direction, "tile the reads / prefetch");
  EXPECT_EQ(s[0].input_name, "x");
  EXPECT_NE(s[0].text.find("x is read with strided window reads (box [0,0,3:6,3:6] per output: 3 runs of 3, 8 "
                           "elements apart), 7.6x its size read in all"),
            std::string::npos)
      << s[0].text;
}

TEST(Suspects, ARowMapOverReadsATransposedMapStridesAnElementwiseMapIsClean) {
  OpSchema row = WithMap([](const OpCall&, int, const std::vector<int64_t>& o) {
    return std::vector<IndexBox>{{{o[0], o[1], o[2], 0}, {o[0] + 1, o[1] + 1, o[2] + 1, 8}}};
  });
  ReadPattern p = ReadPatternOf(row, kX, kX, Attrs(), 0);
  EXPECT_DOUBLE_EQ(p.ratio, 8.0);
  EXPECT_EQ(p.box_runs, 1);
  EXPECT_EQ(p.Name(), "over-reads");

  OpSchema transposed = WithMap([](const OpCall&, int, const std::vector<int64_t>& o) {
    return std::vector<IndexBox>{{{o[0], o[1], o[3], o[2]}, {o[0] + 1, o[1] + 1, o[3] + 1, o[2] + 1}}};
  });
  p = ReadPatternOf(transposed, kX, kX, Attrs(), 0);
  EXPECT_DOUBLE_EQ(p.ratio, 1.0);
  EXPECT_EQ(p.neighbour_step, 8);
  EXPECT_EQ(p.Name(), "strided reads");

  OpSchema same = WithMap([](const OpCall&, int, const std::vector<int64_t>& o) {
    return std::vector<IndexBox>{{o, {o[0] + 1, o[1] + 1, o[2] + 1, o[3] + 1}}};
  });
  p = ReadPatternOf(same, kX, kX, Attrs(), 0);
  EXPECT_TRUE(p.known);
  EXPECT_EQ(p.Name(), "");
  SuspectNode n{.name = "e", .op = &same, .inputs = kX, .outputs = kX};
  EXPECT_TRUE(NodeSuspects(n, 4).empty());

  // No index map: nothing is known, nothing is said.
  OpSchema none = WithMap(nullptr);
  EXPECT_FALSE(ReadPatternOf(none, kX, kX, Attrs(), 0).known);
}

}  // namespace
}  // namespace opscope
