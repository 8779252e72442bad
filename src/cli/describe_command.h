// `ops-debug describe OP`: an op's schema as its author declared it: inputs,
// outputs, type constraints, attributes with types and defaults, tunables,
// kernels per device.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "opscope/status.h"

namespace CLI {
class App;
}

namespace opscope::cli {

struct DescribeFlags {
  std::string op;
  std::vector<std::string> plugins;
};

Status DescribeOp(const DescribeFlags& flags, std::ostream& out);
CLI::App* AddDescribeCommand(CLI::App& app, DescribeFlags& flags);

}  // namespace opscope::cli
