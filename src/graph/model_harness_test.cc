// The model harness as a library caller meets it: one call runs a model and
// writes its folder; the diff of two folders is one call too.
#include "opscope/model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace opscope {
namespace {

const std::string kModel = std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/two_branch.onnx";

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
  auto r = RunModel({.model = kModel, .output_dir = out, .streams = 2, .seed = 3});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->framework_nodes, 0);
  EXPECT_GT(r->compiled_nodes, 0);
  EXPECT_GT(r->tasks, 0);
  EXPECT_EQ(r->compute_streams, 2);
  EXPECT_FALSE(r->outputs.empty());
  EXPECT_FALSE(r->op_types.empty());
  for (const char* f : {"graph.json", "trace.json", "summary.json", "capture.json"}) {
    EXPECT_TRUE(std::filesystem::exists(dir_ / "a" / f)) << f;
  }
  EXPECT_EQ(r->files.size(), 4u);
  EXPECT_NE(r->repro.find("--streams 2"), std::string::npos) << r->repro;
}

TEST_F(ModelHarness, WithoutAFolderNothingIsWritten) {
  auto r = RunModel({.model = kModel});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->files.empty());
  EXPECT_FALSE(r->outputs.empty());
}

TEST_F(ModelHarness, BadRequestsNameTheFlag) {
  auto streams = RunModel({.model = kModel, .output_dir = (dir_ / "x").string(), .streams = 0});
  ASSERT_FALSE(streams.ok());
  EXPECT_NE(streams.status().message().find("--streams 0"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x"));
  auto missing = RunModel({.model = kModel + ".nope", .output_dir = (dir_ / "x").string()});
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x"));
}

TEST_F(ModelHarness, TheDiffOfTwoRunsIsOneCall) {
  ASSERT_TRUE(RunModel({.model = kModel, .output_dir = (dir_ / "a").string()}).ok());
  ASSERT_TRUE(RunModel({.model = kModel, .output_dir = (dir_ / "b").string(), .streams = 1}).ok());
  // Node counts are equal: only time could cross the (here unbounded) threshold.
  auto d = DiffRunFolders({.base_dir = (dir_ / "a").string(), .new_dir = (dir_ / "b").string(),
                           .threshold_time_pct = 1e9});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->regressed);
  EXPECT_TRUE(d->regressions.empty());
  EXPECT_NE(d->json.find("\"schema\": \"opscope.diff/1\""), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(d->file));
  auto none = DiffRunFolders({.base_dir = (dir_ / "a").string(), .new_dir = (dir_ / "nothing").string()});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("nothing"), std::string::npos);
}

}  // namespace
}  // namespace opscope
