// missing-tail-guard: the last block of a launch covers fewer elements than
// the block size unless the size is a multiple of it, and nothing says it is.
//   CUDA: a global index (computed from blockIdx and threadIdx) that indexes a pointer with no
//     `if (i < n)` (or `if (i >= n) return;`, a loop condition, a ?: or &&
//     on it) around or before the access.
//   A block's loop (CUDA or BlockContext): `for (i = begin; i < begin + block; ...)`
//     with begin from the block index and an end never clamped to the total
//     (`std::min(n, begin + block)`).
// A shared or local array indexed by the thread is not a tail: its size is
// the block's; nor is `sums[blockIdx.x]`, one element per block.
#include "analysis/static_check/kernel_facts.h"

#include <set>

namespace opscope::static_check {

namespace {

bool IsEarlyExit(const AstNode& stmt) {
  const AstNode* s = &stmt;
  if (s->kind == CXCursor_CompoundStmt && s->children.size() == 1) s = s->children.front().get();
  return s->kind == CXCursor_ReturnStmt || s->kind == CXCursor_ContinueStmt || s->kind == CXCursor_BreakStmt;
}

// Something on the path from the function to `access` tests a block-derived value.
bool Guarded(const KernelFacts& facts, const AstNode& access) {
  const ClangAst& ast = *facts.ast;
  for (const AstNode *n = &access, *up = access.parent; up != nullptr && n != facts.function; n = up, up = up->parent) {
    switch (up->kind) {
      case CXCursor_IfStmt:
      case CXCursor_WhileStmt: {
        const IfParts p = ast.If(*up);
        if (p.cond != nullptr && p.cond != n && facts.MentionsBlock(p.cond)) return true;
        break;
      }
      case CXCursor_ForStmt: {
        const ForParts p = ast.For(*up);
        if (p.cond != nullptr && p.cond != n && facts.MentionsBlock(p.cond)) return true;
        break;
      }
      case CXCursor_ConditionalOperator:
        if (up->children.size() == 3 && n != up->children[0].get() && facts.MentionsBlock(up->children[0].get())) {
          return true;
        }
        break;
      case CXCursor_BinaryOperator:
        if (up->children.size() == 2 && n == up->children[1].get() && facts.MentionsBlock(up->children[0].get())) {
          const std::string op = ast.Operator(*up);
          if (op == "&&" || op == "||") return true;
        }
        break;
      case CXCursor_CompoundStmt:
        // if (i >= n) return; earlier in the same block.
        for (const auto& s : up->children) {
          if (s.get() == n) break;
          if (s->kind != CXCursor_IfStmt) continue;
          const IfParts p = ast.If(*s);
          if (p.cond != nullptr && p.then_branch != nullptr && IsEarlyExit(*p.then_branch) && facts.MentionsBlock(p.cond)) {
            return true;
          }
        }
        break;
      default:
        break;
    }
  }
  return false;
}

void CheckCudaAccesses(const KernelFacts& facts, std::vector<StaticFinding>* out) {
  const ClangAst& ast = *facts.ast;
  std::set<std::string> reported;  // one finding per index expression's text
  Walk(*facts.function, [&](const AstNode& n) {
    if (n.kind != CXCursor_ArraySubscriptExpr || n.children.size() != 2) return;
    const AstNode* base = n.children[0].get();
    const AstNode* index = n.children[1].get();
    if (clang_getCanonicalType(clang_getCursorType(base->cursor)).kind != CXType_Pointer) return;
    const AstNode* array = StripImplicit(base);
    if (clang_getCanonicalType(clang_getCursorType(array->cursor)).kind == CXType_ConstantArray) return;
    if (!facts.MentionsBlock(index) || !facts.MentionsThread(index) || facts.IsClamped(index) || Guarded(facts, n)) {
      return;
    }
    const std::string i = ast.Text(*StripImplicit(index));
    if (!reported.insert(i).second) return;
    const std::string n_name = facts.size_param_names.empty() ? "n" : facts.size_param_names.front();
    out->push_back(facts.Finding(n, "warning", "missing-tail-guard",
                                 "`" + ast.Text(n) + "`: " + i + " comes from blockIdx and threadIdx and nothing bounds it, so the " +
                                     "last block reads past the end when the size is not a multiple of blockDim.x: "
                                     "guard it (`if (" + i + " >= " + n_name + ") return;`)"));
  });
}

void CheckBlockLoops(const KernelFacts& facts, std::vector<StaticFinding>* out) {
  const ClangAst& ast = *facts.ast;
  Walk(*facts.function, [&](const AstNode& n) {
    if (n.kind != CXCursor_ForStmt) return;
    const ForParts parts = ast.For(n);
    std::string key;
    const AstNode* var = LoopVariable(ast, parts, &key);
    if (var == nullptr || parts.cond == nullptr || parts.init == nullptr || !facts.MentionsBlock(parts.init)) return;
    const AstNode* cond = StripImplicit(parts.cond);
    if (cond->kind != CXCursor_BinaryOperator || cond->children.size() != 2) return;
    const std::string op = ast.Operator(*cond);
    const AstNode* end = nullptr;
    if ((op == "<" || op == "!=") && RefersTo(cond->children[0].get(), key)) end = cond->children[1].get();
    if (op == ">" && RefersTo(cond->children[1].get(), key)) end = cond->children[0].get();
    if (end == nullptr || !facts.MentionsBlock(end) || facts.IsClamped(end)) return;
    // A test of the counter inside the loop is a guard too (if (i >= n) break;).
    bool inner_guard = false;
    if (parts.body != nullptr) {
      Walk(*parts.body, [&](const AstNode& s) {
        if (s.kind == CXCursor_IfStmt) {
          const IfParts p = ast.If(s);
          inner_guard = inner_guard || (p.cond != nullptr && Mentions(*p.cond, key));
        }
      });
    }
    if (inner_guard) return;
    const std::string name = Spelling(var->cursor), end_text = ast.Text(*StripImplicit(end));
    out->push_back(facts.Finding(*StripImplicit(end), "warning", "missing-tail-guard",
                                 "`" + name + " " + op + " " + end_text + "`: the end comes from the block index and " +
                                     "is never clamped to the total, so the last block runs past it when the size is "
                                     "not a multiple of the block: end at `std::min(total, " + end_text + ")`"));
  });
}

}  // namespace

void CheckTailGuards(const KernelFacts& facts, std::vector<StaticFinding>* out) {
  if (facts.cuda_global) CheckCudaAccesses(facts, out);
  CheckBlockLoops(facts, out);
}

}  // namespace opscope::static_check
