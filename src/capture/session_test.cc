#include "capture/session.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

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

TEST_F(SessionConfigTest, RuntimeCollectorKeepsSyncAndAsyncLaunchesWithTheirConfigs) {
  auto collector = std::make_shared<SessionRuntimeCollector>(dir_.string());
  auto cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok());
  auto x = Tensor::Zeros(DType::kF32, Shape({8, 1000}));
  ASSERT_TRUE(x.ok());
  const int hook = Dispatcher::Global().AddHook(collector);
  auto sync = Dispatcher::Global().Run("Relu", {*x}, {}, {.device = *cpu});
  auto async = Dispatcher::Global().Run("Neg", {*x}, {}, {.device = *cpu, .synchronize = false});
  Dispatcher::Global().RemoveHook(hook);
  ASSERT_TRUE(sync.ok() && async.ok());
  ASSERT_TRUE((*cpu)->default_stream().Synchronize().ok());
  EXPECT_EQ(collector->size(), 2u);
  ASSERT_TRUE(collector->Flush().ok());

  std::ifstream f(dir_ / SessionRuntimeFileName(::getpid()));
  std::stringstream text;
  text << f.rdbuf();
  const auto j = nlohmann::json::parse(text.str());
  EXPECT_EQ(j["schema"], kSessionRuntimeSchema);
  ASSERT_EQ(j["launches"].size(), 2u);
  const uint64_t op_ids[] = {sync->op_id, async->op_id};
  for (int i = 0; i < 2; ++i) {
    const auto& l = j["launches"][i];
    EXPECT_EQ(l["op"], i == 0 ? "Relu" : "Neg");
    EXPECT_EQ(l["op_id"].get<uint64_t>(), op_ids[i]);
    EXPECT_EQ(l["device"], "cpu");
    EXPECT_TRUE(l["grid"].is_array()) << l.dump();
    EXPECT_GE(l["device_ns"][1].get<int64_t>(), l["device_ns"][0].get<int64_t>());
    EXPECT_GE(l["device_ns"][0].get<int64_t>(), 0);
  }
  // The async launch's config is the one the dispatcher hands back.
  ASSERT_TRUE(async->async_launches && !async->async_launches->empty());
  EXPECT_EQ(j["launches"][1]["block"][0].get<int64_t>(), async->async_launches->front().config.block.x);
  collector->Clear();
  EXPECT_EQ(collector->size(), 0u);
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
