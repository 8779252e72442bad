#include "cli/app_driver.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "cli/control_escape.h"
#include "cli/flag_parsing.h"
#include "core/asan.h"

#if defined(OPSCOPE_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

namespace opscope::cli {

int UsageError(std::ostream& err, std::string_view tool, const std::string& what) {
  err << tool << ": error: " << OneLine(what) << "\n";
  return 2;
}

int FinishCommand(const Status& st, std::string_view tool, std::ostream& err) {
  return st.ok() ? 0 : UsageError(err, tool, st.ToString());
}

namespace {

// The tool's name for the terminate handler, which takes no arguments.
std::string& TerminateToolName() {
  static std::string* name = new std::string("opscope");
  return *name;
}

[[noreturn]] void OneLineTerminate() {
  std::string what = "terminated";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      what = std::string("uncaught exception: ") + ex.what();
    } catch (...) {
      what = "uncaught exception of an unknown type";
    }
  }
  std::fprintf(stderr, "%s: error: internal error: %s\n", TerminateToolName().c_str(),
               EscapeControl(OneLine(what)).c_str());
  std::fflush(stderr);
  ::_exit(2);  // other threads may hold locks: no destructors, no atexit
}

// Bad input has been said in one line and nothing was written: exit now,
// without the exit handlers. Out of memory, OpenBLAS's worker threads retry
// their buffer's allocation for ever, and its exit handler joins them: the
// refusal would hang (ops-debug compare under ulimit -v did).
[[noreturn]] void ExitRefused() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if defined(OPSCOPE_ASAN)
  __lsan_do_leak_check();  // what the skipped exit handlers would have checked
#endif
  ::_exit(2);
}

}  // namespace

int GuardedMain(std::string_view tool, std::ostream& err, const std::function<int()>& body) {
  TerminateToolName() = std::string(tool);
  std::set_terminate(OneLineTerminate);
  // Names from the files a tool reads reach what it prints: no control
  // character among them reaches the terminal as one.
  int code = 0;
  {
    ScopedControlEscaping escaping;
    try {
      code = body();
    } catch (const std::exception& e) {
      code = UsageError(err, tool, std::string("internal error: ") + e.what());
    } catch (...) {
      code = UsageError(err, tool, "internal error: an exception of an unknown type");
    }
  }
  return code;
}

void ExitTool(int code) {
  if (code == 2) ExitRefused();
  std::exit(code);
}

std::optional<int> ParseCommandLine(CLI::App& app, std::string_view tool, int argc, const char* const* argv,
                                    std::ostream& out, std::ostream& err) {
  if (argc <= 1) return UsageError(err, tool, "no command given (see " + std::string(tool) + " --help)");
  if (argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == argv[1];
    }
    if (!known) return UsageError(err, tool, std::string("unknown command '") + argv[1] + "' (commands: " + names + ")");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";  // CLI11 prints it without a newline
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help
    return UsageError(err, tool, e.what());
  }
  return std::nullopt;
}

namespace {

// '[' less ']' in `w`.
int Unclosed(std::string_view w) {
  int open = 0;
  for (char c : w) open += c == '[' ? 1 : c == ']' ? -1 : 0;
  return open;
}

bool OpensAList(std::string_view w) { return w.starts_with("[") || w.find("=[") != std::string_view::npos; }

}  // namespace

std::vector<std::string> JoinBracketWords(int argc, const char* const* argv) {
  std::vector<std::string> out;
  for (int i = 0; i < argc; ++i) {
    std::string word = argv[i];
    int open = Unclosed(word);
    if (i > 0 && OpensAList(word) && open > 0) {
      std::string joined = word;
      int j = i + 1;
      for (; j < argc && open > 0; ++j) {
        joined += std::string(" ") + argv[j];
        open += Unclosed(argv[j]);
      }
      if (open == 0) {
        word = std::move(joined);
        i = j - 1;
      }
    }
    out.push_back(std::move(word));
  }
  return out;
}

CLI::Option* AddSeedOption(CLI::App* cmd, uint64_t& seed, const std::string& description) {
  return cmd->add_option("--seed", seed, description)
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
            if (!digits) return "'" + text + "' is not a seed (expected a decimal number from 0 to 2^64-1)";
            errno = 0;
            std::strtoull(text.c_str(), nullptr, 10);
            if (errno == ERANGE) return "'" + text + "' is beyond 2^64-1 (expected a decimal number from 0 to 2^64-1)";
            return "";
          },
          "SEED", "seed"));
}

}  // namespace opscope::cli
