#include "cli/list_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>

#include "cli/plugin_flags.h"
#include "opscope/op.h"

namespace opscope::cli {

Status ListOps(const ListFlags& flags, std::ostream& out) {
  OPSCOPE_RETURN_IF_ERROR(LoadPluginFlags(flags.plugins));
  std::vector<std::string> names = OpRegistry::Global().Names();
  size_t width = 2;
  for (const std::string& n : names) width = std::max(width, n.size());
  out << "op" << std::string(width - 2 + 2, ' ') << "kernels  source\n";
  for (const std::string& n : names) {
    const OpSchema* op = OpRegistry::Global().Find(n);
    if (op == nullptr) continue;
    std::string kernels;
    for (const auto& [device, fn] : op->kernels) kernels += (kernels.empty() ? "" : ",") + device;
    if (kernels.empty()) kernels = "-";
    out << n << std::string(width - n.size() + 2, ' ') << kernels
        << std::string(kernels.size() < 7 ? 7 - kernels.size() + 2 : 2, ' ') << op->source << "\n";
  }
  out << names.size() << " ops\n";
  return Status::Ok();
}

CLI::App* AddListCommand(CLI::App& app, ListFlags& flags) {
  CLI::App* list = app.add_subcommand("list", "List the registered ops (built-in and from plugins)");
  list->add_option("--plugin", flags.plugins, "a .so with custom ops (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return list;
}

}  // namespace opscope::cli
