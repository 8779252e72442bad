// The --plugin flag every ops-debug subcommand shares.
#pragma once

#include <string>
#include <vector>

#include "opscope/status.h"

namespace opscope::cli {

// Loads each plugin in order; the error names the flag and the plugin.
Status LoadPluginFlags(const std::vector<std::string>& plugins);

}  // namespace opscope::cli
