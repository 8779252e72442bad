// File: opscope/status.h
// Errors are values. Every fallible library call returns Status or StatusOr<T>;
// the failure keeps the source location where it was made, and callers add
// context on the way up:
//
//   OPSCOPE_ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
//   OPSCOPE_RETURN_IF_ERROR(Check(t).WithContext("input x"));
//
// No exceptions cross library or plugin boundaries.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace opscope {

// Where an error was made, captured at the call site by a default argument.
// Our own class, never std::source_location, on every compiler: the type
// is part of the signature of every error maker a plugin calls
// (InvalidArgumentError(std::string, SourceLocation)), and std::source_location
// differs between compilers (g++ 12 has it; clang 14 over libstdc++ 12 does
// not, lacking __builtin_source_location), so a plugin built by g++ could not
// load into a library built by clang. Both compilers have had these two
// builtins for years, evaluated at the caller as std::source_location is.
class SourceLocation {
 public:
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          int line = __builtin_LINE()) noexcept {
    SourceLocation loc;
    loc.file_ = file;
    loc.line_ = line;
    return loc;
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr unsigned line() const noexcept { return static_cast<unsigned>(line_); }

 private:
  const char* file_ = "";
  int line_ = 0;
};

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad user input: flags, files, attributes, shapes
  kNotFound,           // unknown op, missing file
  kUnimplemented,      // valid request this build cannot do
  kFailedPrecondition, // e.g. no GPU answered
  kOutOfRange,
  kDataLoss,           // truncated or corrupt file
  kInternal,           // a bug in opscope
  kDeviceError,        // the device failed (fault, launch error)
};

const char* StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message,
         SourceLocation loc = SourceLocation::current());

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const char* file() const { return file_; }
  int line() const { return line_; }

  // Prepends "context: " to the message; the first context added ends up last.
  Status& WithContext(const std::string& context) &;
  Status&& WithContext(const std::string& context) &&;

  // "context: message" — the one line a user reads.
  std::string ToString() const;
  // ToString() plus " [file:line]" of where the error was made.
  std::string ToStringWithLocation() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  const char* file_ = "";
  int line_ = 0;
};

Status InvalidArgumentError(std::string msg,
                            SourceLocation loc = SourceLocation::current());
Status NotFoundError(std::string msg,
                     SourceLocation loc = SourceLocation::current());
Status UnimplementedError(std::string msg,
                          SourceLocation loc = SourceLocation::current());
Status FailedPreconditionError(std::string msg,
                               SourceLocation loc = SourceLocation::current());
Status OutOfRangeError(std::string msg,
                       SourceLocation loc = SourceLocation::current());
Status DataLossError(std::string msg,
                     SourceLocation loc = SourceLocation::current());
Status InternalError(std::string msg,
                     SourceLocation loc = SourceLocation::current());
Status DeviceError(std::string msg,
                   SourceLocation loc = SourceLocation::current());

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const T& value) : value_(value) {}             // NOLINT: implicit by design
  StatusOr(T&& value) : value_(std::move(value)) {}       // NOLINT
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = InternalError("StatusOr built from an ok Status without a value");
  }
  bool ok() const { return status_.ok(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace opscope

#define OPSCOPE_CONCAT_INNER(a, b) a##b
#define OPSCOPE_CONCAT(a, b) OPSCOPE_CONCAT_INNER(a, b)

#define OPSCOPE_RETURN_IF_ERROR(expr)                   \
  do {                                                  \
    ::opscope::Status _opscope_st = (expr);             \
    if (!_opscope_st.ok()) return _opscope_st;          \
  } while (0)

#define OPSCOPE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()

#define OPSCOPE_ASSIGN_OR_RETURN(lhs, expr) \
  OPSCOPE_ASSIGN_OR_RETURN_IMPL(OPSCOPE_CONCAT(_opscope_so_, __LINE__), lhs, expr)
