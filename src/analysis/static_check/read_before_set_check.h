// File: analysis/static_check/read_before_set_check.h
// index-read-before-set: clang's -Wuninitialized dataflow, kept to index variables.
//
//   CheckReadsBeforeSet(ast, &findings);  // after a parse with -W{,sometimes-,conditional-}uninitialized
#pragma once

#include <vector>

#include "analysis/static_check/clang_ast.h"
#include "analysis/static_check/static_check.h"

namespace opscope::static_check {

void CheckReadsBeforeSet(const ClangAst& ast, std::vector<StaticFinding>* out);

}  // namespace opscope::static_check
