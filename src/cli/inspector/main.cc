// inspector-cli: the life of a model. All of it lives in the opscope_cli library.
#include <iostream>

#include "cli/app_driver.h"
#include "cli/apps.h"

// No exception reaches the C++ runtime's abort: GuardedMain makes it one line and exit 2;
// ExitTool ends a refusal without the exit handlers.
int main(int argc, char** argv) {
  opscope::cli::ExitTool(opscope::cli::GuardedMain(
      "inspector-cli", std::cerr, [&] { return opscope::cli::InspectorMain(argc, argv, std::cout, std::cerr); }));
}
