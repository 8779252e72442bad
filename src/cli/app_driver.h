// What both tools do before their subcommand runs: name an unknown command
// (CLI11 would call it an "unexpected argument"), parse, answer --help and
// --version, and turn every parse error into one line and exit code 2.
//
//   if (std::optional<int> done = ParseCommandLine(app, "ops-debug", argc, argv, out, err)) return *done;
//   ... dispatch on the parsed subcommand ...
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"

namespace CLI {
class App;
class Option;
}

namespace opscope::cli {

// "TOOL: error: WHAT" on one line; returns 2.
int UsageError(std::ostream& err, std::string_view tool, const std::string& what);
// 0 for OK, else UsageError with the status.
int FinishCommand(const Status& st, std::string_view tool, std::ostream& err);

// An exit code when the process is done (help, version, a usage error);
// nullopt when a subcommand parsed and should run.
std::optional<int> ParseCommandLine(CLI::App& app, std::string_view tool, int argc, const char* const* argv,
                                    std::ostream& out, std::ostream& err);

// A shape list typed with spaces and no quotes ("--input-shapes [4, 256, 64]")
// reaches argv as "[4," "256," "64]". A word that starts a bracket it does
// not close ("[4," or "--input-shapes=[4,") is joined, with a space, to the
// words after it until its brackets balance, as the user meant it; a word
// whose brackets never balance, and every other word, stays as it was.
std::vector<std::string> JoinBracketWords(int argc, const char* const* argv);

// --seed on `cmd`: a decimal number that fits 64 bits, checked before CLI11
// converts it (which reads "-1" as 2^64-1 and clamps what is larger).
CLI::Option* AddSeedOption(CLI::App* cmd, uint64_t& seed, const std::string& description);

// The last resort of a main: runs `body` and turns an exception that escaped
// it into "TOOL: error: internal error: WHAT" and exit code 2, never an
// abort. It also installs a terminate handler doing the same for exceptions
// thrown on other threads (a stream worker), which no catch here can see.
// While it runs, std::cout and std::cerr escape control characters
// (cli/control_escape.h).
int GuardedMain(std::string_view tool, std::ostream& err, const std::function<int()>& body);

// The end of a tool's main. A refusal (2: said in one line, nothing written)
// exits without the exit handlers: out of memory, OpenBLAS's worker threads
// retry their buffers for ever and its handler joins them, so the refusal
// would hang. Any other code exits normally.
[[noreturn]] void ExitTool(int code);

}  // namespace opscope::cli
