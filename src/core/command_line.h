// File: core/command_line.h
// The command lines the tools print for a user to paste back: the repro line
// of run, compare, check and sweep, the commands verify names per gate, the
// run command a model report keeps. Every value goes through ShellQuote
// (core/text_format.h), so a pasted line runs the tool and nothing else,
// whatever file names, attrs or shapes went into it; the program and the
// flag names are our own words and are written as they are.
//
//   CommandLine c("ops-debug run");
//   c.Flag("--op", op).FlagIf(!attrs.empty(), "--attrs", attrs).Switch("--trace");
//   report.repro = c.str();   // "ops-debug run --op Relu --attrs 'alpha=0.1' --trace"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope {

class CommandLine {
 public:
  explicit CommandLine(std::string_view program) : text_(program) {}

  // A positional word ("ops-debug compare A B").
  CommandLine& Arg(std::string_view word);
  // " --flag VALUE", the value quoted when it needs it.
  CommandLine& Flag(std::string_view flag, std::string_view value);
  CommandLine& Flag(std::string_view flag, int64_t value);
  // The value list joined by `sep` into one word: --inputs 'a.npy,b.npy'.
  CommandLine& Flag(std::string_view flag, const std::vector<std::string>& values, std::string_view sep);
  // The same flag once per value: --plugin a.so --plugin b.so.
  CommandLine& Repeated(std::string_view flag, const std::vector<std::string>& values);
  CommandLine& FlagIf(bool when, std::string_view flag, std::string_view value) {
    return when ? Flag(flag, value) : *this;
  }
  // A flag without a value: " --trace".
  CommandLine& Switch(std::string_view flag);
  // Text made of flags already (ToleranceSpecFlags, " --mode ulp --max-ulp 4"),
  // or a comment after the command, appended as it is.
  CommandLine& Append(std::string_view text);

  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

}  // namespace opscope
