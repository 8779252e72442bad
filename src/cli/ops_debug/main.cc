// ops-debug: the life of one operator. All of it lives in the opscope_cli library.
#include <iostream>

#include "analysis/static_check/libclang_leaks.h"  // ops-debug check parses with libclang
#include "cli/apps.h"

int main(int argc, char** argv) { return opscope::cli::OpsDebugMain(argc, argv, std::cout, std::cerr); }
