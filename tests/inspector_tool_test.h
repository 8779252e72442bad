// A gtest fixture for the tests that drive inspector-cli: a scratch folder
// of the test's own (named after suite and case, removed after), the tool
// run in this process through its own entry point (cli/apps.h's
// InspectorMain, stdout and stderr apart: a process start per call, slow
// under ASan, buys these tests nothing), Spawn for a test that needs the
// real program, and the example models. Users link opscope_cli.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "cli/apps.h"
#include "tool_test_util.h"

namespace opscope::testing {

class InspectorToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string(info->test_suite_name()) + "_" + std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static ToolResult Run(const std::string& args) {
    return InProcessLine(::opscope::cli::InspectorMain, std::string(OPSCOPE_BINARY_DIR) + "/bin/inspector-cli", args);
  }
  // The program itself, through the shell.
  ToolResult Spawn(const std::string& args) {
    const std::string out = (dir_ / "stdout.txt").string(), err = (dir_ / "stderr.txt").string();
    const std::string line = std::string(OPSCOPE_BINARY_DIR) + "/bin/inspector-cli " + args + " >" + out + " 2>" + err;
    const int status = std::system(line.c_str());
    ToolResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(out);
    r.err = Slurp(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
  }
  static std::string Model(const std::string& name) {
    return std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/" + name;
  }

  std::filesystem::path dir_;
};

}  // namespace opscope::testing
