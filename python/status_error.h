// File: python/status_error.h
// A library Status as the Python exception a caller expects: ValueError for
// what the caller passed (a bad argument, a missing or corrupt file, a value
// out of range), RuntimeError for the rest (the device, the engine itself).
#pragma once

#include <pybind11/pybind11.h>

#include <stdexcept>

#include "opscope/status.h"

namespace opscope::python {

[[noreturn]] inline void RaiseStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kOutOfRange:
    case StatusCode::kDataLoss:
      throw pybind11::value_error(s.message());
    default:
      throw std::runtime_error(s.message());
  }
}

}  // namespace opscope::python
