#include "analysis/static_check/kernel_facts.h"

namespace opscope::static_check {

namespace {

bool IsCudaBuiltin(const std::string& name) {
  return name == "threadIdx" || name == "blockIdx" || name == "blockDim" || name == "gridDim";
}

// A member or method of opscope::BlockContext (include/opscope/device.h).
bool IsBlockContextMember(const AstNode& n, const char* name) {
  if (Spelling(n.cursor) != name) return false;
  const CXCursor parent = clang_getCursorSemanticParent(Referenced(n));
  return Spelling(parent) == "BlockContext";
}

// threadIdx, blockIdx.x, b.block_idx.y, b.linear_block(), ...
bool IsIndexSource(const AstNode& n, bool block_only) {
  if (n.kind == CXCursor_DeclRefExpr) {
    const std::string name = Spelling(n.cursor);
    return block_only ? name == "blockIdx" : IsCudaBuiltin(name);
  }
  if (n.kind == CXCursor_MemberRefExpr) {
    if (IsBlockContextMember(n, "block_idx")) return true;
    if (!block_only && (IsBlockContextMember(n, "block_dim") || IsBlockContextMember(n, "grid_dim"))) return true;
  }
  if (n.kind == CXCursor_CallExpr) {
    for (const auto& c : n.children) {
      if (c->kind == CXCursor_MemberRefExpr && IsBlockContextMember(*c, "linear_block")) return true;
    }
  }
  return false;
}

bool IsSizeCallName(const std::string& name) {
  return name == "size" || name == "numel" || name == "length" || name == "dim";
}

// The lambda handed to a call (through the std::function it converts to).
const AstNode* LambdaArgument(const AstNode& call) {
  const AstNode* found = nullptr;
  Walk(call, [&](const AstNode& n) {
    if (found == nullptr && n.kind == CXCursor_LambdaExpr) found = &n;
  });
  return found;
}

bool IsLiteralOne(const ClangAst& ast, const AstNode* e) {
  e = StripCasts(e);
  return e != nullptr && e->kind == CXCursor_IntegerLiteral && ast.Text(*e) == "1";
}

}  // namespace

std::string NameOf(const AstNode* e) {
  e = StripCasts(e);
  return e != nullptr && e->kind == CXCursor_DeclRefExpr ? Spelling(e->cursor) : "";
}

bool RefersTo(const AstNode* e, const std::string& key) {
  e = StripCasts(e);
  return e != nullptr && e->kind == CXCursor_DeclRefExpr && DeclKey(Referenced(*e)) == key;
}

bool Mentions(const AstNode& e, const std::string& key) {
  bool found = false;
  Walk(e, [&](const AstNode& n) { found = found || (n.kind == CXCursor_DeclRefExpr && DeclKey(Referenced(n)) == key); });
  return found;
}

const AstNode* LoopVariable(const ClangAst& ast, const ForParts& parts, std::string* key) {
  if (parts.init != nullptr) {
    if (parts.init->kind == CXCursor_DeclStmt && !parts.init->children.empty() &&
        parts.init->children.front()->kind == CXCursor_VarDecl) {
      *key = DeclKey(parts.init->children.front()->cursor);
      return parts.init->children.front().get();
    }
    const AstNode* init = StripImplicit(parts.init);
    if (init->kind == CXCursor_BinaryOperator && ast.Operator(*init) == "=" &&
        StripCasts(init->children.front().get())->kind == CXCursor_DeclRefExpr) {
      const AstNode* lhs = StripCasts(init->children.front().get());
      *key = DeclKey(Referenced(*lhs));
      return lhs;
    }
  }
  return nullptr;
}

ValueKind KernelFacts::Classify(const AstNode* e) const {
  e = StripCasts(e);
  if (e == nullptr) return ValueKind::kOther;
  if (e->kind == CXCursor_IntegerLiteral) return ValueKind::kLiteral;
  if (IsIndexSource(*e, false) || IsIndexVar(e)) return ValueKind::kIndex;
  if (e->kind == CXCursor_MemberRefExpr && !e->children.empty()) {
    const std::string field = Spelling(e->cursor);
    if ((field == "x" || field == "y" || field == "z") && Classify(e->children.front().get()) == ValueKind::kIndex) {
      return ValueKind::kIndex;
    }
    return ValueKind::kOther;
  }
  if (e->kind == CXCursor_UnaryOperator && e->children.size() == 1) {
    const std::string op = ast->Operator(*e);
    return op == "-" || op == "+" ? Classify(e->children.front().get()) : ValueKind::kOther;
  }
  if (e->kind == CXCursor_BinaryOperator && e->children.size() == 2) {
    const std::string op = ast->Operator(*e);
    const ValueKind a = Classify(e->children[0].get()), b = Classify(e->children[1].get());
    if (a == ValueKind::kOther || b == ValueKind::kOther) return ValueKind::kOther;
    if (op == "+" || op == "-") return a == ValueKind::kIndex || b == ValueKind::kIndex ? ValueKind::kIndex : ValueKind::kLiteral;
    // Index times index is an index (blockIdx.x * blockDim.x); times a literal
    // it may well be the element size written out (i * 4): not an index.
    if (op == "*") {
      if (a == ValueKind::kLiteral && b == ValueKind::kLiteral) return ValueKind::kLiteral;
      return a == ValueKind::kIndex && b == ValueKind::kIndex ? ValueKind::kIndex : ValueKind::kOther;
    }
  }
  return ValueKind::kOther;
}

bool KernelFacts::IsIndexVar(const AstNode* e) const {
  e = StripCasts(e);
  return e != nullptr && e->kind == CXCursor_DeclRefExpr && index_vars.count(DeclKey(Referenced(*e))) > 0;
}

bool KernelFacts::IsSizeExpr(const AstNode* e) const {
  e = StripCasts(e);
  if (e == nullptr) return false;
  if (e->kind == CXCursor_DeclRefExpr) return size_vars.count(DeclKey(Referenced(*e))) > 0;
  if (e->kind == CXCursor_CallExpr) return IsSizeCallName(CalleeName(*e));
  if (e->kind == CXCursor_BinaryOperator && e->children.size() == 2 && ast->Operator(*e) == "*") {
    return IsSizeExpr(e->children[0].get()) && IsSizeExpr(e->children[1].get());
  }
  return false;
}

bool KernelFacts::MentionsBlock(const AstNode* e) const {
  bool found = false;
  Walk(*e, [&](const AstNode& n) {
    found = found || IsIndexSource(n, true) ||
            (n.kind == CXCursor_DeclRefExpr && block_vars.count(DeclKey(Referenced(n))) > 0);
  });
  return found;
}

bool KernelFacts::MentionsThread(const AstNode* e) const {
  bool found = false;
  Walk(*e, [&](const AstNode& n) {
    found = found || (n.kind == CXCursor_DeclRefExpr && (Spelling(n.cursor) == "threadIdx" ||
                                                         thread_vars.count(DeclKey(Referenced(n))) > 0));
  });
  return found;
}

bool KernelFacts::IsClamped(const AstNode* e) const {
  bool clamped = false;
  Walk(*e, [&](const AstNode& n) {
    if (clamped) return;
    if (n.kind == CXCursor_ConditionalOperator) clamped = true;
    if (n.kind == CXCursor_CallExpr) {
      const std::string name = CalleeName(n);
      clamped = name == "min" || name == "fmin" || name == "fminf" || name == "clamp";
    }
    if (n.kind == CXCursor_DeclRefExpr) {
      auto it = initialisers.find(DeclKey(Referenced(n)));
      if (it != initialisers.end() && it->second != e && IsClamped(it->second)) clamped = true;
    }
  });
  return clamped;
}

StaticFinding KernelFacts::Finding(const AstNode& at, const std::string& severity, const std::string& check,
                                   const std::string& message) const {
  return FindingAt(at.line, at.column, severity, check, message);
}

StaticFinding KernelFacts::FindingAt(unsigned line, unsigned column, const std::string& severity,
                                     const std::string& check, const std::string& message) const {
  StaticFinding f;
  f.line = static_cast<int>(line);
  f.column = static_cast<int>(column);
  f.severity = severity;
  f.kernel = kernel;
  f.check = check;
  f.message = message;
  return f;
}

KernelFacts AnalyseKernel(const ClangAst& ast, const AstNode& function) {
  KernelFacts facts;
  facts.ast = &ast;
  facts.function = &function;
  facts.kernel = Spelling(function.cursor);
  for (const auto& c : function.children) {
    if (c->kind == CXCursor_CUDAGlobalAttr) facts.cuda_global = true;
  }
  // A CUDA kernel's sizes come in as its integer parameters.
  if (facts.cuda_global) {
    for (const auto& c : function.children) {
      if (c->kind == CXCursor_ParmDecl && IsIntegerType(clang_getCursorType(c->cursor))) {
        facts.size_vars.insert(DeclKey(c->cursor));
        facts.size_param_names.push_back(Spelling(c->cursor));
      }
    }
  }
  // One pass in source order: a variable is declared before it is used.
  Walk(function, [&](const AstNode& n) {
    if (n.kind == CXCursor_VarDecl) {
      const std::string key = DeclKey(n.cursor);
      const AstNode* init = n.LastExpr();
      if (init == nullptr) return;
      facts.initialisers[key] = init;
      if (IsIntegerType(clang_getCursorType(n.cursor))) {
        if (facts.Classify(init) == ValueKind::kIndex) facts.index_vars.insert(key);
        if (facts.MentionsBlock(init)) facts.block_vars.insert(key);
        if (facts.MentionsThread(init)) facts.thread_vars.insert(key);
        if (facts.IsSizeExpr(init)) facts.size_vars.insert(key);
      } else {
        // std::vector<T> v(n): n is the element count of v.
        const std::string type = ToString(clang_getTypeSpelling(clang_getCursorType(n.cursor)));
        const AstNode* ctor = StripImplicit(init);
        if (type.find("vector<") != std::string::npos && ctor->kind == CXCursor_CallExpr) {
          const AstNode* count = ctor->LastExpr() != nullptr ? ctor->children.front().get() : nullptr;
          if (count != nullptr && StripCasts(count)->kind == CXCursor_DeclRefExpr) {
            facts.size_vars.insert(DeclKey(Referenced(*StripCasts(count))));
          }
        }
      }
    } else if (n.kind == CXCursor_ForStmt) {
      const ForParts parts = ast.For(n);
      std::string key;
      if (LoopVariable(ast, parts, &key) == nullptr || parts.inc == nullptr) return;
      // A counter that steps by one (or by an index: a grid-stride loop) counts
      // elements; one stepping by `es` or `block` counts something else.
      const AstNode* inc = StripImplicit(parts.inc);
      const std::string op = ast.Operator(*inc);
      bool steps_elements = op == "++" || op == "--";
      if ((op == "+=" || op == "-=") && inc->children.size() == 2) {
        steps_elements = IsLiteralOne(ast, inc->children[1].get()) ||
                         facts.Classify(inc->children[1].get()) == ValueKind::kIndex;
      }
      if (steps_elements) facts.index_vars.insert(key);
      if (parts.init != nullptr && facts.MentionsBlock(parts.init)) facts.block_vars.insert(key);
      if (parts.init != nullptr && facts.MentionsThread(parts.init)) facts.thread_vars.insert(key);
    } else if (n.kind == CXCursor_CallExpr && CalleeName(n) == "ParallelFor") {
      // ctx.ParallelFor(name, n, [&](int64_t b, int64_t e) {...}): b and e are
      // element indices, e is also the end of the range, and n the count.
      if (const AstNode* lambda = LambdaArgument(n)) {
        std::vector<const AstNode*> params;
        for (const auto& c : lambda->children) {
          if (c->kind == CXCursor_ParmDecl) params.push_back(c.get());
        }
        for (const AstNode* p : params) facts.index_vars.insert(DeclKey(p->cursor));
        if (params.size() == 2) facts.size_vars.insert(DeclKey(params[1]->cursor));
      }
      std::vector<const AstNode*> args;
      for (const auto& c : n.children) {
        if (c->kind != CXCursor_MemberRefExpr) args.push_back(c.get());
      }
      if (args.size() >= 2 && StripCasts(args[1])->kind == CXCursor_DeclRefExpr) {
        facts.size_vars.insert(DeclKey(Referenced(*StripCasts(args[1]))));
      }
    }
  });
  return facts;
}

}  // namespace opscope::static_check
