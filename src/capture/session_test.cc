#include "capture/session.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace opscope {
namespace {

namespace fs = std::filesystem;

class SessionConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("session_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void WriteConfig(const std::string& text) { std::ofstream(dir_ / kSessionFile) << text; }
  fs::path dir_;
};

TEST_F(SessionConfigTest, RoundTripsEachCollectorSwitch) {
  for (bool graph : {false, true}) {
    for (bool runtime : {false, true}) {
      ASSERT_TRUE(WriteSessionConfig({.dir = dir_.string(), .graph = graph, .runtime = runtime}).ok());
      auto c = ReadSessionConfig(dir_.string());
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      EXPECT_EQ(c->graph, graph);
      EXPECT_EQ(c->runtime, runtime);
      EXPECT_EQ(c->dir, dir_.string());
    }
  }
}

TEST_F(SessionConfigTest, BadConfigsNameTheFileAndTheField) {
  auto missing = ReadSessionConfig((dir_ / "none").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("session.json"), std::string::npos);
  WriteConfig("{not json");
  EXPECT_NE(ReadSessionConfig(dir_.string()).status().message().find("not valid JSON"), std::string::npos);
  WriteConfig(R"({"schema": "opscope.session/2", "collectors": {"graph": true, "runtime": true}})");
  EXPECT_NE(ReadSessionConfig(dir_.string()).status().message().find("opscope.session/1"), std::string::npos);
  WriteConfig(R"({"schema": "opscope.session/1", "collectors": {"graph": 1, "runtime": true}})");
  EXPECT_NE(ReadSessionConfig(dir_.string()).status().message().find("collectors"), std::string::npos);
}

TEST(SessionFileNames, CarryPidAndIndex) {
  EXPECT_EQ(SessionRuntimeFileName(42), "runtime-42.json");
  EXPECT_EQ(SessionGraphFileName(42, 3), "graph-42-3.json");
}

TEST(Session, NoneWithoutTheVariable) {
  if (std::getenv(kSessionEnv) == nullptr) {
    EXPECT_EQ(ActiveSession(), nullptr);
    EXPECT_TRUE(FlushSessionRuntime().ok());
  } else {
    EXPECT_NE(ActiveSession(), nullptr);  // the tests themselves run inside a session
  }
}

}  // namespace
}  // namespace opscope
