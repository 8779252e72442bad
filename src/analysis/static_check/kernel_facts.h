// File: analysis/static_check/kernel_facts.h
// What the checks need to know about one function before judging it: which
// of its variables are element indices (loop counters, ParallelFor's begin
// and end, CUDA thread and block indices), which hold a value derived from
// the block's index, which hold element counts. Kept conservative: a variable
// is an index only when its value provably is one (its initialiser is made of
// indices and literals only), so a byte offset computed as `i * es` is not.
//
//   KernelFacts facts = AnalyseKernel(ast, *function);
//   if (facts.Classify(expr) == ValueKind::kIndex) ...
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/static_check/clang_ast.h"
#include "analysis/static_check/static_check.h"

namespace opscope::static_check {

enum class ValueKind {
  kIndex,    // sums and differences of indices (and index times index: blockIdx.x * blockDim.x)
  kLiteral,  // an integer literal
  kOther,    // anything else: scaled by a non-index, a call, a load
};

struct KernelFacts {
  const ClangAst* ast = nullptr;
  const AstNode* function = nullptr;
  std::string kernel;
  bool cuda_global = false;
  std::set<std::string> index_vars;  // DeclKeys
  std::set<std::string> block_vars;  // derived from blockIdx, BlockContext::block_idx or linear_block()
  std::set<std::string> thread_vars;  // derived from threadIdx
  std::set<std::string> size_vars;   // element counts
  std::vector<std::string> size_param_names;  // a CUDA kernel's integer parameters, for messages
  std::map<std::string, const AstNode*> initialisers;

  ValueKind Classify(const AstNode* e) const;
  bool IsIndexVar(const AstNode* e) const;      // a reference to an index variable
  bool IsSizeExpr(const AstNode* e) const;      // a size() call or a size variable, or a product of them
  bool MentionsBlock(const AstNode* e) const;   // depends on the block's index
  bool MentionsThread(const AstNode* e) const;  // depends on threadIdx
  bool IsClamped(const AstNode* e) const;       // bounded by min() or a ?: (itself or through its variable)
  StaticFinding Finding(const AstNode& at, const std::string& severity, const std::string& check,
                        const std::string& message) const;
  StaticFinding FindingAt(unsigned line, unsigned column, const std::string& severity, const std::string& check,
                          const std::string& message) const;
};

KernelFacts AnalyseKernel(const ClangAst& ast, const AstNode& function);

// The variable a for statement counts with, or nullptr (the DeclKey goes to *key).
const AstNode* LoopVariable(const ClangAst& ast, const ForParts& parts, std::string* key);
bool RefersTo(const AstNode* e, const std::string& key);   // a DeclRefExpr to that declaration
bool Mentions(const AstNode& e, const std::string& key);   // refers to it anywhere inside
std::string NameOf(const AstNode* e);                        // a DeclRefExpr's variable, or ""

// Each check appends its findings for one function.
void CheckByteOffsets(const KernelFacts& facts, std::vector<StaticFinding>* out);
void CheckLoopBounds(const KernelFacts& facts, std::vector<StaticFinding>* out);
void CheckTailGuards(const KernelFacts& facts, std::vector<StaticFinding>* out);

}  // namespace opscope::static_check
