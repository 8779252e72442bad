// loop-bound-inclusive: `for (i = ...; i <= n; ...)` where n is an element
// count (a size()/numel()/dim() call, a variable holding one, ParallelFor's
// count or its range end, a vector's size, a CUDA kernel's size parameter)
// and the body indexes something with i itself (`a[i]`, `a[base + i]`): the
// last pass touches element n, one past the end. Bounds that are arithmetic
// (`i <= h + 1`, `i <= std::min(L - 1, ...)`) say their own last element and
// are not judged.
#include "analysis/static_check/kernel_facts.h"

namespace opscope::static_check {

namespace {

// The index expression of a[i] or of std::vector's operator[].
const AstNode* SubscriptIndex(const AstNode& n) {
  if (n.kind == CXCursor_ArraySubscriptExpr && n.children.size() == 2) return n.children[1].get();
  if (n.kind == CXCursor_CallExpr && CalleeName(n) == "operator[]" && n.children.size() == 3) {
    return n.children[2].get();
  }
  return nullptr;
}

// i, or a sum with i as one of its terms.
bool IndexesWith(const ClangAst& ast, const AstNode* e, const std::string& key) {
  e = StripCasts(e);
  if (RefersTo(e, key)) return true;
  if (e->kind == CXCursor_BinaryOperator && e->children.size() == 2 && ast.Operator(*e) == "+") {
    return IndexesWith(ast, e->children[0].get(), key) || IndexesWith(ast, e->children[1].get(), key);
  }
  return false;
}

const AstNode* SubscriptWith(const ClangAst& ast, const AstNode& body, const std::string& key) {
  const AstNode* found = nullptr;
  Walk(body, [&](const AstNode& n) {
    const AstNode* index = found == nullptr ? SubscriptIndex(n) : nullptr;
    if (index != nullptr && IndexesWith(ast, index, key)) found = &n;
  });
  return found;
}

}  // namespace

void CheckLoopBounds(const KernelFacts& facts, std::vector<StaticFinding>* out) {
  const ClangAst& ast = *facts.ast;
  Walk(*facts.function, [&](const AstNode& n) {
    if (n.kind != CXCursor_ForStmt) return;
    const ForParts parts = ast.For(n);
    std::string key;
    const AstNode* var = LoopVariable(ast, parts, &key);
    if (var == nullptr || parts.cond == nullptr || parts.body == nullptr) return;
    const AstNode* cond = StripImplicit(parts.cond);
    if (cond->kind != CXCursor_BinaryOperator || cond->children.size() != 2) return;
    const ClangAst::OperatorInfo op = ast.OperatorToken(*cond);
    const AstNode* bound = nullptr;
    if (op.spelling == "<=" && RefersTo(cond->children[0].get(), key)) bound = cond->children[1].get();
    if (op.spelling == ">=" && RefersTo(cond->children[1].get(), key)) bound = cond->children[0].get();
    if (bound == nullptr || !facts.IsSizeExpr(bound)) return;
    const AstNode* access = SubscriptWith(ast, *parts.body, key);
    if (access == nullptr) return;
    const std::string name = Spelling(var->cursor), size = ast.Text(*StripImplicit(bound));
    out->push_back(facts.FindingAt(op.line, op.column, "error", "loop-bound-inclusive",
                                   "`" + name + " " + op.spelling + " " + size + "` runs " + name + " up to " + size +
                                       ", one past the last of " + size + " elements, and `" + ast.Text(*access) +
                                       "` indexes with it: loop while `" + name + " < " + size + "`"));
  });
}

}  // namespace opscope::static_check
