// ops-debug: the life of one operator. All of it lives in the opscope_cli library.
#include <iostream>

#include "analysis/static_check/libclang_leaks.h"  // ops-debug check parses with libclang
#include "cli/app_driver.h"
#include "cli/apps.h"

// No exception reaches the C++ runtime's abort: GuardedMain makes it one line and exit 2;
// ExitTool ends a refusal without the exit handlers.
int main(int argc, char** argv) {
  opscope::cli::ExitTool(opscope::cli::GuardedMain(
      "ops-debug", std::cerr, [&] { return opscope::cli::OpsDebugMain(argc, argv, std::cout, std::cerr); }));
}
