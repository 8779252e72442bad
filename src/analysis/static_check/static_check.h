// File: analysis/static_check/static_check.h
// Static checks of a kernel source (.cc, or .cu in clang's CUDA mode), parsed
// with libclang: the bugs a kernel author makes with indices that a run may
// not show (a read one past the end lands in the allocator's slack; a missing
// tail guard only bites when the size is not a multiple of the block).
//
//   auto r = CheckKernelSource("my_ops.cc", {"-I", "/opt/opscope/include"});
//   if (!r.ok()) ...;                          // missing, unreadable or unparsable
//   for (const StaticFinding& f : r->findings) // file:line:col, check, kernel, message
//
// The checks (each finding's `check`):
//   byte-offset-without-element-size  an element index (loop, thread, block or
//       ParallelFor index) added to a byte pointer that is then read as a wider
//       type, or given to memcpy as a byte count of wider elements
//   loop-bound-inclusive  `i <= n` where n is an element count (a size() call,
//       a size parameter, ParallelFor's end) and the body indexes with i
//   missing-tail-guard  a CUDA global index (from blockIdx) that indexes a
//       pointer with nothing bounding it, or a block's loop whose end is the
//       block's start plus the block size, never clamped to the total
//   index-read-before-set  an integer used as an index that is read before
//       any assignment on some path (clang's own -Wuninitialized dataflow,
//       kept to index variables; clang runs it only when the parse had no error)
#pragma once

#include <string>
#include <vector>

#include "opscope/status.h"

namespace opscope {

struct StaticFinding {
  std::string file;
  int line = 0, column = 0;
  std::string severity;  // "error" | "warning"
  std::string kernel;    // the enclosing function (a lambda's enclosing function; for CUDA the __global__ one)
  std::string check;     // one of the names above
  std::string message;   // one line: what, and the direction of the fix, naming the variables
};

struct StaticCheckResult {
  std::vector<StaticFinding> findings;    // in source order
  std::vector<std::string> parse_errors;  // clang's errors, "file:line:col: error: ..."; the AST was still checked
};

// Parses `path` with `compile_flags` (as a compiler takes them: -I, -D,
// -std=; -std=c++20 when none is given) and runs every check on the
// definitions the file itself spells (never on its headers). A .cu file is
// parsed as CUDA for the host, with opscope's own declarations of the CUDA
// built-ins (threadIdx, __global__, ...), so no CUDA toolkit is needed.
// Error (naming the file) when it is missing, unreadable, not a C++/CUDA
// source, or so broken that clang gives no declaration of it.
StatusOr<StaticCheckResult> CheckKernelSource(const std::string& path, const std::vector<std::string>& compile_flags);

// {"schema": "opscope.static-check/1", "file", "findings": [...], "parse_errors": [...]}
std::string StaticCheckJson(const std::string& file, const StaticCheckResult& result);

}  // namespace opscope
