#include "opscope/status.h"

#include <cstring>

namespace opscope {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kUnimplemented: return "unimplemented";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kOutOfRange: return "out of range";
    case StatusCode::kDataLoss: return "data loss";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kDeviceError: return "device error";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string message, SourceLocation loc)
    : code_(code), message_(std::move(message)), file_(loc.file_name()), line_(static_cast<int>(loc.line())) {}

Status& Status::WithContext(const std::string& context) & {
  if (!ok() && !context.empty()) message_ = context + ": " + message_;
  return *this;
}

Status&& Status::WithContext(const std::string& context) && {
  if (!ok() && !context.empty()) message_ = context + ": " + message_;
  return std::move(*this);
}

std::string Status::ToString() const { return ok() ? "ok" : message_; }

std::string Status::ToStringWithLocation() const {
  if (ok()) return "ok";
  // Only the path below src/ or include/: the user needs the component, not our build tree.
  const char* f = file_;
  for (const char* marker : {"/src/", "/include/", "/tests/", "/examples/"}) {
    if (const char* p = std::strstr(file_, marker)) { f = p + 1; break; }
  }
  return message_ + " [" + f + ":" + std::to_string(line_) + "]";
}

#define OPSCOPE_DEFINE_ERROR(Fn, Code) \
  Status Fn(std::string msg, SourceLocation loc) { return Status(StatusCode::Code, std::move(msg), loc); }
OPSCOPE_DEFINE_ERROR(InvalidArgumentError, kInvalidArgument)
OPSCOPE_DEFINE_ERROR(NotFoundError, kNotFound)
OPSCOPE_DEFINE_ERROR(UnimplementedError, kUnimplemented)
OPSCOPE_DEFINE_ERROR(FailedPreconditionError, kFailedPrecondition)
OPSCOPE_DEFINE_ERROR(OutOfRangeError, kOutOfRange)
OPSCOPE_DEFINE_ERROR(DataLossError, kDataLoss)
OPSCOPE_DEFINE_ERROR(InternalError, kInternal)
OPSCOPE_DEFINE_ERROR(DeviceError, kDeviceError)
#undef OPSCOPE_DEFINE_ERROR

}  // namespace opscope
