// `ops-debug list`: every registered op, built-in or from a plugin, with where
// it came from and the devices it has kernels for.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "opscope/status.h"

namespace CLI {
class App;
}

namespace opscope::cli {

struct ListFlags {
  std::vector<std::string> plugins;
};

Status ListOps(const ListFlags& flags, std::ostream& out);
CLI::App* AddListCommand(CLI::App& app, ListFlags& flags);

}  // namespace opscope::cli
