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
    // Bound 20.97 us, 7x below it; 1 block on 8 units explains all but 18.75 us of it.
    SuspectNode n = Streaming(name, 1 * kMi, 150);
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
  // Filling the units leaves 187.5 us, 8.9x the 20.97 us bound: the kernel
  // itself is a suspect too, for what the grid does not explain.
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].kind, SuspectKind::kSlowKernel);
  EXPECT_DOUBLE_EQ(s[1].saving_us, 1000 * 3.0 / 16 - 2.0 * kMi / 100e3);
  EXPECT_NE(s[1].text.find("its launch shape explains at most 812.5 us"), std::string::npos) << s[1].text;
  EXPECT_EQ(s[0].kind, SuspectKind::kSmallGrid);
  EXPECT_EQ(s[0].kernel, "tiny");
  EXPECT_EQ(s[0].grid_blocks, 3);
  EXPECT_EQ(s[0].compute_units, 16);
  // 3 blocks on 16 units leave 13/16 of the time idle at most: that, not the whole loss.
  EXPECT_DOUBLE_EQ(s[0].saving_us, 1000 * 13.0 / 16);
  // 3 blocks on 1 unit: enough; 47.7x its bound, so the kernel itself is the suspect.
  ASSERT_EQ(NodeSuspects(n, 1).size(), 1u);
  EXPECT_EQ(NodeSuspects(n, 1)[0].kind, SuspectKind::kSlowKernel);
  n.roofline = Roofline(Cost{.bytes_read = kMi, .bytes_written = kMi}, DType::kF32, 25, kSuspectPeaks);  // 84%
  EXPECT_TRUE(NodeSuspects(n, 16).empty());
}

// A kernel 90x over its bound with a tenth of the run is a suspect of its
// own, ranked by what it could save: above a fusion worth less, and named
// the largest loss. At 2x its bound, or with a sliver of the run, it is not.
TEST(Suspects, AKernelFarOverItsBoundIsASuspectOfItsOwnRankedByItsLoss) {
  SuspectNode pool = Streaming("MaxPool", 1 * kMi, 0);
  pool.roofline = Roofline(Cost{.bytes_read = 4 * kMi, .bytes_written = kMi}, DType::kF32, 0, kSuspectPeaks);
  const double bound = pool.roofline.lower_bound_us;  // 52.4288 us at 100 GB/s
  pool.roofline = Roofline(Cost{.bytes_read = 4 * kMi, .bytes_written = kMi}, DType::kF32, 90 * bound, kSuspectPeaks);
  // A fusion pair worth 2.684 ms (64 MiB twice at 50 GB/s), and enough other time that MaxPool is about a tenth.
  SuspectFacts f{.nodes = {pool, Streaming("A", 64 * kMi, 1000), Streaming("B", 64 * kMi, 1000), Streaming("rest", 0, 30000)},
                 .edges = {{.producer = 1, .consumer = 2, .tensor = "t", .bytes = 64 * kMi}}, .bandwidth_gbs = 50};
  f.nodes[3].roofline = Roofline(std::nullopt, DType::kF32, 30000, kSuspectPeaks);  // no cost model: no suspect
  std::vector<Suspect> s = FindSuspects(f);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].kind, SuspectKind::kSlowKernel);
  EXPECT_EQ(s[0].names[0], "MaxPool");
  EXPECT_DOUBLE_EQ(s[0].saving_us, 89 * bound);
  EXPECT_EQ(s[0].text.rfind("MaxPool: the kernel itself: 90.0x its lower bound (", 0), 0u) << s[0].text;
  EXPECT_NE(s[0].text.find("% of the node time: the largest loss in the run, the kernel and not its neighbours"),
            std::string::npos)
      << s[0].text;
  EXPECT_EQ(s[1].kind, SuspectKind::kFusion);
  EXPECT_LT(s[1].saving_us, s[0].saving_us);

  // Twice its bound: the kernel is not far over it.
  f.nodes[0].roofline = Roofline(Cost{.bytes_read = 4 * kMi, .bytes_written = kMi}, DType::kF32, 2 * bound, kSuspectPeaks);
  EXPECT_EQ(FindKind(FindSuspects(f), SuspectKind::kSlowKernel), nullptr);
  // 90x, but a sliver of a long run: not worth naming in the run (alone, in profile, it is).
  f.nodes[0].roofline = Roofline(Cost{.bytes_read = 4 * kMi, .bytes_written = kMi}, DType::kF32, 90 * bound, kSuspectPeaks);
  f.nodes[3].roofline = Roofline(std::nullopt, DType::kF32, 3e6, kSuspectPeaks);
  EXPECT_EQ(FindKind(FindSuspects(f), SuspectKind::kSlowKernel), nullptr);
  ASSERT_EQ(NodeSuspects(f.nodes[0], 4).size(), 1u);
  EXPECT_EQ(NodeSuspects(f.nodes[0], 4)[0].kind, SuspectKind::kSlowKernel);
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
  // A 256-byte input re-read comes from cache: by default no read suspect
  // (a 16 KiB scale vector is not why a kernel is slow); the pattern itself
  // is still found when the size threshold is lowered.
  for (const Suspect& d : NodeSuspects(n, 4)) EXPECT_NE(d.kind, SuspectKind::kReads) << d.text;
  std::vector<Suspect> s = NodeSuspects(n, 4, SuspectOptions{.min_read_bytes = 0});
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
