// index-read-before-set from clang's own dataflow: the parse runs with
// -Wuninitialized, -Wsometimes-uninitialized and -Wconditional-uninitialized
// (Sema's analysis over each function's CFG; "conditional" is a read that
// some path reaches unset, e.g. after a loop that may not run), and each such diagnostic in the main file whose variable is
// an integer used as an index (a subscript, a pointer offset, a loop counter)
// becomes a finding. Diagnostics are told apart by their flag, never by their text.
#include "analysis/static_check/read_before_set_check.h"

#include "analysis/static_check/kernel_facts.h"

namespace opscope::static_check {

namespace {

bool IsUninitializedFlag(const std::string& flag) {
  return flag == "-Wuninitialized" || flag == "-Wsometimes-uninitialized" || flag == "-Wconditional-uninitialized";
}

// The variable a diagnostic's location reads, when it is a local integer
// without an initialiser (a read of `k` in `if (k > 0)` is not the culprit).
const AstNode* UninitialisedUse(const ClangAst& ast, CXSourceLocation loc, CXCursor* var) {
  unsigned offset = 0;
  clang_getExpansionLocation(loc, nullptr, nullptr, nullptr, &offset);
  const AstNode* fn = ast.FunctionAt(offset);
  if (fn == nullptr) return nullptr;
  const AstNode* found = nullptr;
  Walk(*fn, [&](const AstNode& n) {
    if (found != nullptr || n.kind != CXCursor_DeclRefExpr || n.begin != offset) return;
    const CXCursor decl = Referenced(n);
    if (clang_getCursorKind(decl) != CXCursor_VarDecl || !IsIntegerType(clang_getCursorType(decl))) return;
    if (!clang_Cursor_isNull(clang_Cursor_getVarDeclInitializer(decl))) return;
    found = &n;
    *var = decl;
  });
  return found;
}

// Used as an index somewhere in its function: inside a subscript's index, as
// a pointer's offset, or in a loop's start or condition.
bool UsedAsIndex(const ClangAst& ast, const AstNode& fn, const std::string& key) {
  bool used = false;
  Walk(fn, [&](const AstNode& n) {
    if (used) return;
    if (n.kind == CXCursor_ArraySubscriptExpr && n.children.size() == 2) used = Mentions(*n.children[1], key);
    if (n.kind == CXCursor_CallExpr && CalleeName(n) == "operator[]" && n.children.size() == 3) {
      used = Mentions(*n.children[2], key);
    }
    if (n.kind == CXCursor_BinaryOperator && n.children.size() == 2 &&
        clang_getCanonicalType(clang_getCursorType(n.cursor)).kind == CXType_Pointer) {
      used = Mentions(n, key);
    }
    if (n.kind == CXCursor_ForStmt) {
      const ForParts p = ast.For(n);
      used = (p.cond != nullptr && Mentions(*p.cond, key)) || (p.init != nullptr && Mentions(*p.init, key));
    }
  });
  return used;
}

}  // namespace

void CheckReadsBeforeSet(const ClangAst& ast, std::vector<StaticFinding>* out) {
  CXTranslationUnit tu = ast.tu();
  const unsigned count = clang_getNumDiagnostics(tu);
  for (unsigned d = 0; d < count; ++d) {
    CXDiagnostic diag = clang_getDiagnostic(tu, d);
    const std::string flag = ToString(clang_getDiagnosticOption(diag, nullptr));
    const bool sometimes = flag != "-Wuninitialized";
    if (!IsUninitializedFlag(flag) || !clang_Location_isFromMainFile(clang_getDiagnosticLocation(diag))) {
      clang_disposeDiagnostic(diag);
      continue;
    }
    // -Wuninitialized sits on the read; -Wsometimes-uninitialized on the branch
    // that skips the assignment, with the read in a note.
    std::vector<CXSourceLocation> places = {clang_getDiagnosticLocation(diag)};
    CXDiagnosticSet notes = clang_getChildDiagnostics(diag);
    for (unsigned i = 0; i < clang_getNumDiagnosticsInSet(notes); ++i) {
      CXDiagnostic note = clang_getDiagnosticInSet(notes, i);
      places.push_back(clang_getDiagnosticLocation(note));
      clang_disposeDiagnostic(note);
    }
    for (CXSourceLocation loc : places) {
      CXCursor var;
      const AstNode* use = UninitialisedUse(ast, loc, &var);
      if (use == nullptr) continue;
      const AstNode* fn = ast.FunctionAt(use->begin);
      const std::string key = DeclKey(var);
      unsigned decl_line = 0;
      clang_getExpansionLocation(clang_getCursorLocation(var), nullptr, &decl_line, nullptr, nullptr);
      if (!UsedAsIndex(ast, *fn, key)) break;
      const std::string name = Spelling(var);
      StaticFinding f;
      f.line = static_cast<int>(use->line);
      f.column = static_cast<int>(use->column);
      f.severity = sometimes ? "warning" : "error";
      f.kernel = Spelling(fn->cursor);
      f.check = "index-read-before-set";
      f.message = "index `" + name + "` (declared on line " + std::to_string(decl_line) + " without a value) is read here " +
                  (sometimes ? "on a path where no assignment has set it" : "before anything sets it") +
                  ": give it its start value where it is declared";
      out->push_back(std::move(f));
      break;
    }
    clang_disposeDiagnostic(diag);
  }
}

}  // namespace opscope::static_check
