#include "analysis/static_check/clang_ast.h"

#include <algorithm>

namespace opscope::static_check {

namespace {

unsigned Offset(CXSourceLocation loc) {
  unsigned offset = 0;
  clang_getExpansionLocation(loc, nullptr, nullptr, nullptr, &offset);
  return offset;
}

CXChildVisitResult AddChild(CXCursor c, CXCursor, CXClientData data) {
  auto* parent = static_cast<AstNode*>(data);
  const CXSourceLocation loc = clang_getCursorLocation(c);
  // The translation unit's own children: only what the main file spells.
  if (parent->kind == CXCursor_TranslationUnit && !clang_Location_isFromMainFile(loc)) return CXChildVisit_Continue;
  auto node = std::make_unique<AstNode>();
  node->cursor = c;
  node->kind = clang_getCursorKind(c);
  node->parent = parent;
  const CXSourceRange range = clang_getCursorExtent(c);
  node->begin = Offset(clang_getRangeStart(range));
  node->end = Offset(clang_getRangeEnd(range));
  clang_getExpansionLocation(loc, nullptr, &node->line, &node->column, nullptr);
  AstNode* raw = node.get();
  parent->children.push_back(std::move(node));
  clang_visitChildren(c, AddChild, raw);
  return CXChildVisit_Continue;
}

void CollectFunctions(const AstNode& n, std::vector<const AstNode*>* out) {
  if (IsFunctionDefinition(n)) out->push_back(&n);
  for (const auto& c : n.children) CollectFunctions(*c, out);
}

bool IsCastKind(CXCursorKind k) {
  return k == CXCursor_CStyleCastExpr || k == CXCursor_CXXStaticCastExpr || k == CXCursor_CXXFunctionalCastExpr ||
         k == CXCursor_CXXReinterpretCastExpr || k == CXCursor_CXXConstCastExpr;
}

}  // namespace

const AstNode* AstNode::LastExpr() const {
  for (auto it = children.rbegin(); it != children.rend(); ++it) {
    if (clang_isExpression((*it)->kind)) return it->get();
  }
  return nullptr;
}

bool AstNode::Contains(const AstNode& other) const {
  for (const AstNode* p = &other; p != nullptr; p = p->parent) {
    if (p == this) return true;
  }
  return false;
}

ClangAst::ClangAst(CXTranslationUnit tu, std::string main_text) : tu_(tu), main_text_(std::move(main_text)) {
  root_ = std::make_unique<AstNode>();
  root_->cursor = clang_getTranslationUnitCursor(tu);
  root_->kind = CXCursor_TranslationUnit;
  clang_visitChildren(root_->cursor, AddChild, root_.get());
  CollectFunctions(*root_, &functions_);
}

const AstNode* ClangAst::FunctionAt(unsigned offset) const {
  const AstNode* best = nullptr;
  for (const AstNode* f : functions_) {
    if (f->begin <= offset && offset < f->end) best = f;  // later ones are nested deeper
  }
  return best;
}

std::vector<ClangAst::Token> ClangAst::Tokens(const AstNode& n) const {
  CXToken* tokens = nullptr;
  unsigned count = 0;
  clang_tokenize(tu_, clang_getCursorExtent(n.cursor), &tokens, &count);
  std::vector<Token> out;
  out.reserve(count);
  for (unsigned i = 0; i < count; ++i) {
    Token t{ToString(clang_getTokenSpelling(tu_, tokens[i])), 0, 0, 0,
            clang_getTokenKind(tokens[i]) == CXToken_Punctuation};
    clang_getExpansionLocation(clang_getTokenLocation(tu_, tokens[i]), nullptr, &t.line, &t.column, &t.offset);
    out.push_back(std::move(t));
  }
  clang_disposeTokens(tu_, tokens, count);
  return out;
}

ClangAst::OperatorInfo ClangAst::OperatorToken(const AstNode& n) const {
  if (n.children.empty()) return {};
  auto info = [](const Token& t) { return t.punctuation ? OperatorInfo{t.spelling, t.line, t.column} : OperatorInfo{}; };
  const std::vector<Token> tokens = Tokens(n);
  if (n.kind == CXCursor_BinaryOperator || n.kind == CXCursor_CompoundAssignOperator) {
    // The operator is the first token past the left operand.
    const unsigned lhs_end = n.children.front()->end;
    for (const Token& t : tokens) {
      if (t.offset >= lhs_end) return info(t);
    }
    return {};
  }
  if (n.kind == CXCursor_UnaryOperator && !tokens.empty()) {
    const unsigned operand_begin = n.children.front()->begin;
    if (tokens.front().punctuation && tokens.front().offset < operand_begin) return info(tokens.front());
    if (tokens.back().punctuation) return info(tokens.back());
  }
  return {};
}

bool ClangAst::ParenLayout(const AstNode& n, unsigned* open, std::vector<unsigned>* semis, unsigned* close) const {
  const std::vector<Token> tokens = Tokens(n);
  int depth = 0;
  bool opened = false;
  for (const Token& t : tokens) {
    if (!t.punctuation) continue;
    if (t.spelling == "(") {
      if (!opened) *open = t.offset;
      opened = true;
      ++depth;
    } else if (t.spelling == ")" && opened) {
      if (--depth == 0) {
        *close = t.offset;
        return true;
      }
    } else if (t.spelling == ";" && depth == 1) {
      semis->push_back(t.offset);
    }
  }
  return false;
}

ForParts ClangAst::For(const AstNode& n) const {
  ForParts p;
  unsigned open = 0, close = 0;
  std::vector<unsigned> semis;
  if (!ParenLayout(n, &open, &semis, &close) || semis.size() != 2) return p;  // a macro's for: left alone
  for (const auto& c : n.children) {
    if (c->begin < semis[0]) p.init = c.get();
    else if (c->begin < semis[1]) p.cond = c.get();
    else if (c->begin < close) p.inc = c.get();
    else p.body = c.get();
  }
  return p;
}

IfParts ClangAst::If(const AstNode& n) const {
  IfParts p;
  unsigned open = 0, close = 0;
  std::vector<unsigned> semis;
  if (!ParenLayout(n, &open, &semis, &close)) {
    // Spelled inside a macro: the children in their order (condition, then, else).
    if (n.children.size() >= 2) {
      p.cond = n.children[0].get();
      p.then_branch = n.children[1].get();
      if (n.children.size() >= 3) p.else_branch = n.children[2].get();
    }
    return p;
  }
  for (const auto& c : n.children) {
    if (c->begin < close) p.cond = c.get();  // the last one inside the parentheses (after an init-statement)
    else if (p.then_branch == nullptr) p.then_branch = c.get();
    else p.else_branch = c.get();
  }
  return p;
}

std::string ClangAst::Text(const AstNode& n) const {
  if (n.end <= n.begin || n.end > main_text_.size()) return Spelling(n.cursor);
  return main_text_.substr(n.begin, n.end - n.begin);
}

std::string Spelling(CXCursor c) { return ToString(clang_getCursorSpelling(c)); }

std::string ToString(CXString s) {
  const char* p = clang_getCString(s);
  std::string out = p != nullptr ? p : "";
  clang_disposeString(s);
  return out;
}

const AstNode* StripImplicit(const AstNode* n) {
  while (n != nullptr && (n->kind == CXCursor_UnexposedExpr || n->kind == CXCursor_ParenExpr) &&
         n->children.size() == 1) {
    n = n->children.front().get();
  }
  return n;
}

const AstNode* StripCasts(const AstNode* n) {
  for (;;) {
    n = StripImplicit(n);
    if (n == nullptr || !IsCastKind(n->kind)) return n;
    const AstNode* operand = n->LastExpr();
    if (operand == nullptr) return n;
    n = operand;
  }
}

CXCursor Referenced(const AstNode& n) { return clang_getCursorReferenced(n.cursor); }

std::string DeclKey(CXCursor decl) {
  if (clang_Cursor_isNull(decl)) return "";
  CXFile file = nullptr;
  unsigned offset = 0;
  clang_getSpellingLocation(clang_getCursorLocation(decl), &file, nullptr, nullptr, &offset);
  return ToString(clang_getFileName(file)) + ":" + std::to_string(offset) + ":" + Spelling(decl);
}

bool IsIntegerType(CXType t) {
  t = clang_getCanonicalType(t);
  return t.kind >= CXType_Bool && t.kind <= CXType_Int128 && t.kind != CXType_Bool;
}

long long PointeeSize(CXType t) {
  t = clang_getCanonicalType(t);
  if (t.kind != CXType_Pointer) return -1;
  const CXType pointee = clang_getCanonicalType(clang_getPointeeType(t));
  if (pointee.kind == CXType_Void) return 0;
  const long long size = clang_Type_getSizeOf(pointee);
  return size > 0 ? size : -1;
}

bool IsFunctionDefinition(const AstNode& n) {
  switch (n.kind) {
    case CXCursor_FunctionDecl:
    case CXCursor_CXXMethod:
    case CXCursor_FunctionTemplate:
    case CXCursor_Constructor:
    case CXCursor_Destructor:
      return clang_isCursorDefinition(n.cursor) != 0;
    default:
      return false;
  }
}

std::string CalleeName(const AstNode& call) { return Spelling(call.cursor); }

}  // namespace opscope::static_check
