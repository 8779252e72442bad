// The real inspector-cli run checks its own execution for races between
// streams: every example model runs race-free on two and on three compute
// streams (a false positive here would make every diagnosis wrong), the
// verdict is in summary.json, survives `inspector-cli export`, and the
// scratch ring is gone from the output folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "opscope/fill.h"
#include "opscope/npy.h"
#include "opscope/tensor.h"
#include "tool_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace ::opscope::testing;  // tool_test_util.h

const std::string kBin = std::string(OPSCOPE_BINARY_DIR) + "/bin/inspector-cli ";

json SummaryOf(const fs::path& dir) { return json::parse(Slurp(dir / "summary.json")); }

TEST(InspectorRace, ExampleModelsRunRaceFree) {
  const std::string models = std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/";
  const std::string plugin = std::string(OPSCOPE_BINARY_DIR) + "/lib/libmy_ops.so";
  ASSERT_TRUE(fs::exists(plugin)) << plugin << ": build the my_ops target";
  for (std::string model : {"two_branch.onnx", "resnet_small.onnx", "transformer_block.onnx", "custom_op.onnx"}) {
    for (int streams : {2, 3}) {
      SCOPED_TRACE(model + " on " + std::to_string(streams) + " streams");
      TempDir dir;
      const fs::path out = dir.path() / "run";
      const std::string extra = model == "custom_op.onnx" ? " --plugin " + plugin : "";
      // Fixed roofs: no calibration; two iterations: the last is the one checked.
      const auto r = Shell(kBin + "run " + models + model + " --output-dir " + out.string() + " --streams " +
                           std::to_string(streams) + " --iterations 2 --peak-bw 10 --peak-flops 50" + extra);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out.find("race "), std::string::npos) << r.out;  // nothing extra when there is none
      const json s = SummaryOf(out);
      ASSERT_TRUE(s.contains("races")) << s.dump(2).substr(0, 400);
      EXPECT_EQ(s["races"], json::array()) << s["races"].dump(2);
      EXPECT_TRUE(s["race_check"]["ran"].get<bool>());
      EXPECT_TRUE(s["race_check"]["unjudged"].is_null()) << s["race_check"].dump();
      EXPECT_GT(s["race_check"]["accesses"].get<int64_t>(), 0);
      EXPECT_FALSE(fs::exists(out / ".flight.ring"));
      std::printf("%s, %d streams: %s\n", model.c_str(), streams, s["race_check"].dump().c_str());
    }
  }
}

TEST(InspectorRace, ExportKeepsTheVerdict) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  const std::string model = std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/two_branch.onnx";
  auto r = Shell(kBin + "run " + model + " --output-dir " + out.string() + " --peak-bw 10 --peak-flops 50");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json before = SummaryOf(out);
  fs::remove(out / "summary.json");
  r = Shell(kBin + "export --input-dir " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json after = SummaryOf(out);
  EXPECT_EQ(after["races"], before["races"]);
  EXPECT_EQ(after["race_check"], before["race_check"]);
}

TEST(InspectorRace, AFailedRunLeavesNoFolderBehind) {
  TempDir dir;
  const fs::path out = dir.path() / "never", x = dir.path() / "x.npy";
  auto t = opscope::Tensor::Empty(opscope::DType::kF32, opscope::Shape({3}));
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(opscope::Fill(*t, {.kind = opscope::FillKind::kUniform, .seed = 1}).ok());
  ASSERT_TRUE(opscope::WriteNpy(x.string(), *t).ok());
  // An input of the wrong shape fails inside the executor, after the ring's folder was made.
  const std::string model = std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/two_branch.onnx";
  auto r = Shell(kBin + "run " + model + " --output-dir " + out.string() + " --inputs " + x.string() +
                 " --peak-bw 10 --peak-flops 50");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("expects shape"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
