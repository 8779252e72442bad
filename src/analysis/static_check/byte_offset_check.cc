// byte-offset-without-element-size: an element index added to a byte
// pointer (char*, unsigned char*, std::byte*, void*) whose result is then
// read as a wider type (cast to float*, copied into a float), or an element
// count given to memcpy as its byte count. `bytes + i * sizeof(float)`,
// `bytes + i * es` and `bytes + off` (off not an index) are left alone: the
// offset is scaled by something, which is all a static check can ask.
#include "analysis/static_check/kernel_facts.h"

namespace opscope::static_check {

namespace {

bool IsMemCall(const std::string& name) {
  return name == "memcpy" || name == "memmove" || name == "memset" || name == "cudaMemcpy" ||
         name == "cudaMemcpyAsync" || name == "cudaMemset";
}

std::vector<const AstNode*> CallArgs(const AstNode& call) {
  std::vector<const AstNode*> args;
  for (size_t i = 1; i < call.children.size(); ++i) args.push_back(call.children[i].get());  // [0] is the callee
  return args;
}

// The additive terms of an integer offset: a + b - c -> a, b, c.
void Terms(const ClangAst& ast, const AstNode* e, std::vector<const AstNode*>* out) {
  const AstNode* s = StripCasts(e);
  if (s != nullptr && s->kind == CXCursor_BinaryOperator && s->children.size() == 2) {
    const std::string op = ast.Operator(*s);
    if (op == "+" || op == "-") {
      Terms(ast, s->children[0].get(), out);
      Terms(ast, s->children[1].get(), out);
      return;
    }
  }
  out->push_back(e);
}

std::string TypeName(CXType t) { return ToString(clang_getTypeSpelling(t)); }

// "float" for const float*: the element, without its qualifiers.
std::string PointeeName(CXType t) {
  std::string name = TypeName(clang_getPointeeType(clang_getCanonicalType(t)));
  for (const std::string q : {"const ", "volatile "}) {
    if (name.rfind(q, 0) == 0) name = name.substr(q.size());
  }
  return name;
}

// Where the byte pointer `p + i` goes: the element type wider than a byte
// that it is read as ("float"), or "" when it stays a byte pointer.
std::string WiderUse(const KernelFacts& facts, const AstNode& sum) {
  const AstNode* n = &sum;
  for (const AstNode* up = n->parent; up != nullptr && up != facts.function; n = up, up = up->parent) {
    if (up->kind == CXCursor_UnexposedExpr || up->kind == CXCursor_ParenExpr) continue;
    if (up->kind == CXCursor_BinaryOperator && up->children.size() == 2 &&
        StripImplicit(up->children[0].get()) == StripImplicit(n)) {
      continue;  // (p + i) + j: still the byte pointer
    }
    if (up->kind == CXCursor_CStyleCastExpr || up->kind == CXCursor_CXXReinterpretCastExpr ||
        up->kind == CXCursor_CXXStaticCastExpr) {
      const CXType to = clang_getCursorType(up->cursor);
      const long long size = PointeeSize(to);
      if (size > 1) return PointeeName(to);
      if (size == 0 || size == 1) continue;  // through void* or another byte pointer
      return "";
    }
    if (up->kind == CXCursor_CallExpr && IsMemCall(CalleeName(*up))) {
      for (const AstNode* arg : CallArgs(*up)) {
        const long long size = PointeeSize(clang_getCursorType(StripImplicit(arg)->cursor));
        if (size > 1) return PointeeName(clang_getCursorType(StripImplicit(arg)->cursor));
      }
      return "";
    }
    return "";
  }
  return "";
}

void CheckPointerSum(const KernelFacts& facts, const AstNode& sum, std::vector<StaticFinding>* out) {
  const ClangAst& ast = *facts.ast;
  const std::string op = ast.Operator(sum);
  if ((op != "+" && op != "-") || sum.children.size() != 2) return;
  const AstNode* ptr = sum.children[0].get();
  const AstNode* offset = sum.children[1].get();
  if (PointeeSize(clang_getCursorType(ptr->cursor)) < 0) std::swap(ptr, offset);  // i + p
  const long long size = PointeeSize(clang_getCursorType(ptr->cursor));
  if (size != 0 && size != 1) return;
  if (!IsIntegerType(clang_getCursorType(offset->cursor))) return;
  std::vector<const AstNode*> terms;
  Terms(ast, offset, &terms);
  for (const AstNode* term : terms) {
    if (facts.Classify(term) != ValueKind::kIndex) continue;
    const std::string wider = WiderUse(facts, sum);
    if (wider.empty()) return;
    const std::string index = ast.Text(*StripImplicit(term)), pointer = ast.Text(*StripImplicit(ptr));
    out->push_back(facts.Finding(*StripImplicit(term), "error", "byte-offset-without-element-size",
                                 "`" + index + "` is an element index but is added to `" + pointer + "` (" +
                                     TypeName(clang_getCursorType(ptr->cursor)) + ", a byte pointer) that is read as " +
                                     wider + ": scale it by the element size (`" + index + " * sizeof(" + wider +
                                     ")`), or index a " + wider + " pointer instead"));
    return;
  }
}

// memcpy(y + b, x + b, e - b) on float pointers: the count is in elements.
void CheckByteCount(const KernelFacts& facts, const AstNode& call, std::vector<StaticFinding>* out) {
  const std::vector<const AstNode*> args = CallArgs(call);
  if (args.size() < 3) return;
  const AstNode* count = args[2];
  if (facts.Classify(count) != ValueKind::kIndex) return;
  const CXType dst = clang_getCursorType(StripImplicit(args[0])->cursor);
  const long long size = PointeeSize(dst);
  if (size <= 1) return;
  const std::string element = PointeeName(dst);
  const std::string n = facts.ast->Text(*StripImplicit(count));
  out->push_back(facts.Finding(*StripImplicit(count), "error", "byte-offset-without-element-size",
                               CalleeName(call) + " takes bytes, but `" + n + "` counts elements of " + element +
                                   " (" + std::to_string(size) + " bytes each): pass `(" + n + ") * sizeof(" + element +
                                   ")`"));
}

}  // namespace

void CheckByteOffsets(const KernelFacts& facts, std::vector<StaticFinding>* out) {
  Walk(*facts.function, [&](const AstNode& n) {
    if (n.kind == CXCursor_BinaryOperator) CheckPointerSum(facts, n, out);
    if (n.kind == CXCursor_CallExpr && IsMemCall(CalleeName(n))) CheckByteCount(facts, n, out);
  });
}

}  // namespace opscope::static_check
