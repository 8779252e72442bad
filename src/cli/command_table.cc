#include "cli/command_table.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "cli/app_driver.h"
#include "opscope/plugin.h"

namespace opscope::cli {

StatusOr<int> ExitZero(const Status& st) {
  if (!st.ok()) return st;
  return 0;
}

int RunCommandTable(CLI::App& app, const std::vector<Command>& table, std::span<const FieldFlag> fields,
                    std::string_view tool, int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  if (std::optional<int> done = ParseCommandLine(app, tool, argc, argv, out, err)) return *done;
  for (const Command& c : table) {
    if (!c.cli->parsed()) continue;
    if (c.loads_env_plugins) {
      const Status env = LoadPluginsFromEnv();
      if (!env.ok()) return UsageError(err, tool, NameFlags(env.ToString(), fields, c.own_flags));
    }
    StatusOr<int> code = c.run();
    return code.ok() ? *code : UsageError(err, tool, NameFlags(code.status().ToString(), fields, c.own_flags));
  }
  return UsageError(err, tool, "no command given (see " + std::string(tool) + " --help)");
}

}  // namespace opscope::cli
