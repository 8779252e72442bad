// File: capture/output_canary.h
// Canaries around each output of `ops-debug run`: the output is a view into
// an allocation kCanaryBytes longer on each side, those bytes set to a known
// pattern before the launch and checked after it, so a kernel that writes
// past the end (or before the start) of its output is named, where it would
// otherwise pass: "y: 1 element written past the end (y[1000], value 0.73)".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "opscope/device.h"
#include "opscope/tensor.h"

namespace opscope {

// 64 bytes keep the output's data as aligned as the allocation itself.
inline constexpr size_t kCanaryBytes = 64;
inline constexpr unsigned char kCanaryByte = 0xA5;

// A contiguous tensor on `device` with a canary on each side.
StatusOr<Tensor> EmptyWithCanaries(DType dtype, const Shape& shape, Device* device);

struct CanaryDamage {
  int64_t before = 0, after = 0;  // elements whose canary bytes changed, on each side
  std::string text;               // "y: 1 element written past the end (y[1000], value 0.73)"
};

// What the kernel wrote over `t`'s canaries; nullopt when they are intact or
// `t` has none (not made by EmptyWithCanaries).
StatusOr<std::optional<CanaryDamage>> CheckCanaries(const std::string& name, const Tensor& t);

}  // namespace opscope
