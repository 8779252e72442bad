#include "cli/check_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <set>

#include "analysis/static_check/static_check.h"
#include "core/command_line.h"
#include "core/file_util.h"
#include "core/text_format.h"
#include "opscope/npy.h"

namespace opscope::cli {

namespace {

namespace fs = std::filesystem;


std::string ReproLine(const CheckFlags& f) {
  CommandLine c("ops-debug check");
  c.Arg(f.source).FlagIf(!f.json.empty(), "--json", f.json);
  if (!f.compile_flags.empty()) {
    c.Switch("--");
    for (const std::string& flag : f.compile_flags) c.Arg(flag);
  }
  return c.str();
}

std::string Plural(size_t n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

// Only a few of clang's errors: the first ones say why the rest follow.
constexpr size_t kParseErrorsShown = 5;

}  // namespace

std::string InstalledIncludeDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const fs::path& dir : {exe.parent_path() / ".." / ".." / "include", exe.parent_path() / ".." / "include"}) {
    if (fs::exists(dir / "opscope" / "op.h", ec)) return fs::weakly_canonical(dir, ec).string();
  }
  return "";
}

StatusOr<int> RunCheck(const CheckFlags& f, std::ostream& out) {
  OPSCOPE_RETURN_IF_ERROR(PrepareOutputFile(f.json, "--json"));
  std::vector<std::string> flags = f.compile_flags;
  const std::string include = InstalledIncludeDir();
  if (!include.empty()) flags.insert(flags.end(), {"-I", include});
  OPSCOPE_ASSIGN_OR_RETURN(StaticCheckResult result, CheckKernelSource(f.source, flags));
  if (!result.parse_errors.empty()) {
    out << f.source << ": note: clang reported " << Plural(result.parse_errors.size(), "error")
        << "; the checks ran on what it parsed, index-read-before-set not at all (clang's dataflow needs an "
           "error-free parse): add the -I/-D flags after --\n";
    for (size_t i = 0; i < result.parse_errors.size() && i < kParseErrorsShown; ++i) {
      out << "  " << result.parse_errors[i] << "\n";
    }
    if (result.parse_errors.size() > kParseErrorsShown) {
      out << "  ... and " << result.parse_errors.size() - kParseErrorsShown << " more\n";
    }
  }
  std::set<std::string> kernels;
  size_t errors = 0;
  for (const StaticFinding& x : result.findings) {
    out << x.file << ":" << x.line << ":" << x.column << ": " << x.severity << ": " << x.message << " [" << x.check
        << "] in kernel " << x.kernel << "\n";
    kernels.insert(x.kernel);
    errors += x.severity == "error" ? 1 : 0;
  }
  if (result.findings.empty()) {
    out << "check     " << f.source << ": no findings\n";
  } else {
    out << "check     " << f.source << ": " << Plural(result.findings.size(), "finding") << " (" << Plural(errors, "error")
        << ", " << Plural(result.findings.size() - errors, "warning") << ") in " << Plural(kernels.size(), "kernel")
        << "\n";
  }
  if (!f.json.empty()) {
    OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(f.json, StaticCheckJson(f.source, result)).WithContext("--json"));
    out << "wrote     " << f.json << "\n";
  }
  out << "repro: " << ReproLine(f) << "\n";
  return result.findings.empty() ? 0 : 1;
}

CLI::App* AddCheckCommand(CLI::App& app, CheckFlags& f) {
  CLI::App* c = app.add_subcommand("check", "Static checks of a kernel source (.cc or .cu) with libclang: byte "
                                            "offsets without the element size, inclusive loop bounds, missing tail "
                                            "guards, indices read before they are set");
  c->add_option("source", f.source, "the kernel source: .cc, .cpp or .cu")->required();
  c->add_option("compile_flags", f.compile_flags, "after --: the flags it compiles with (-I, -D, -std=)");
  c->add_option("--json", f.json, "also write the findings as JSON (opscope.static-check/1) to this file");
  c->footer("The include/ folder beside ops-debug is added after the given flags. Exit codes: 0 no finding, "
            "1 findings, 2 bad input (a missing or unparsable source).");
  return c;
}

}  // namespace opscope::cli
