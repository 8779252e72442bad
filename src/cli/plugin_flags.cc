#include "cli/plugin_flags.h"

#include "opscope/plugin.h"

namespace opscope::cli {

Status LoadPluginFlags(const std::vector<std::string>& plugins) {
  for (const std::string& path : plugins) {
    auto p = LoadPlugin(path);
    if (!p.ok()) return std::move(p).status().WithContext("--plugin");
  }
  return Status::Ok();
}

}  // namespace opscope::cli
