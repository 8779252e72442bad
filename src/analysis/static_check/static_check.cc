// CheckKernelSource: reads the file, parses it with libclang (the file's own
// flags plus the analysis warnings the checks read), and runs every check on
// each function the main file defines.
#include "analysis/static_check/static_check.h"

#include <clang-c/Index.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <tuple>

#include "analysis/static_check/clang_ast.h"
#include "analysis/static_check/clang_prelude.h"
#include "analysis/static_check/kernel_facts.h"
#include "analysis/static_check/read_before_set_check.h"
#include "opscope/npy.h"

namespace opscope {

namespace {

using static_check::ClangAst;

bool IsCuda(const std::string& ext) { return ext == ".cu" || ext == ".cuh"; }
bool IsCxx(const std::string& ext) { return ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".c++"; }

std::vector<std::string> ParseArgs(bool cuda, const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"-x", cuda ? "cuda" : "c++", "-include", static_check::kCxxPreludePath};
  if (cuda) {
    // Host side only, no CUDA headers or libdevice, no toolkit looked for (the
    // installed one may be newer than clang 14 knows): the prelude declares the rest.
    args.insert(args.end(), {"--cuda-host-only", "-nocudainc", "-nocudalib", "--cuda-path=/nonexistent",
                             "-Wno-unknown-cuda-version", "-include", static_check::kCudaPreludePath, "-I",
                             static_check::kCudaStubDir});
  }
  const bool has_std = std::any_of(flags.begin(), flags.end(), [](const std::string& f) { return f.rfind("-std=", 0) == 0; });
  if (!has_std) args.push_back("-std=c++20");  // this project's kernels use designated initialisers
  args.insert(args.end(), flags.begin(), flags.end());
  // Last, so the caller's -w or -Wno-... cannot turn off what index-read-before-set reads.
  args.insert(args.end(), {"-Wuninitialized", "-Wsometimes-uninitialized", "-Wconditional-uninitialized",
                           "-Wno-error=uninitialized", "-Wno-error=sometimes-uninitialized",
                           "-Wno-error=conditional-uninitialized"});
  return args;
}

struct IndexDeleter {
  void operator()(void* index) const { clang_disposeIndex(index); }
};
struct TuDeleter {
  void operator()(CXTranslationUnitImpl* tu) const { clang_disposeTranslationUnit(tu); }
};

std::string FormatDiagnostic(CXDiagnostic d) {
  return static_check::ToString(clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation | CXDiagnostic_DisplayColumn));
}

}  // namespace

StatusOr<StaticCheckResult> CheckKernelSource(const std::string& path, const std::vector<std::string>& compile_flags) {
  namespace fs = std::filesystem;
  const std::string ext = fs::path(path).extension().string();
  if (!IsCuda(ext) && !IsCxx(ext)) {
    return InvalidArgumentError(path + ": expected a kernel source (.cc, .cpp, .cxx or .cu), got '" + ext + "'");
  }
  std::error_code ec;
  if (fs::is_directory(path, ec)) return InvalidArgumentError(path + ": a folder, expected a kernel source file");
  // Read here first: libclang's own error for a missing file says only "failure".
  OPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));

  const bool cuda = IsCuda(ext);
  const std::vector<std::string> args = ParseArgs(cuda, compile_flags);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::vector<CXUnsavedFile> unsaved;
  for (const static_check::VirtualFile& f : static_check::PreludeFiles()) {
    unsaved.push_back({f.path.c_str(), f.text.c_str(), static_cast<unsigned long>(f.text.size())});
  }
  std::unique_ptr<void, IndexDeleter> index(clang_createIndex(/*excludeDeclarationsFromPCH=*/0, /*displayDiagnostics=*/0));
  CXTranslationUnit raw_tu = nullptr;
  const CXErrorCode code = clang_parseTranslationUnit2(
      index.get(), path.c_str(), argv.data(), static_cast<int>(argv.size()), unsaved.data(),
      static_cast<unsigned>(unsaved.size()), CXTranslationUnit_KeepGoing | CXTranslationUnit_IgnoreNonErrorsFromIncludedFiles,
      &raw_tu);
  std::unique_ptr<CXTranslationUnitImpl, TuDeleter> tu(raw_tu);
  if (code != CXError_Success || tu == nullptr) {
    return InvalidArgumentError(path + ": libclang could not parse it (error " + std::to_string(code) +
                                "): expected a C++ or CUDA source and compile flags clang accepts");
  }

  StaticCheckResult result;
  const unsigned count = clang_getNumDiagnostics(tu.get());
  for (unsigned i = 0; i < count; ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu.get(), i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) result.parse_errors.push_back(FormatDiagnostic(d));
    clang_disposeDiagnostic(d);
  }
  const ClangAst ast(tu.get(), text);
  if (ast.root().children.empty() && !result.parse_errors.empty()) {
    return InvalidArgumentError(path + ": clang found no declaration in it (" + result.parse_errors.front() +
                                "): expected a C++ or CUDA source and the -I flags its includes need");
  }

  for (const static_check::AstNode* fn : ast.Functions()) {
    const static_check::KernelFacts facts = static_check::AnalyseKernel(ast, *fn);
    static_check::CheckByteOffsets(facts, &result.findings);
    static_check::CheckLoopBounds(facts, &result.findings);
    static_check::CheckTailGuards(facts, &result.findings);
  }
  static_check::CheckReadsBeforeSet(ast, &result.findings);
  for (StaticFinding& f : result.findings) f.file = path;
  std::stable_sort(result.findings.begin(), result.findings.end(), [](const StaticFinding& a, const StaticFinding& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  // A function template and its specialisation can report one place twice.
  result.findings.erase(std::unique(result.findings.begin(), result.findings.end(),
                                    [](const StaticFinding& a, const StaticFinding& b) {
                                      return a.line == b.line && a.column == b.column && a.check == b.check;
                                    }),
                        result.findings.end());
  return result;
}

}  // namespace opscope
