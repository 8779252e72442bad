#include "core/command_line.h"

#include "core/text_format.h"

namespace opscope {

CommandLine& CommandLine::Arg(std::string_view word) {
  text_ += " " + ShellQuote(std::string(word));
  return *this;
}

CommandLine& CommandLine::Flag(std::string_view flag, std::string_view value) {
  text_ += " ";
  text_ += flag;
  return Arg(value);
}

CommandLine& CommandLine::Flag(std::string_view flag, int64_t value) {
  return Flag(flag, std::string_view(std::to_string(value)));
}

CommandLine& CommandLine::Flag(std::string_view flag, const std::vector<std::string>& values, std::string_view sep) {
  std::string joined;
  for (const std::string& v : values) {
    if (!joined.empty()) joined += sep;
    joined += v;
  }
  return Flag(flag, std::string_view(joined));
}

CommandLine& CommandLine::Repeated(std::string_view flag, const std::vector<std::string>& values) {
  for (const std::string& v : values) Flag(flag, std::string_view(v));
  return *this;
}

CommandLine& CommandLine::Switch(std::string_view flag) {
  text_ += " ";
  text_ += flag;
  return *this;
}

CommandLine& CommandLine::Append(std::string_view text) {
  text_ += text;
  return *this;
}

}  // namespace opscope
