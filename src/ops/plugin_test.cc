#include "opscope/plugin.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>

#include "capture/dispatcher.h"
#include "opscope/op.h"
#include "ops/registry_internal.h"

namespace opscope {
namespace {

const std::string kLibDir = std::string(OPSCOPE_BINARY_DIR) + "/lib/";

bool Loaded(const std::string& name) {
  for (const PluginInfo& p : LoadedPlugins()) {
    if (p.name == name) return true;
  }
  return false;
}

TEST(Plugin, LoadsTheExampleAndItsOpsRun) {
  const std::string path = kLibDir + "libmy_ops.so";
  auto p = LoadPlugin(path);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ((*p)->name, "libmy_ops.so");
  EXPECT_EQ((*p)->ops, (std::vector<std::string>{"my_bias_gelu", "my_norm"}));
  const OpSchema* norm = OpRegistry::Global().Find("my_norm");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->source, path);
  EXPECT_NE(norm->FindTunable("vec"), nullptr);

  // Loading again is a no-op that returns the same plugin.
  auto again = LoadPlugin(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *p);

  // The kernel and the reference agree on a row whose RMS is known.
  auto x = Tensor::Empty(DType::kF32, Shape({2, 4}));
  ASSERT_TRUE(x.ok());
  const float v[8] = {1, -1, 1, -1, 2, 2, 2, 2};
  std::copy(v, v + 8, x->data<float>());
  auto dev = GetDevice("cpu");
  ASSERT_TRUE(dev.ok());
  auto run = Dispatcher::Global().Run("my_norm", {*x}, {}, RunOptions{.device = *dev, .tunables = {{"vec", 2}}});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  auto ref = Dispatcher::Global().Run("my_norm", {*x}, {}, RunOptions{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  for (int i = 0; i < 8; ++i) {
    const double expected = v[i] / std::sqrt((i < 4 ? 1.0 : 4.0) + 1e-6);
    EXPECT_NEAR(ref->outputs[0].FlatGetAsDouble(i), expected, 1e-12) << i;
    EXPECT_NEAR(run->outputs[0].FlatGetAsDouble(i), expected, 1e-6) << i;
  }
}

TEST(Plugin, ADuplicateOpFailsTheWholePlugin) {
  auto p = LoadPlugin(kLibDir + "libdup_plugin.so");
  ASSERT_FALSE(p.ok());
  const std::string& msg = p.status().message();
  EXPECT_EQ(msg.rfind("plugin libdup_plugin.so: op Relu is registered twice (first by builtin", 0), 0u) << msg;
  // The op it did add is gone again, and Relu is still the built-in one.
  EXPECT_EQ(OpRegistry::Global().Find("dup_plugin_ok"), nullptr);
  ASSERT_NE(OpRegistry::Global().Find("Relu"), nullptr);
  EXPECT_EQ(OpRegistry::Global().Find("Relu")->source, "builtin");
  EXPECT_FALSE(Loaded("libdup_plugin.so"));
  EXPECT_TRUE(registry_internal::TakePendingErrors().empty());
}

TEST(Plugin, APluginOfAnotherAbiVersionIsRefusedBeforeAnyOfItsOps) {
  auto p = LoadPlugin(kLibDir + "libabi_plugin.so");
  ASSERT_FALSE(p.ok());
  // Its two ops say the same thing: the message says it once.
  EXPECT_EQ(p.status().message(), "plugin libabi_plugin.so: built against opscope plugin ABI version " +
                                      std::to_string(kPluginAbiVersion + 1) + ", but this libopscope has " +
                                      std::to_string(kPluginAbiVersion) +
                                      ": rebuild it against this opscope's include/opscope/");
  EXPECT_EQ(OpRegistry::Global().Find("abi_plugin_copy"), nullptr);
  EXPECT_EQ(OpRegistry::Global().Find("abi_plugin_copy2"), nullptr);
  EXPECT_FALSE(Loaded("libabi_plugin.so"));
  EXPECT_TRUE(registry_internal::TakePendingErrors().empty());
}

TEST(Plugin, APluginWithoutOpsIsAnError) {
  auto p = LoadPlugin(kLibDir + "libempty_plugin.so");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("plugin libempty_plugin.so: registers no op"), std::string::npos)
      << p.status().message();
  EXPECT_FALSE(Loaded("libempty_plugin.so"));
}

TEST(Plugin, AFileThatIsNoLibraryReportsDlerror) {
  auto missing = LoadPlugin(kLibDir + "libdoes_not_exist.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("plugin libdoes_not_exist.so: cannot load: "), std::string::npos)
      << missing.status().message();
  EXPECT_NE(missing.status().message().find("No such file"), std::string::npos) << missing.status().message();

  auto not_elf = LoadPlugin(std::string(OPSCOPE_SOURCE_DIR) + "/CMakeLists.txt");
  ASSERT_FALSE(not_elf.ok());
  EXPECT_NE(not_elf.status().message().find("plugin CMakeLists.txt: cannot load: "), std::string::npos)
      << not_elf.status().message();
}

TEST(Plugin, EnvironmentListLoadsEachAndNamesTheFailure) {
  ASSERT_EQ(setenv("OPSCOPE_PLUGINS", (":" + kLibDir + "libmy_ops.so:").c_str(), 1), 0);
  Status ok = LoadPluginsFromEnv();
  EXPECT_TRUE(ok.ok()) << ok.ToString();
  EXPECT_TRUE(Loaded("libmy_ops.so"));

  ASSERT_EQ(setenv("OPSCOPE_PLUGINS", (kLibDir + "libmy_ops.so:" + kLibDir + "libempty_plugin.so").c_str(), 1), 0);
  Status bad = LoadPluginsFromEnv();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.ToString().rfind("OPSCOPE_PLUGINS: plugin libempty_plugin.so", 0), 0u) << bad.ToString();
  unsetenv("OPSCOPE_PLUGINS");
  EXPECT_TRUE(LoadPluginsFromEnv().ok());
}

}  // namespace
}  // namespace opscope
