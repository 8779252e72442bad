// File: core/json_text.h
// JSON as every file and answer of opscope is written: names that came from
// files nobody here wrote may hold invalid UTF-8, which becomes U+FFFD (a JSON
// text must be UTF-8, and nlohmann's strict mode would throw instead).
//
//   OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(path, JsonText(j, 2) + "\n"));
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace opscope {

// indent -1: one line, no spaces; n >= 0: n spaces per level. A template, so
// an ordered_json keeps its order (converting it to json would sort its keys).
template <typename Json>
std::string JsonText(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace opscope
