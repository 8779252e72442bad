// The hot chain end to end, through the real tools: ops-debug profile names
// window_l2norm_v1's strided window reads (and contiguous_scale gets no read
// suspect), a Relu>Sigmoid chain on 64 MiB gets the fusion hint with its
// exact byte count (the intermediate written and read again: 2 x 64 MiB), and
// an inspector-cli run of a shipped model has the ranked suspects in
// summary.json and in `summary`. The roofs are given, so nothing calibrates;
// no speed is asserted (the machine is shared), only what the facts decide.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tool_test_util.h"

namespace opscope {
namespace {

using testing::Contains;
using testing::ToolResult;

const std::string kBin = std::string(OPSCOPE_BINARY_DIR) + "/bin/";
const std::string kPerfOps = std::string(OPSCOPE_BINARY_DIR) + "/lib/libperf_ops.so";
const std::string kQuick = " --iters 2 --warmup 0 --peak-bw 20 --peak-flops 100";

ToolResult Profile(const std::string& args) { return testing::Shell(kBin + "ops-debug profile " + args + kQuick); }

TEST(HotChain, WindowL2NormV1NamesItsStridedWindowReads) {
  testing::TempDir dir;
  const std::string report = (dir.path() / "report.json").string();
  // 1 MiB of input: a smaller one re-read comes from cache and is named by no read suspect.
  ToolResult r = Profile("--plugin " + kPerfOps + " --op window_l2norm_v1 --input-shapes '[1,1,512,512]' --report " + report);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "suspect   [reads] window_l2norm_v1: tile the reads / prefetch: x is read with strided "
                              "window reads (box [0,0,255:258,255:258] per output: 3 runs of 3, 512 elements apart)"))
      << r.out;
  // After the kernel line and its launches, before the API time.
  EXPECT_LT(r.out.find("kernel    "), r.out.find("suspect   "));
  EXPECT_LT(r.out.find("suspect   "), r.out.find("api time  "));
  nlohmann::json j = nlohmann::json::parse(testing::Slurp(report));
  const nlohmann::json& s = j["profile"]["suspects"];
  ASSERT_TRUE(s.is_array() && !s.empty()) << j["profile"].dump(2);
  EXPECT_EQ(s[0]["kind"], "reads");
  EXPECT_EQ(s[0]["input"], "x");
  EXPECT_EQ(s[0]["pattern"], "strided window reads");
  EXPECT_EQ(s[0]["box_runs"], 3);
  EXPECT_EQ(s[0]["run_stride"], 512);
  // 4096 of the 262,144 outputs probed, scattered: 510 interior positions per
  // dim reading 3 and 2 border ones reading 2 give (1534/512)^2 = 8.977 in all.
  EXPECT_NEAR(s[0]["read_ratio"].get<double>(), (1534.0 / 512) * (1534.0 / 512), 0.05);

  // The same op on 16 KiB: the window reads come from cache; no read suspect.
  ToolResult small = Profile("--plugin " + kPerfOps + " --op window_l2norm_v1 --input-shapes '[1,1,64,64]'");
  ASSERT_EQ(small.exit_code, 0) << small.out << small.err;
  EXPECT_FALSE(Contains(small.out, "[reads]")) << small.out;
}

TEST(HotChain, ContiguousScaleGetsNoReadSuspect) {
  testing::TempDir dir;
  const std::string report = (dir.path() / "report.json").string();
  ToolResult r = Profile("--plugin " + kPerfOps + " --op contiguous_scale --input-shapes '[512,512]' --report " + report);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(Contains(r.out, "[reads]")) << r.out;
  nlohmann::json j = nlohmann::json::parse(testing::Slurp(report));
  ASSERT_TRUE(j["profile"]["suspects"].is_array());
  for (const nlohmann::json& s : j["profile"]["suspects"]) EXPECT_NE(s["kind"], "reads") << s.dump();
}

TEST(HotChain, ReluSigmoidOn64MiBGetsTheFusionHintWithItsByteCount) {
  ToolResult r = Profile("--chain 'Relu>Sigmoid' --input-shapes '[4096,4096]'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "  1. Relu ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "  2. Sigmoid ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "128.00 MiB  memory-bound")) << r.out;  // each stage reads and writes 64 MiB
  EXPECT_TRUE(Contains(r.out, "[fusion] fuse Relu into Sigmoid: saves 128.00 MiB (134217728 bytes) of traffic, "
                              "about "))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "at the measured bandwidth (")) << r.out;
}

TEST(HotChain, BadChainsAreUsageErrorsNamingTheFlag) {
  ToolResult r = Profile("--chain 'Relu>Nope' --input-shapes '[8]'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "--chain")) << r.err;
  EXPECT_EQ(r.out, "");
  r = Profile("--op Relu --chain 'Relu>Sigmoid' --input-shapes '[8]'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "--op, --chain and --graph: give one of them")) << r.err;
  r = Profile("--input-shapes '[8]'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "--op: required")) << r.err;
  // A chain writes no file: --report and --output are refused before it runs
  // (they were ignored, exit 0, nothing written), and nothing appears.
  testing::TempDir dir;
  const std::string report = (dir.path() / "chain_report.json").string(), timeline = (dir.path() / "chain_timeline.json").string();
  for (const std::string& flag : {"--report " + report, "--output " + timeline}) {
    r = Profile("--chain 'Relu>Sigmoid' --input-shapes '[8]' " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << r.out << r.err;
    EXPECT_TRUE(Contains(r.err, flag.substr(0, flag.find(' ')) + ": not written with --chain")) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(std::filesystem::exists(report));
  EXPECT_FALSE(std::filesystem::exists(timeline));
}

TEST(HotChain, AModelRunHasRankedSuspectsInSummaryJsonAndSummary) {
  testing::TempDir dir;
  const std::string out = (dir.path() / "run").string();
  ToolResult r = testing::Shell(kBin + "inspector-cli run " + std::string(OPSCOPE_SOURCE_DIR) +
                                "/examples/models/resnet_small.onnx --output-dir " + out +
                                " --peak-bw 20 --peak-flops 100");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(testing::Slurp(out + "/summary.json"));
  const nlohmann::json& s = j["suspects"];
  ASSERT_TRUE(s.is_array() && !s.empty()) << j.dump(2);
  double previous_run_saving = 1e300;
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i]["rank"], static_cast<int>(i) + 1);
    EXPECT_FALSE(s[i]["text"].get<std::string>().empty());
    EXPECT_FALSE(s[i]["nodes"].empty());
    // Ranked: on the critical path by saving first, then the rest.
    const double run_saving = s[i]["critical_path"].get<bool>() ? s[i]["saving_us"].get<double>() : 0.0;
    EXPECT_LE(run_saving, previous_run_saving) << s.dump(2);
    previous_run_saving = run_saving;
  }
  ToolResult summary = testing::Shell(kBin + "inspector-cli summary " + out);
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_TRUE(Contains(summary.out, "suspects  ranked by the run time they could save")) << summary.out;
  EXPECT_TRUE(Contains(summary.out, "  1. [" + s[0]["kind"].get<std::string>() + "] " + s[0]["text"].get<std::string>()))
      << summary.out;

  ToolResult graph = Profile("--graph " + std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/resnet_small.onnx");
  ASSERT_EQ(graph.exit_code, 0) << graph.out << graph.err;
  EXPECT_TRUE(Contains(graph.out, "/stem/conv/Conv")) << graph.out;
  EXPECT_TRUE(Contains(graph.out, "suspects  ")) << graph.out;
}

}  // namespace
}  // namespace opscope
