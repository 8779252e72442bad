#include <CLI/CLI.hpp>

#include <string>

#include "cli/apps.h"
#include "cli/flag_parsing.h"

namespace opscope::cli {

// Its commands (graph, trace, serve) come with the graph layer; until then it
// answers --help and --version and names what it does not know.
int InspectorMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app("inspector-cli: an ONNX model's graph, its compiled graph and the tasks that ran", "inspector-cli");
  app.set_version_flag("--version", std::string("inspector-cli ") + OPSCOPE_VERSION);
  if (argc > 1 && argv[1][0] != '-') {
    err << "inspector-cli: error: unknown command '" << OneLine(argv[1])
        << "' (this build has no commands yet; see inspector-cli --help)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";  // CLI11 prints it without a newline
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);
    err << "inspector-cli: error: " << OneLine(e.what()) << "\n";
    return 2;
  }
  err << "inspector-cli: error: no command given (see inspector-cli --help)\n";
  return 2;
}

}  // namespace opscope::cli
