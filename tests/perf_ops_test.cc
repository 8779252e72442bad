// The ops of examples/perf_ops, the ones ops-debug profile and sweep are shown
// on: through the real ops-debug, each passes against its reference at its
// default and at every declared block (but sweep_trap's block=512, which must
// fail), a block it does not declare is a usage error, and describe shows the
// tunable; in process, the kernels meet hand-computed answers and the cost
// models and the index map say what the ops' comments say. No speed is
// asserted here (the machine is shared): docs/ops-debug.md quotes the figures.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/harness/input_region.h"
#include "capture/dispatcher.h"
#include "opscope/op.h"
#include "opscope/plugin.h"
#include "tool_test_util.h"

namespace opscope {
namespace {

using testing::Contains;
using testing::ToolResult;

const std::string kOpsDebug = std::string(OPSCOPE_BINARY_DIR) + "/bin/ops-debug";
const std::string kPerfOps = std::string(OPSCOPE_BINARY_DIR) + "/lib/libperf_ops.so";
const std::vector<int64_t> kBlocks = {64, 128, 256, 512, 1024};

ToolResult OpsDebugRun(const std::string& op, const std::string& shapes, const std::string& extra = "") {
  return testing::Shell(kOpsDebug + " run --plugin " + kPerfOps + " --op " + op + " --input-shapes '" + shapes + "' " +
                        extra);
}

struct Case {
  std::string op;
  std::string shapes;  // odd sizes: partial blocks, a row that is not a multiple of 4
  int vector_width;
};
const std::vector<Case> kCases = {
    {"window_l2norm_v1", "[2,3,19,13]", 1}, {"window_l2norm_v2", "[2,3,19,13]", 4},
    {"contiguous_scale", "[37,53]", 1},     {"strided_scale", "[37,53]", 1},
    {"sweep_trap", "[3001]", 1},  // 6 blocks of 512: three of them skipped by the trap
};

TEST(PerfOps, EachPassesAtItsDefaultBlockAndAtEveryDeclaredOne) {
  for (const Case& c : kCases) {
    ToolResult r = OpsDebugRun(c.op, c.shapes);
    EXPECT_EQ(r.exit_code, 0) << c.op << "\n" << r.out << r.err;
    EXPECT_TRUE(Contains(r.out, "block=[64,1,1] vec=" + std::to_string(c.vector_width))) << c.op << "\n" << r.out;
    EXPECT_TRUE(Contains(r.out, "status passed")) << c.op << "\n" << r.out;
    for (int64_t block : kBlocks) {
      const std::string b = std::to_string(block);
      ToolResult t = OpsDebugRun(c.op, c.shapes, "--tunables block=" + b);
      EXPECT_TRUE(Contains(t.out, "block=[" + b + ",1,1]")) << c.op << " block=" << b << "\n" << t.out;
      if (c.op == "sweep_trap" && block == 512) {
        EXPECT_EQ(t.exit_code, 1) << "the trap must fail\n" << t.out << t.err;
        EXPECT_TRUE(Contains(t.out, "status failed")) << t.out;
      } else {
        EXPECT_EQ(t.exit_code, 0) << c.op << " block=" << b << "\n" << t.out << t.err;
      }
    }
  }
}

// The window ops on a plane of 128x128 (the energy sums 16384 squares) and on
// rows narrower than one v2 work item.
TEST(PerfOps, WindowOpsPassOnLargeAndNarrowPlanes) {
  for (const std::string op : {"window_l2norm_v1", "window_l2norm_v2"}) {
    for (const std::string shapes : {"[1,2,128,128]", "[1,2,5,3]", "[1,1,1,1]", "[2,2,1,9]"}) {
      ToolResult r = OpsDebugRun(op, shapes);
      EXPECT_EQ(r.exit_code, 0) << op << " " << shapes << "\n" << r.out << r.err;
    }
  }
}

TEST(PerfOps, AnUndeclaredBlockIsAUsageError) {
  for (const Case& c : kCases) {
    for (const std::string bad : {"100", "2048", "0"}) {
      ToolResult r = OpsDebugRun(c.op, c.shapes, "--tunables block=" + bad);
      EXPECT_EQ(r.exit_code, 2) << c.op << " block=" << bad << "\n" << r.out << r.err;
      EXPECT_TRUE(Contains(r.err, "--tunables: op " + c.op + "'s tunable 'block' takes 64, 128, 256, 512, 1024; " +
                                      bad + " is not one of them"))
          << r.err;
      EXPECT_EQ(r.out, "");
    }
  }
}

TEST(PerfOps, DescribeShowsTheBlockTunableAndTheCostModel) {
  for (const Case& c : kCases) {
    ToolResult r = testing::Shell(kOpsDebug + " describe " + c.op + " --plugin " + kPerfOps);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(Contains(r.out, "  block: 64 (default), 128, 256, 512, 1024\n")) << r.out;
    EXPECT_TRUE(Contains(r.out, "cost model: yes")) << r.out;
    EXPECT_TRUE(Contains(r.out, "cpu: " + c.op + "_cpu")) << r.out;
  }
  EXPECT_TRUE(Contains(testing::Shell(kOpsDebug + " describe window_l2norm_v2 --plugin " + kPerfOps).out,
                       "eps: float = 1e-06"));
  EXPECT_TRUE(Contains(testing::Shell(kOpsDebug + " describe strided_scale --plugin " + kPerfOps).out,
                       "alpha: float = 2"));
}

class PerfOpsInProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = LoadPlugin(kPerfOps);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto dev = GetDevice("cpu");
    ASSERT_TRUE(dev.ok());
    cpu_ = *dev;
  }
  static const OpSchema& Op(const std::string& name) { return *OpRegistry::Global().Find(name); }
  static Cost CostFor(const std::string& op, const Shape& shape) {
    std::vector<TensorDesc> in = {{DType::kF32, shape}}, out = {{DType::kF32, shape}};
    Attrs attrs;
    EXPECT_TRUE(Op(op).ValidateAttrs(attrs).ok());
    return Op(op).EstimateCost(in, out, attrs);
  }
  // Output 0 of `op` on the cpu (device) or the reference (device nullptr).
  Tensor RunOp(const std::string& op, const Tensor& x, Device* device, int64_t block) {
    auto run = Dispatcher::Global().Run(op, {x}, {}, RunOptions{.device = device, .tunables = {{"block", block}}});
    EXPECT_TRUE(run.ok()) << op << ": " << run.status().ToString();
    return run.ok() ? run->outputs[0] : Tensor();
  }
  Device* cpu_ = nullptr;
};

// Minimal traffic: x read once, y written once. FLOPs: 9 adds + 1 multiply
// per window, 3 per element for the norm, 3 per plane.
TEST_F(PerfOpsInProcess, CostModelsAreTheMinimalTraffic) {
  const int64_t numel = 4 * 64 * 128 * 128;
  for (const std::string op : {"window_l2norm_v1", "window_l2norm_v2"}) {
    Cost c = CostFor(op, Shape({4, 64, 128, 128}));
    EXPECT_EQ(c.bytes_read, 4 * numel) << op;
    EXPECT_EQ(c.bytes_written, 4 * numel) << op;
    EXPECT_EQ(c.flops, 13.0 * static_cast<double>(numel) + 3.0 * 4 * 64) << op;
  }
  for (const std::string op : {"contiguous_scale", "strided_scale", "sweep_trap"}) {
    Cost c = CostFor(op, Shape({4096, 4096}));
    EXPECT_EQ(c.bytes_read, 4 * 4096 * 4096) << op;
    EXPECT_EQ(c.bytes_written, 4 * 4096 * 4096) << op;
    EXPECT_EQ(c.flops, 4096.0 * 4096.0) << op;
  }
}

// y[n,c,h,w] reads its 3x3 window, clamped at the border (the plane's energy,
// one number per plane, is left out of the map: see window_l2norm.cc).
TEST_F(PerfOpsInProcess, TheWindowOpsIndexMapIsTheWindow) {
  Tensor x = *Tensor::Empty(DType::kF32, Shape({2, 3, 19, 13}));
  Attrs attrs;
  for (const std::string op : {"window_l2norm_v1", "window_l2norm_v2"}) {
    InputRegion r = RegionFromIndexMap(Op(op), {x}, {x}, attrs, 0, {1, 2, 5, 7});
    ASSERT_EQ(r.boxes.size(), 1u);
    EXPECT_EQ(r.boxes[0].ToString(), "[1,2,4:7,6:9]") << op;
    InputRegion corner = RegionFromIndexMap(Op(op), {x}, {x}, attrs, 0, {0, 0, 0, 12});
    ASSERT_EQ(corner.boxes.size(), 1u);
    EXPECT_EQ(corner.boxes[0].ToString(), "[0,0,0:2,11:13]") << op;
  }
}

// An oracle apart from the reference: x all ones on 3x3 gives window sums 4
// (corners), 6 (edges), 9 (centre); the energy is (4*16 + 4*36 + 81) / 81 =
// (17/9)^2, so y = 4/17, 6/17, 9/17. Every tap is on a border here, and v2's
// one work item per row writes 3 outputs, not 4.
TEST_F(PerfOpsInProcess, WindowOpsMeetAHandComputedPlane) {
  Tensor x = *Tensor::Empty(DType::kF32, Shape({2, 2, 3, 3}));
  for (int64_t i = 0; i < x.numel(); ++i) x.FlatSetFromDouble(i, 1.0);
  const double sums[9] = {4, 6, 4, 6, 9, 6, 4, 6, 4};
  for (const std::string op : {"window_l2norm_v1", "window_l2norm_v2"}) {
    for (Device* device : {cpu_, static_cast<Device*>(nullptr)}) {
      for (int64_t block : {64, 1024}) {
        Tensor y = RunOp(op, x, device, block);
        ASSERT_TRUE(y.defined());
        for (int64_t i = 0; i < y.numel(); ++i) {
          EXPECT_NEAR(y.FlatGetAsDouble(i), sums[i % 9] / 17.0, 1e-6)
              << op << (device ? " cpu" : " reference") << " block=" << block << " element " << i;
        }
      }
    }
  }
}

// Every element scaled once, whichever order the work items visit them in;
// and the trap's block=512 skips the second half of a 1024-element y, and is
// wrong there even where the allocator hands back the memory of a run that got
// it right (block=512 runs after three right runs of the same size).
TEST_F(PerfOpsInProcess, ScaleOpsScaleEveryElementAndTheTrapSkipsHalf) {
  Tensor x = *Tensor::Empty(DType::kF32, Shape({37, 53}));
  for (int64_t i = 0; i < x.numel(); ++i) x.FlatSetFromDouble(i, static_cast<double>(i % 101) - 50.0);
  for (const std::string op : {"contiguous_scale", "strided_scale"}) {
    for (int64_t block : kBlocks) {
      Tensor y = RunOp(op, x, cpu_, block);
      ASSERT_TRUE(y.defined());
      for (int64_t i = 0; i < y.numel(); ++i) {
        ASSERT_EQ(y.FlatGetAsDouble(i), 2.0 * x.FlatGetAsDouble(i)) << op << " block=" << block << " element " << i;
      }
    }
  }
  Tensor v = *Tensor::Empty(DType::kF32, Shape({1024}));
  for (int64_t i = 0; i < v.numel(); ++i) v.FlatSetFromDouble(i, 1.0 + static_cast<double>(i));
  for (int64_t block : kBlocks) {
    Tensor y = RunOp("sweep_trap", v, cpu_, block);
    ASSERT_TRUE(y.defined());
    int64_t right = 0;
    for (int64_t i = 0; i < y.numel(); ++i) right += y.FlatGetAsDouble(i) == v.FlatGetAsDouble(i) + 1.0;
    if (block == 512) {
      for (int64_t i = 0; i < 512; ++i) ASSERT_EQ(y.FlatGetAsDouble(i), v.FlatGetAsDouble(i) + 1.0) << i;
      EXPECT_EQ(y.FlatGetAsDouble(512), 0.0) << "block 1's marker";
      EXPECT_LT(right, 1024);
    } else {
      EXPECT_EQ(right, 1024) << "block=" << block;
    }
  }
}

}  // namespace
}  // namespace opscope
