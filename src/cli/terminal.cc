#include "cli/terminal.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace opscope::cli {

bool IsTerminal(const std::ostream& out) {
  if (&out == &std::cout) return isatty(STDOUT_FILENO) == 1;
  if (&out == &std::cerr) return isatty(STDERR_FILENO) == 1;
  return false;  // a string stream, a file
}

bool UseColor(const std::ostream& out) {
  if (const char* no = std::getenv("NO_COLOR"); no && *no) return false;
  if (const char* term = std::getenv("TERM"); term && std::strcmp(term, "dumb") == 0) return false;
  return IsTerminal(out);
}

}  // namespace opscope::cli
