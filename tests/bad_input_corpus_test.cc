// The bad-input corpus (issue 11): tests/bad_inputs/make_bad_inputs.py makes
// truncated, byte-mutated and hand-edited ONNX models and lying .npy/.npz
// files from the repository's examples and numpy, and this test feeds each
// to the real tool it is for. Refused means exit 2, one line on stderr and
// nothing written; a random mutation may instead still run. Under
// build-asan/ the same files run through the ASan + UBSan tools.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tool_test_util.h"

namespace opscope {
namespace {

using ::opscope::testing::Shell;
using ::opscope::testing::TempDir;
using ::opscope::testing::ToolResult;
namespace fs = std::filesystem;

const std::string kBin = std::string(OPSCOPE_BINARY_DIR) + "/bin/";

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
  int refused = 0, ran = 0;
  for (const Row& r : rows) {
    SCOPED_TRACE(r.file + " (" + r.what + ")");
    const fs::path file = dir.path() / r.file, out = dir.path() / "out";
    fs::remove_all(out);
    std::string command;
    if (r.tool == "model") command = kBin + "inspector-cli run '" + file.string() + "' --output-dir '" + out.string() + "'";
    else if (r.tool == "npy") command = kBin + "ops-debug run --op Relu --inputs '" + file.string() + "'";
    else if (r.tool == "npz") command = kBin + "ops-debug compare '" + file.string() + "' '" + file.string() + "'";
    ASSERT_FALSE(command.empty()) << "unknown tool " << r.tool;
    ToolResult res = Shell(command);
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
  std::printf("%zu bad inputs: %d refused in one line, %d mutations still valid and run\n", rows.size(), refused, ran);
}

}  // namespace
}  // namespace opscope
