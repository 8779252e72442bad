// The model harness as a library caller meets it: one call runs a model and
// writes its folder; the diff of two folders is one call too.
#include "opscope/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace opscope {
namespace {

const std::string kModel = std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/two_branch.onnx";
// Fixed roofs: no test here waits for a calibration.
constexpr double kBw = 10, kFlops = 50;

class ModelHarness : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("opscope_model_harness_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ModelHarness, RunWritesTheFolderAndReportsWhatRan) {
  const std::string out = (dir_ / "a").string();
  auto r = RunModel(
      {.model = kModel, .output_dir = out, .streams = 2, .seed = 3, .peak_bw_gbs = kBw, .peak_gflops = kFlops});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->framework_nodes, 0);
  EXPECT_GT(r->compiled_nodes, 0);
  EXPECT_GT(r->tasks, 0);
  EXPECT_EQ(r->compute_streams, 2);
  EXPECT_FALSE(r->outputs.empty());
  EXPECT_FALSE(r->op_types.empty());
  for (const char* f : {"graph.json", "trace.json", "summary.json", "roofline.svg", "capture.json"}) {
    EXPECT_TRUE(std::filesystem::exists(dir_ / "a" / f)) << f;
  }
  EXPECT_EQ(r->files.size(), 5u);
  EXPECT_NE(r->repro.find("--streams 2"), std::string::npos) << r->repro;
  EXPECT_NE(r->repro.find("--peak-bw 10 --peak-flops 50"), std::string::npos) << r->repro;
}

// The roofs given replace calibration; the lost time adds up, most first.
TEST_F(ModelHarness, TasksAreHeldAgainstTheGivenRoofs) {
  auto r = RunModel({.model = kModel, .peak_bw_gbs = kBw, .peak_gflops = kFlops});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->peaks.bandwidth_gbs, kBw);
  EXPECT_EQ(r->peaks.gflops_f32, kFlops);
  EXPECT_EQ(r->peaks.gflops_f64, kFlops);
  EXPECT_EQ(r->peaks.source, "--peak-bw/--peak-flops");
  EXPECT_GT(r->tasks_with_bound, 0);
  EXPECT_LT(r->tasks_with_bound, r->tasks);  // the copies have no cost model
  ASSERT_FALSE(r->lost.empty());
  int64_t bounded = 0;
  for (size_t i = 0; i < r->lost.size(); ++i) {
    const OpTypeLoss& l = r->lost[i];
    bounded += l.count;
    EXPECT_GT(l.lower_bound_us, 0) << l.op_type;
    EXPECT_NEAR(l.lost_us, l.measured_us - l.lower_bound_us, 1e-9 * l.measured_us) << l.op_type;
    EXPECT_NEAR(l.efficiency, l.lower_bound_us / l.measured_us, 1e-12) << l.op_type;
    if (i > 0) {
      EXPECT_LE(l.lost_us, r->lost[i - 1].lost_us);
    }
  }
  EXPECT_EQ(bounded, r->tasks_with_bound);
}

TEST_F(ModelHarness, RoofsMustBePositive) {
  const double nan = std::nan("");
  for (double bad : {0.0, -3.0, nan, HUGE_VAL}) {
    const std::string x = (dir_ / "x").string();
    auto bw = RunModel({.model = kModel, .output_dir = x, .peak_bw_gbs = bad, .peak_gflops = kFlops});
    ASSERT_FALSE(bw.ok()) << bad;
    EXPECT_EQ(bw.status().message().rfind("peak_bw_gbs ", 0), 0u) << bw.status().message();
    auto flops = RunModel({.model = kModel, .output_dir = x, .peak_bw_gbs = kBw, .peak_gflops = bad});
    ASSERT_FALSE(flops.ok()) << bad;
    EXPECT_EQ(flops.status().message().rfind("peak_gflops ", 0), 0u) << flops.status().message();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x"));
}

TEST_F(ModelHarness, WithoutAFolderNothingIsWritten) {
  auto r = RunModel({.model = kModel, .peak_bw_gbs = kBw, .peak_gflops = kFlops});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->files.empty());
  EXPECT_FALSE(r->outputs.empty());
}

TEST_F(ModelHarness, BadRequestsNameTheField) {
  auto streams = RunModel({.model = kModel, .output_dir = (dir_ / "x").string(), .streams = 0});
  ASSERT_FALSE(streams.ok());
  EXPECT_NE(streams.status().message().find("streams 0"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x"));
  auto missing = RunModel({.model = kModel + ".nope", .output_dir = (dir_ / "x").string()});
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x"));
}

TEST_F(ModelHarness, TheDiffOfTwoRunsIsOneCall) {
  ASSERT_TRUE(
      RunModel({.model = kModel, .output_dir = (dir_ / "a").string(), .peak_bw_gbs = kBw, .peak_gflops = kFlops}).ok());
  ASSERT_TRUE(RunModel({.model = kModel, .output_dir = (dir_ / "b").string(), .streams = 1, .peak_bw_gbs = kBw,
                        .peak_gflops = kFlops})
                  .ok());
  // Node counts are equal: only time could cross the (here unbounded) threshold.
  const std::string file = (dir_ / "diff.json").string();
  auto d = DiffRunFolders({.base_dir = (dir_ / "a").string(), .new_dir = (dir_ / "b").string(),
                           .threshold_time_pct = 1e9, .output = file});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->regressed);
  EXPECT_TRUE(d->regressions.empty());
  EXPECT_NE(d->json.find("\"schema\": \"opscope.diff/1\""), std::string::npos);
  EXPECT_EQ(d->file, file);  // where it was asked for, not into run folder b
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "b" / "diff.json"));
  // The typed report says what diff.json says.
  EXPECT_TRUE(d->same_model);
  ASSERT_EQ(d->changed_settings.size(), 1u);
  EXPECT_EQ(d->changed_settings[0].setting, "streams");
  EXPECT_EQ(d->changed_settings[0].now, "1");
  ASSERT_EQ(d->layers.size(), 2u);
  EXPECT_EQ(d->layers[0].layer, "framework");
  EXPECT_EQ(d->layers[1].base, d->layers[1].now);
  EXPECT_TRUE(d->layers[1].added.empty());
  EXPECT_EQ(d->base_iterations, d->new_iterations);
  EXPECT_EQ(d->span.name, "span");
  EXPECT_GT(d->span.base.median_us, 0);
  EXPECT_EQ(d->span.verdict, "unchanged");  // within a threshold of 1e9 %
  EXPECT_FALSE(d->nodes.empty());
  for (const TimeDiff& n : d->nodes) EXPECT_EQ(n.verdict, "unchanged") << n.name;
  std::ostringstream text;
  PrintRunDiff(*d, 2, text);
  EXPECT_NE(text.str().find("setting changed  streams  "), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\npassed  diff " + file + "\n"), std::string::npos) << text.str();
  auto none = DiffRunFolders({.base_dir = (dir_ / "a").string(), .new_dir = (dir_ / "nothing").string()});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("nothing"), std::string::npos);
}

}  // namespace
}  // namespace opscope
