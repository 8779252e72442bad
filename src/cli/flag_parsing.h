// Parsers for the compact flag values of ops-debug: shape lists, dtype lists,
// name=value lists. Errors name the flag and the part that was wrong.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/dtype.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope::cli {

// Splits on `sep`, trimming spaces; empty text gives no parts.
std::vector<std::string> SplitList(std::string_view text, char sep);
// "[4,256,64];[64]" -> two shapes. An empty item is an error.
StatusOr<std::vector<Shape>> ParseShapeList(std::string_view flag, std::string_view text);
// "float32" or "float32,float16".
StatusOr<std::vector<DType>> ParseDTypeList(std::string_view flag, std::string_view text);
// "block=256,vec=4" -> {block: 256, vec: 4}; values are integers.
StatusOr<std::map<std::string, int64_t>> ParseIntAssignments(std::string_view flag, std::string_view text);

// Quotes a word for a POSIX shell when it needs it (for repro lines).
std::string ShellQuote(const std::string& word);
// 1234567 -> "1,234,567"
std::string WithThousands(int64_t n);
// 0x7f3a12345678 -> "0x7f3a…5678": stable-looking, still tells buffers apart.
std::string MaskAddress(const void* p);
// op_id in hex, shortened the same way.
std::string ShortHex(uint64_t v);
// A number as reports print it: 7 significant digits ("%.7g").
std::string ShortNum(double v);
// Coordinates as reports print them: "[3,17,0,55]".
std::string CoordsText(const std::vector<int64_t>& coords);
// Collapses newlines so an error stays one line.
std::string OneLine(std::string text);

}  // namespace opscope::cli
