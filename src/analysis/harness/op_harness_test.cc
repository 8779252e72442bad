// The op harness as a library caller meets it: typed inputs and goldens, the
// output count, what is checked before anything runs, and report.json.
#include "opscope/harness.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "capture/dispatcher.h"
#include "opscope/fill.h"

namespace opscope {
namespace {

Tensor Filled(const Shape& shape, uint64_t seed) {
  Tensor t = *Tensor::Empty(DType::kF32, shape);
  EXPECT_TRUE(Fill(t, {.kind = FillKind::kNormal, .seed = seed}).ok());
  return t;
}

// The reference's outputs, as a user would have saved them from elsewhere.
std::vector<Tensor> ReferenceOutputs(const std::string& op, const std::vector<Tensor>& in, int num_outputs) {
  auto run = Dispatcher::Global().Run(op, in, {}, RunOptions{.num_outputs = num_outputs});
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  return run.ok() ? run->outputs : std::vector<Tensor>{};
}

class OpHarnessFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("opscope_harness_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST(OpHarness, GivenTensorsAreJudgedAgainstTheReference) {
  Tensor x = Filled(Shape({3, 17}), 4);
  auto report = RunOpInstance({.op = "Relu", .input_tensors = {x}});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->passed());
  EXPECT_EQ(report->status(), RunStatus::kPassed);
  ASSERT_EQ(report->outputs.size(), 1u);
  EXPECT_EQ(report->outputs[0].compare.total, 51);
  EXPECT_EQ(report->inputs[0].origin, "given");
  EXPECT_NE(report->op_id, 0u);
  EXPECT_NE(report->repro.find("--input-shapes '[3,17]'"), std::string::npos) << report->repro;
}

// A kernel that skips the second half of its output: on a reused buffer the
// half could still hold the right values from the call before, so the
// harness poisons every output and the skipped elements fail as NaN.
TEST(OpHarness, ElementsTheKernelNeverWritesFailEvenOnAReusedBuffer) {
  auto half = [](KernelContext& ctx) {
    const int64_t n = ctx.in(0).numel();
    return ctx.ParallelFor("half_copy", n / 2, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ctx.out(0).FlatSetFromDouble(i, ctx.in(0).FlatGetAsDouble(i));
    });
  };
  auto full = [](KernelContext& ctx) {
    for (int64_t i = 0; i < ctx.in(0).numel(); ++i) ctx.out(0).FlatSetFromDouble(i, ctx.in(0).FlatGetAsDouble(i));
    return Status::Ok();
  };
  static const bool registered =
      OpRegistry::Global().Register(OpDef("harness_test_half_copy").Input("x").Output("y").SameShape()
                                        .Kernel("cpu", half).Reference(full).schema()).ok();
  ASSERT_TRUE(registered);
  // 2 MiB of float32: large enough for the cpu device's block cache, so the
  // first call's output buffer is the second call's.
  Tensor x = Filled(Shape({1 << 19}), 1);
  auto right = RunOpInstance({.op = "Relu", .input_tensors = {x}});
  ASSERT_TRUE(right.ok());
  auto report = RunOpInstance({.op = "harness_test_half_copy", .input_tensors = {x}});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->passed());
  ASSERT_EQ(report->outputs.size(), 1u);
  EXPECT_EQ(report->outputs[0].compare.nan_actual, (1 << 19) / 2);
}

TEST(OpHarness, ExpectedTensorsSetHowManyOutputsTheOpIsAskedFor) {
  const std::vector<Tensor> in = {Filled(Shape({2, 8}), 1), Filled(Shape({8}), 2), Filled(Shape({8}), 3)};
  const std::vector<Tensor> all = ReferenceOutputs("LayerNormalization", in, 3);
  ASSERT_EQ(all.size(), 3u);
  auto three = RunOpInstance({.op = "LayerNormalization", .input_tensors = in, .expected_tensors = all});
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  ASSERT_EQ(three->outputs.size(), 3u);
  EXPECT_EQ(three->outputs[1].name, "Mean");
  EXPECT_EQ(three->outputs[2].name, "InvStdDev");
  EXPECT_TRUE(three->passed());
  auto one = RunOpInstance({.op = "LayerNormalization", .input_tensors = in, .expected_tensors = {all[0]}});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->outputs.size(), 1u);
  // Said without expected tensors, against the reference.
  auto asked = RunOpInstance({.op = "LayerNormalization", .input_tensors = in, .num_outputs = 2});
  ASSERT_TRUE(asked.ok()) << asked.status().ToString();
  EXPECT_EQ(asked->outputs.size(), 2u);
}

TEST(OpHarness, AnOutputCountTheOpCannotGiveIsRefusedBeforeAnythingRuns) {
  const std::vector<Tensor> in = {Filled(Shape({2, 8}), 1), Filled(Shape({8}), 2)};
  auto too_many = RunOpInstance({.op = "LayerNormalization", .input_tensors = in, .num_outputs = 4});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("num_outputs: op LayerNormalization has 1 to 3 output(s), 4 asked for"),
            std::string::npos) << too_many.status().message();
  const std::vector<Tensor> all = ReferenceOutputs("LayerNormalization", in, 3);
  auto disagree = RunOpInstance({.op = "LayerNormalization", .input_tensors = in, .expected_tensors = all, .num_outputs = 2});
  ASSERT_FALSE(disagree.ok());
  EXPECT_NE(disagree.status().message().find("num_outputs 2: but 3 expected tensor(s)"), std::string::npos)
      << disagree.status().message();
}

TEST(OpHarness, AWrongExpectedTensorFailsWithItsCountAndPlace) {
  Tensor x = Filled(Shape({4, 5}), 9);
  std::vector<Tensor> expected = ReferenceOutputs("Relu", {x}, -1);
  expected[0].FlatSetFromDouble(13, expected[0].FlatGetAsDouble(13) + 1.0);
  auto report = RunOpInstance({.op = "Relu", .input_tensors = {x}, .expected_tensors = expected});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->passed());
  EXPECT_EQ(report->ExitCode(), 1);
  EXPECT_EQ(report->outputs[0].compare.mismatched, 1);
  EXPECT_EQ(report->outputs[0].compare.max_abs_coords, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(report->golden, "expected files");
}

TEST(OpHarness, AnEmptyOutputIsNothingToMismatch) {
  Tensor x = *Tensor::Empty(DType::kF32, Shape({0, 3}));
  Tensor e = *Tensor::Empty(DType::kF32, Shape({0, 3}));
  auto report = RunOpInstance({.op = "Relu", .input_tensors = {x}, .expected_tensors = {e}});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->passed());
  EXPECT_EQ(report->outputs[0].compare.total, 0);
}

TEST_F(OpHarnessFiles, ABadRequestWritesNothing) {
  const std::string report = (dir_ / "report.json").string();
  auto bad = RunOpInstance({.op = "Relu", .input_shapes = {Shape({8})}, .tunables = {{"blok", 64}}, .report = report});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("tunables: op Relu has no tunable 'blok'"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(std::filesystem::exists(report));
  auto undeclared = RunOpInstance({.op = "Relu", .input_shapes = {Shape({8})}, .tunables = {{"block", 12345}}, .report = report});
  ASSERT_FALSE(undeclared.ok());
  EXPECT_NE(undeclared.status().message().find("tunable 'block' takes "), std::string::npos)
      << undeclared.status().message();
  EXPECT_NE(undeclared.status().message().find("12345 is not one of them"), std::string::npos)
      << undeclared.status().message();
  EXPECT_FALSE(std::filesystem::exists(report));
  auto unknown = RunOpInstance({.op = "Relux", .report = report});
  ASSERT_FALSE(unknown.ok());
  EXPECT_FALSE(std::filesystem::exists(report));
}

TEST_F(OpHarnessFiles, TheReportIsWrittenWhereAsked) {
  const std::string path = (dir_ / "report.json").string();
  auto report = RunOpInstance({.op = "Sigmoid", .input_shapes = {Shape({64})}, .seed = 3, .report = path});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->report_file, path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"schema\": \"opscope.report/1\""), std::string::npos);
  EXPECT_NE(text.str().find("\"status\": \"passed\""), std::string::npos);
  EXPECT_EQ(text.str(), OpReportJson(*report));
}

}  // namespace
}  // namespace opscope
