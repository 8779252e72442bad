// ops-debug check end to end (the real binary, spawned): the gcc-style lines
// and the summary for each fixture of tests/static_check/, the exit codes,
// --json, the flags after --, a parse with errors that still goes on, and the
// bad input it refuses with one line and exit 2, writing nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tool_test_util.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;
using namespace ::opscope::testing;  // tool_test_util.h

const std::string kOpsDebug = std::string(OPSCOPE_BINARY_DIR) + "/bin/ops-debug";
const fs::path kFixtures = fs::path(OPSCOPE_SOURCE_DIR) / "tests" / "static_check";

ToolResult OpsDebug(const std::string& args) { return Shell(kOpsDebug + " " + args); }
std::string Fixture(const std::string& name) { return (kFixtures / name).string(); }

// No -I given: the include/ beside the binary is found on its own.
TEST(StaticCheckCli, PrintsEachFindingGccStyleThenASummary) {
  const std::string file = Fixture("loop_bound.cc");
  ToolResult r = OpsDebug("check " + file);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(Contains(r.out, file + ":19:25: error: `i <= n` runs i up to n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "[loop-bound-inclusive] in kernel CumsumCpu\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, file + ":30:27: error: `i <= e`")) << r.out;
  EXPECT_TRUE(Contains(r.out, "[loop-bound-inclusive] in kernel SquareCpu\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "check     " + file + ": 2 findings (2 errors, 0 warnings) in 2 kernels\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "repro: ops-debug check " + file + "\n")) << r.out;
  EXPECT_FALSE(Contains(r.out, "note:")) << "the fixture parses cleanly: " << r.out;
}

TEST(StaticCheckCli, CudaFixtureHasOneFindingPerCheck) {
  const std::string file = Fixture("kernels.cu");
  ToolResult r = OpsDebug("check " + file);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, file + ":9:3: warning: ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "[missing-tail-guard] in kernel scale_kernel\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, file + ":14:62: error: ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "[byte-offset-without-element-size] in kernel unpack_kernel\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, file + ":18:57: error: ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "[loop-bound-inclusive] in kernel clear_kernel\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, file + ":26:12: warning: ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "[index-read-before-set] in kernel shift_kernel\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, ": 4 findings (2 errors, 2 warnings) in 4 kernels\n")) << r.out;
}

TEST(StaticCheckCli, FixedFixturesExitZero) {
  for (const char* name : {"byte_offset_fixed.cc", "loop_bound_fixed.cc", "tail_guard_fixed.cc",
                           "read_before_set_fixed.cc", "kernels_fixed.cu"}) {
    ToolResult r = OpsDebug("check " + Fixture(name));
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.out << r.err;
    EXPECT_TRUE(Contains(r.out, ": no findings\n")) << r.out;
  }
}

TEST(StaticCheckCli, JsonHoldsEveryFinding) {
  TempDir dir;
  const fs::path json = dir.path() / "findings.json";
  const std::string file = Fixture("read_before_set.cc");
  ToolResult r = OpsDebug("check " + file + " --json " + json.string());
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "wrote     " + json.string())) << r.out;
  const nlohmann::json j = nlohmann::json::parse(Slurp(json));
  EXPECT_EQ(j["schema"], "opscope.static-check/1");
  EXPECT_EQ(j["file"], file);
  ASSERT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][0]["line"], 21);
  EXPECT_EQ(j["findings"][0]["column"], 47);
  EXPECT_EQ(j["findings"][0]["severity"], "warning");
  EXPECT_EQ(j["findings"][0]["kernel"], "PickRowCpu");
  EXPECT_EQ(j["findings"][0]["check"], "index-read-before-set");
  EXPECT_EQ(j["findings"][1]["kernel"], "TailCpu");
  EXPECT_EQ(j["parse_errors"].size(), 0u);
  for (const auto& e : fs::directory_iterator(dir.path())) EXPECT_EQ(e.path(), json) << "a temporary file left behind";
}

// The flags after -- reach the parse: a -D that turns the bug on.
TEST(StaticCheckCli, FlagsAfterDoubleDashReachTheParse) {
  TempDir dir;
  const fs::path src = dir.path() / "switch.cc";
  std::ofstream(src) << "void Clear(float* y, long n) {\n"
                        "  struct V { long size() const; } v;\n"
                        "#ifdef OFF_BY_ONE\n"
                        "  for (long i = 0; i <= v.size(); ++i) y[i] = 0;\n"
                        "#endif\n"
                        "}\n";
  EXPECT_EQ(OpsDebug("check " + src.string()).exit_code, 0);
  ToolResult r = OpsDebug("check " + src.string() + " -- -DOFF_BY_ONE");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, src.string() + ":4:22: error: ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "repro: ops-debug check " + src.string() + " -- -DOFF_BY_ONE\n")) << r.out;
}

TEST(StaticCheckCli, ParseErrorsAreANoteAndTheCheckGoesOn) {
  TempDir dir;
  const fs::path src = dir.path() / "partial.cc";
  std::ofstream(src) << "#include \"not_there.h\"\n"
                        "struct Buffer { long numel() const; };\n"
                        "void Fill(const Buffer& b, float* y) {\n"
                        "  for (long i = 0; i <= b.numel(); ++i) y[i] = 0;\n"
                        "}\n";
  ToolResult r = OpsDebug("check " + src.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, src.string() + ": note: clang reported 1 error; the checks ran on what it parsed")) << r.out;
  EXPECT_TRUE(Contains(r.out, "'not_there.h' file not found")) << r.out;
  EXPECT_TRUE(Contains(r.out, "[loop-bound-inclusive] in kernel Fill")) << r.out;
}

TEST(StaticCheckCli, BadInputIsOneLineAndExitTwoWithNothingWritten) {
  TempDir dir;
  const fs::path json = dir.path() / "out.json";
  ExpectUsageError(OpsDebug("check " + (dir.path() / "absent.cu").string() + " --json " + json.string()), "absent.cu", {.no_report = true});
  const fs::path txt = dir.path() / "kernel.txt";
  std::ofstream(txt) << "int x;\n";
  ExpectUsageError(OpsDebug("check " + txt.string() + " --json " + json.string()), "expected a kernel source", {.no_report = true});
  const fs::path garbage = dir.path() / "garbage.cc";
  std::ofstream(garbage) << "\x7f\x45\x4c\x46 }}} (((\n";
  ExpectUsageError(OpsDebug("check " + garbage.string() + " --json " + json.string()), "garbage.cc", {.no_report = true});
  ExpectUsageError(OpsDebug("check"), "source", {.no_report = true});
  EXPECT_FALSE(fs::exists(json));
}

}  // namespace
}  // namespace opscope
