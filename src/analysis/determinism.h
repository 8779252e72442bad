// File: analysis/determinism.h
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

#include "opscope/tensor.h"

namespace opscope {

struct RunDifference {
  int output = 0;
  std::string name;
  int runs = 0;              // repeats compared with the first run
  int runs_differing = 0;    // of those, how many differ in any bit
  int first_differing_run = -1;           // 1-based repeat number
  int64_t elements_differing = 0;         // the most over the repeats
  int64_t first_index = -1;               // row-major, in the first differing repeat
  std::vector<int64_t> first_coords;
  double first_value = 0, other_value = 0;  // run 1 and the differing repeat there
  double max_abs_diff = 0;                  // over all repeats
  std::vector<int64_t> max_diff_coords;
};

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
