#include "cli/flag_parsing.h"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace opscope::cli {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::string> SplitList(std::string_view text, char sep) {
  std::vector<std::string> parts;
  if (Trim(text).empty()) return parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    parts.emplace_back(Trim(text.substr(start, end == std::string_view::npos ? end : end - start)));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

StatusOr<std::vector<Shape>> ParseShapeList(std::string_view flag, std::string_view text, std::vector<int>* omitted) {
  std::vector<Shape> shapes;
  std::vector<std::string> parts = SplitList(text, ';');
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string where = std::string(flag) + ": shape " + std::to_string(i + 1) + " '" + parts[i] + "'";
    if (parts[i].empty() && omitted != nullptr && i > 0 && i + 1 < parts.size()) {
      omitted->push_back(static_cast<int>(i));
      shapes.emplace_back();
      continue;
    }
    if (parts[i].empty()) {
      return InvalidArgumentError(where + ": empty (shapes are separated by ';'" +
                                  (omitted != nullptr ? "; an empty one between two leaves an optional input out)"
                                                      : ")"));
    }
    auto s = Shape::Parse(parts[i]);
    if (!s.ok()) {
      // "[4,256,64],[64]": two shapes joined the way a list is written elsewhere.
      const bool comma_between = parts[i].find("],") != std::string::npos || parts[i].find("] ,") != std::string::npos;
      return InvalidArgumentError(where + ": " + s.status().message() +
                                  (comma_between ? "; shapes of several inputs are separated by ';': \"[4,256,64];[64]\"" : ""));
    }
    Status valid = s->Validate();
    if (!valid.ok()) return InvalidArgumentError(where + ": " + valid.message());
    shapes.push_back(*s);
  }
  return shapes;
}

StatusOr<std::vector<DType>> ParseDTypeList(std::string_view flag, std::string_view text) {
  std::vector<DType> dtypes;
  for (const std::string& part : SplitList(text, ',')) {
    auto d = ParseDType(part);
    if (!d.ok()) return InvalidArgumentError(std::string(flag) + ": " + d.status().message());
    dtypes.push_back(*d);
  }
  return dtypes;
}

StatusOr<std::map<std::string, int64_t>> ParseIntAssignments(std::string_view flag, std::string_view text) {
  std::map<std::string, int64_t> out;
  for (const std::string& part : SplitList(text, ',')) {
    size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError(std::string(flag) + ": '" + part + "' is not name=value");
    }
    std::string name(Trim(std::string_view(part).substr(0, eq)));
    std::string value(Trim(std::string_view(part).substr(eq + 1)));
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || errno == ERANGE) {
      return InvalidArgumentError(std::string(flag) + ": " + name + "=" + value + ": expected an integer");
    }
    out[name] = v;
  }
  return out;
}

StatusOr<double> ParsePositiveNumber(std::string_view flag, std::string_view text, std::string_view unit) {
  const std::string value(Trim(text));
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno == ERANGE || !(v > 0) || !std::isfinite(v)) {
    return InvalidArgumentError(std::string(flag) + " '" + value + "': expected " + std::string(unit) +
                                ", a number > 0");
  }
  return v;
}

}  // namespace opscope::cli
