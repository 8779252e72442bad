// File: cli/command_table.h
// A tool's subcommands as one table: each row is the subcommand's flags (its
// CLI::App, added by its Add...Command) and what runs once they parse. A
// tool's main builds its table and hands it to RunCommandTable, which parses,
// answers --help, --version and usage errors (cli/app_driver.h), loads the
// plugins of OPSCOPE_PLUGINS for the rows that take them, and runs the one
// row that parsed, its error as one line and exit code 2.
//
//   std::vector<Command> table = {
//       {AddListCommand(app, list), [&] { return ExitZero(ListOps(list, out)); }},
//       ...};
//   return RunCommandTable(app, table, kOpsDebugFieldFlags, "ops-debug", argc, argv, out, err);
#pragma once

#include <functional>
#include <span>
#include <ostream>
#include <string_view>
#include <vector>

#include "cli/field_flags.h"
#include "opscope/status.h"

namespace CLI {
class App;
}

namespace opscope::cli {

struct Command {
  CLI::App* cli = nullptr;                // the subcommand, as its Add...Command made it
  std::function<StatusOr<int>()> run;     // the exit code, or the error of bad usage or input
  bool loads_env_plugins = false;         // OPSCOPE_PLUGINS is loaded before it runs
  // Where this command spells a field otherwise than the tool's table does
  // (profile's compare rule is --rule, its --mode the scope).
  std::span<const FieldFlag> own_flags = {};
};

// 0 when `st` is OK, else `st`.
StatusOr<int> ExitZero(const Status& st);

// The exit code of the tool: the parse's (help, version, a usage error), or
// that of the row that parsed. A row's error names the flags of `fields`
// where the library named their fields (cli/field_flags.h).
int RunCommandTable(CLI::App& app, const std::vector<Command>& table, std::span<const FieldFlag> fields,
                    std::string_view tool, int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace opscope::cli
