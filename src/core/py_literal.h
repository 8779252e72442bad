// File: core/py_literal.h
// The subset of Python literals a .npy header is written in: a dict of str
// keys whose values are str, bool, int, None, or tuples and lists of them
// (a list descr is a structured dtype). Parsed as Python's ast.literal_eval
// would, never evaluated.
//
//   OPSCOPE_ASSIGN_OR_RETURN(PyValue v, ParsePyLiteral("{'shape': (2, 3), }"));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"

namespace opscope {

struct PyField;
struct PyValue {
  enum Kind { kStr, kBool, kInt, kNone, kSeq, kDict } kind = kNone;
  std::string str;
  bool boolean = false;
  int64_t integer = 0;
  std::vector<PyValue> items;  // kSeq
  bool list = false;           // kSeq: [..], not (..)
  // A struct, not std::pair: clang rejects a pair of the still incomplete
  // PyValue here (libstdc++'s pair traits need the complete type).
  std::vector<PyField> fields;  // kDict
};
struct PyField {
  std::string key;
  PyValue value;
};

// The one literal `text` holds (with spaces around it); an error names the
// offset where it went wrong. Nesting deeper than 32 is refused.
StatusOr<PyValue> ParsePyLiteral(std::string_view text);

}  // namespace opscope
