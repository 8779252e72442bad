// Parsers for the compact flag values of ops-debug: shape lists, dtype lists,
// name=value lists. Errors name the flag and the part that was wrong.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/text_format.h"
#include "opscope/dtype.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope::cli {

// Splits on `sep`, trimming spaces; empty text gives no parts.
std::vector<std::string> SplitList(std::string_view text, char sep);
// "[4,256,64];[64]" -> two shapes. An empty item is an error, except with
// `omitted`: then an empty item between two others ("[4,8];;[4,8]", as
// --inputs' "x.npy,,z.npy") leaves that input out, its index added to
// `omitted` and a scalar shape holding its place.
StatusOr<std::vector<Shape>> ParseShapeList(std::string_view flag, std::string_view text,
                                            std::vector<int>* omitted = nullptr);
// "float32" or "float32,float16".
StatusOr<std::vector<DType>> ParseDTypeList(std::string_view flag, std::string_view text);
// "block=256,vec=4" -> {block: 256, vec: 4}; values are integers.
StatusOr<std::map<std::string, int64_t>> ParseIntAssignments(std::string_view flag, std::string_view text);
// "31.5" -> 31.5; anything but a finite number > 0 is an error naming the flag and `unit`.
StatusOr<double> ParsePositiveNumber(std::string_view flag, std::string_view text, std::string_view unit);

}  // namespace opscope::cli
