// File: cli/field_flags.h
// The library names the request field an error is about ("input_shapes:
// required unless `input_files` is given"), as a Python caller would spell
// it; a tool's user gave a flag, so the tool says the flag ("--input-shapes:
// required unless --inputs is given"). Each tool keeps the table of its
// fields and the flags that set them.
//
//   err << NameFlags(status.ToString(), kOpsDebugFieldFlags);
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace opscope::cli {

struct FieldFlag {
  std::string_view field;  // the request's member, "input_files"
  std::string_view flag;   // the flag that sets it, "--inputs"
};

// `message` with the field it starts with ("field:" or "field VALUE:") and
// every field it names in backquotes ("`input_files`") as their flags, from
// `first` (a command's own spellings) before `table`. A backquoted name
// neither has loses its quotes; other text is untouched.
std::string NameFlags(std::string_view message, std::span<const FieldFlag> table,
                      std::span<const FieldFlag> first = {});

extern const std::span<const FieldFlag> kOpsDebugFieldFlags;
extern const std::span<const FieldFlag> kInspectorFieldFlags;

}  // namespace opscope::cli
