// File: opscope/fill.h
// Seeded fills for generated inputs: the same seed gives the same bits on every
// machine (own generator, no std::*_distribution, whose output varies by library).
//
//   OPSCOPE_RETURN_IF_ERROR(Fill(t, FillSpec{.kind = FillKind::kNormal, .seed = 7}));
#pragma once

#include <cstdint>
#include <string_view>

#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

enum class FillKind { kUniform, kNormal, kInt, kConstant, kSequential };

struct FillSpec {
  FillKind kind = FillKind::kUniform;
  uint64_t seed = 0;
  double low = -1.0, high = 1.0;  // uniform: [low, high); int: [low, high] integers
  double mean = 0.0, stddev = 1.0;  // normal
  double value = 0.0;               // constant; sequential: start (step 1)
};

// Parses "uniform", "normal", "int", "constant", "sequential" (also "seq", "const").
StatusOr<FillKind> ParseFillKind(std::string_view name);
// Fills a host tensor in row-major order, converting to its dtype (bool: value != 0).
Status Fill(Tensor& t, const FillSpec& spec);

}  // namespace opscope
