// What the end-to-end tests share: running a tool with its output captured
// (spawned, or in process through its own entry point), a temporary folder,
// reading a file whole.
#pragma once

#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;  // unistd.h has it only under _GNU_SOURCE

namespace opscope::testing {

namespace fs = std::filesystem;

struct ToolResult {
  int exit_code = -1;
  std::string out, err;
  int err_lines() const { return static_cast<int>(std::count(err.begin(), err.end(), '\n')); }
};

inline std::string Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "opscope_test_XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) ? fs::path(tmpl) : fs::path();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Runs a shell command line with stdout and stderr captured apart.
inline ToolResult Shell(const std::string& command) {
  TempDir dir;
  const fs::path out = dir.path() / "out", err = dir.path() / "err";
  // OPSCOPE_PLUGINS would change what the tools load: keep the tests hermetic.
  const std::string line = "env -u OPSCOPE_PLUGINS " + command + " >" + out.string() + " 2>" + err.string();
  int status = std::system(line.c_str());
  ToolResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

// A tool's entry point (cli/apps.h: OpsDebugMain, InspectorMain), of which
// each binary's main is one line.
using ToolMain = int (*)(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// The tool run through its entry point in this process, argv[0] first: a
// spawn of the sanitizer build costs more than most runs it would make. For
// what only a process shows (exit by signal, a kill, the binary's own
// start-up), spawn it. The test program links opscope_cli.
inline ToolResult InProcess(ToolMain main, const std::vector<std::string>& argv) {
  // As Shell does: OPSCOPE_PLUGINS would change what the tool loads.
  ::unsetenv("OPSCOPE_PLUGINS");
  std::vector<const char*> args;
  for (const std::string& a : argv) args.push_back(a.c_str());
  std::ostringstream out, err;
  ToolResult r;
  r.exit_code = main(static_cast<int>(args.size()), args.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// The same with the arguments written as on a command line ("run --op Relu
// --input-shapes '[4]'"), split as sh splits words (wordexp, never running a
// command substitution). A line sh would need for more than words (a pipe, a
// redirection, $VAR) goes to Shell instead, as before.
inline ToolResult InProcessLine(ToolMain main, const std::string& tool_path, const std::string& args) {
  wordexp_t words;
  if (wordexp(args.c_str(), &words, WRDE_NOCMD | WRDE_UNDEF) != 0) return Shell(tool_path + " " + args);
  std::vector<std::string> argv{tool_path};
  argv.insert(argv.end(), words.we_wordv, words.we_wordv + words.we_wordc);
  wordfree(&words);
  return InProcess(main, argv);
}

inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// What a usage error must look like beyond exit code 2 and one line.
struct UsageError {
  std::string tool;        // "ops-debug": the line starts "ops-debug: error: "
  bool no_report = false;  // and nothing was printed on stdout
};

// Bad usage or bad input, as the tools answer it: exit 2 and one line on
// stderr holding `part`. Any result with exit_code, out and err (a spawned
// tool's ToolResult, or the same run in process).
template <typename Result>
void ExpectUsageError(const Result& r, const std::string& part, const UsageError& want = {}) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.err.ends_with('\n')) << r.err;
  if (!want.tool.empty()) {
    EXPECT_EQ(r.err.rfind(want.tool + ": error: ", 0), 0u) << r.err;
  }
  EXPECT_TRUE(Contains(r.err, part)) << "missing '" << part << "' in: " << r.err;
  if (want.no_report) {
    EXPECT_EQ(r.out, "") << "a failed run must print no report";
  }
}

// What posix_spawn takes, for a test that starts a tool without a shell:
// `args` as a null-ended C array (they must outlive it), and this process's
// environment less OPSCOPE_PLUGINS, which would change what the tool loads.
struct SpawnArgs {
  explicit SpawnArgs(const std::vector<std::string>& args) {
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (char** e = environ; *e; ++e) {
      if (std::string(*e).rfind("OPSCOPE_PLUGINS=", 0) != 0) env.push_back(*e);
    }
    env.push_back(nullptr);
  }
  std::vector<char*> argv, env;
};

}  // namespace opscope::testing
