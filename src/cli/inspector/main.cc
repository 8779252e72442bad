// inspector-cli: the life of a model. All of it lives in the opscope_cli library.
#include <iostream>

#include "cli/apps.h"

int main(int argc, char** argv) { return opscope::cli::InspectorMain(argc, argv, std::cout, std::cerr); }
