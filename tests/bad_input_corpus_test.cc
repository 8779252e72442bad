// The bad-input corpus (issue 11): tests/bad_inputs/make_bad_inputs.py makes
// truncated, byte-mutated and hand-edited ONNX models and lying .npy/.npz
// files from the repository's examples and numpy, and this test feeds each
// to the tool it is for, through its entry point in this process (every
// kSpawnEvery-th file also through the binary, which must answer the same).
// Refused means exit 2, one line on stderr and nothing written; a random
// mutation may instead still run. Under build-asan/ the same files run
// through the ASan + UBSan build.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/apps.h"
#include "tool_test_util.h"

namespace opscope {
namespace {

using namespace ::opscope::testing;  // tool_test_util.h
namespace fs = std::filesystem;

const std::string kBin = std::string(OPSCOPE_BINARY_DIR) + "/bin/";
// One file in this many also goes to the binary (the first one included).
constexpr size_t kSpawnEvery = 25;

struct Row {
  std::string tool, expect, file, what;
};

std::vector<Row> MakeCorpus(const fs::path& dir) {
  ToolResult made = Shell(std::string("/usr/bin/python3 ") + OPSCOPE_SOURCE_DIR +
                          "/tests/bad_inputs/make_bad_inputs.py " + dir.string());
  EXPECT_EQ(made.exit_code, 0) << made.err;
  std::vector<Row> rows;
  std::ifstream in(dir / "manifest.tsv");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    Row r;
    std::getline(f, r.tool, '\t');
    std::getline(f, r.expect, '\t');
    std::getline(f, r.file, '\t');
    std::getline(f, r.what);
    rows.push_back(r);
  }
  return rows;
}

TEST(BadInputCorpus, EveryFileIsRefusedInOneLineOrRunsNeverACrash) {
  TempDir dir;
  const std::vector<Row> rows = MakeCorpus(dir.path());
  ASSERT_GE(rows.size(), 100u);
  int refused = 0, ran = 0, spawned = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    SCOPED_TRACE(r.file + " (" + r.what + ")");
    const fs::path file = dir.path() / r.file, out = dir.path() / "out";
    fs::remove_all(out);
    std::vector<std::string> argv;
    if (r.tool == "model") argv = {"inspector-cli", "run", file.string(), "--output-dir", out.string()};
    else if (r.tool == "npy") argv = {"ops-debug", "run", "--op", "Relu", "--inputs", file.string()};
    else if (r.tool == "npz") argv = {"ops-debug", "compare", file.string(), file.string()};
    ASSERT_FALSE(argv.empty()) << "unknown tool " << r.tool;
    const ToolResult res = InProcess(r.tool == "model" ? cli::InspectorMain : cli::OpsDebugMain, argv);
    if (i % kSpawnEvery == 0) {
      ++spawned;
      fs::remove_all(out);
      std::string command = kBin + argv[0];
      for (size_t a = 1; a < argv.size(); ++a) command += " '" + argv[a] + "'";
      const ToolResult child = Shell(command);
      EXPECT_EQ(child.exit_code, res.exit_code) << "the binary and the entry point disagree: " << child.err;
      if (res.exit_code == 2) EXPECT_EQ(child.err, res.err);
    }
    if (res.exit_code == 0 && r.expect == "0|2") {
      ++ran;
      continue;
    }
    ++refused;
    EXPECT_EQ(res.exit_code, 2) << res.out << res.err;
    EXPECT_EQ(res.err_lines(), 1) << res.err;
    // The line names the file it refused.
    EXPECT_NE(res.err.find(r.file), std::string::npos) << res.err;
    EXPECT_FALSE(fs::exists(out / "graph.json") || fs::exists(out / "capture.json")) << "a refused run wrote files";
  }
  // The hand-made files are all refused; of the mutations, some run.
  EXPECT_GT(refused, 80);
  EXPECT_GE(spawned, 4);
  std::printf("%zu bad inputs: %d refused in one line, %d mutations still valid and run\n", rows.size(), refused, ran);
}

}  // namespace
}  // namespace opscope
