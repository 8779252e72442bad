// ops-debug: the life of one operator. All of it lives in the opscope_cli library.
#include <iostream>

#include "cli/apps.h"

int main(int argc, char** argv) { return opscope::cli::OpsDebugMain(argc, argv, std::cout, std::cerr); }
