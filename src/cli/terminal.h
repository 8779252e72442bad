// File: cli/terminal.h
// Whether a stream the tools print to is a terminal that takes colour:
// std::cout or std::cerr on a tty, NO_COLOR unset (no-color.org), TERM not "dumb".
#pragma once

#include <ostream>

namespace opscope::cli {

bool IsTerminal(const std::ostream& out);  // std::cout / std::cerr on a tty
bool UseColor(const std::ostream& out);

}  // namespace opscope::cli
