// File: analysis/static_check/clang_ast.h
// The part of a libclang translation unit the static checks look at: every
// declaration spelled in the main file, as an owned tree of cursors, with the
// few questions libclang 14's C API does not answer directly (which operator a
// BinaryOperator is, which child of a `for` is its condition, the source text
// of an expression). Headers are not walked: findings belong to the main file.
//
//   ClangAst ast(tu, main_file_text);
//   for (const AstNode* f : ast.Functions()) ...
//   if (ast.Operator(*node) == "<=") ...
#pragma once

#include <clang-c/Index.h>

#include <memory>
#include <string>
#include <vector>

namespace opscope::static_check {

struct AstNode {
  CXCursor cursor;
  CXCursorKind kind;
  AstNode* parent = nullptr;
  std::vector<std::unique_ptr<AstNode>> children;
  unsigned begin = 0, end = 0;  // byte offsets of the extent in the main file (expansion locations)
  unsigned line = 0, column = 0;  // of the cursor's own location

  bool Is(CXCursorKind k) const { return kind == k; }
  // The last child that is an expression (a VarDecl's initialiser, a cast's operand).
  const AstNode* LastExpr() const;
  bool Contains(const AstNode& other) const;
};

// The parts of a for, if or while statement: libclang leaves absent parts out
// of the children, so they are told apart by where they sit against the
// statement's `(`, `;` and `)` tokens.
struct ForParts {
  const AstNode* init = nullptr;
  const AstNode* cond = nullptr;
  const AstNode* inc = nullptr;
  const AstNode* body = nullptr;
};
struct IfParts {
  const AstNode* cond = nullptr;
  const AstNode* then_branch = nullptr;
  const AstNode* else_branch = nullptr;
};

class ClangAst {
 public:
  ClangAst(CXTranslationUnit tu, std::string main_text);
  ClangAst(const ClangAst&) = delete;
  ClangAst& operator=(const ClangAst&) = delete;

  const AstNode& root() const { return *root_; }
  // Function, method and function-template definitions of the main file, outermost first.
  const std::vector<const AstNode*>& Functions() const { return functions_; }
  // The innermost function definition whose extent holds `offset`; nullptr if none.
  const AstNode* FunctionAt(unsigned offset) const;

  // "+", "<=", "=", "+=" for a BinaryOperator or CompoundAssignOperator;
  // "++", "-", "*", "&" for a UnaryOperator; "" when the tokens do not say
  // (an expression inside a macro expansion).
  std::string Operator(const AstNode& n) const { return OperatorToken(n).spelling; }
  struct OperatorInfo {
    std::string spelling;
    unsigned line = 0, column = 0;
  };
  OperatorInfo OperatorToken(const AstNode& n) const;
  ForParts For(const AstNode& n) const;
  IfParts If(const AstNode& n) const;   // also a while: its condition and body
  std::string Text(const AstNode& n) const;  // the spelling in the main file

  CXTranslationUnit tu() const { return tu_; }

 private:
  struct Token {
    std::string spelling;
    unsigned offset, line, column;
    bool punctuation;
  };
  std::vector<Token> Tokens(const AstNode& n) const;
  // The offsets of the first `(` of a statement, its top-level `;` and its matching `)`.
  bool ParenLayout(const AstNode& n, unsigned* open, std::vector<unsigned>* semis, unsigned* close) const;

  CXTranslationUnit tu_;
  std::string main_text_;
  std::unique_ptr<AstNode> root_;
  std::vector<const AstNode*> functions_;
};

// Helpers over single nodes.
std::string Spelling(CXCursor c);
std::string ToString(CXString s);  // and disposes of it
// Skips implicit conversions (UnexposedExpr with one child) and parentheses.
const AstNode* StripImplicit(const AstNode* n);
// Also skips explicit casts (static_cast, C-style, functional): the value, not its type.
const AstNode* StripCasts(const AstNode* n);
// The declaration a DeclRefExpr, MemberRefExpr or CallExpr names.
CXCursor Referenced(const AstNode& n);
// A key for a declaration that is the same at every reference to it.
std::string DeclKey(CXCursor decl);
bool IsIntegerType(CXType t);
// The pointee's size in bytes for a pointer type: 0 for void, -1 when not a
// pointer or not known (a dependent type in a template).
long long PointeeSize(CXType t);
bool IsFunctionDefinition(const AstNode& n);
// The name a call calls ("memcpy", "size", "operator[]").
std::string CalleeName(const AstNode& call);
// Every node of the subtree, preorder, the root included.
template <typename Fn>
void Walk(const AstNode& n, Fn&& fn) {
  fn(n);
  for (const auto& c : n.children) Walk(*c, fn);
}

}  // namespace opscope::static_check
