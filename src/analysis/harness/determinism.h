// File: analysis/harness/determinism.h
// Repeats of one call on the same inputs must give the same bits. Finds, for
// each output, whether any repeat differs from the first run, in how many
// elements, where first, and by how much at most.
//
//   std::vector<RunDifference> d = FindBitDifferences(first_outputs, repeat_outputs, names);
//   // empty: every repeat matched the first run bit for bit
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opscope/report.h"
#include "opscope/tensor.h"

namespace opscope {


// Accumulates repeats one at a time so only the first run's outputs are kept.
class DeterminismCheck {
 public:
  DeterminismCheck(std::vector<Tensor> first, std::vector<std::string> names);
  // `outputs` of one more repeat, host tensors shaped like the first run's.
  void AddRepeat(const std::vector<Tensor>& outputs);
  // One entry per output whose bits differed in some repeat.
  std::vector<RunDifference> Differences() const;
  int repeats() const { return repeats_; }

 private:
  std::vector<Tensor> first_;
  std::vector<RunDifference> diffs_;
  int repeats_ = 0;
};

}  // namespace opscope
