// File: graph/harness/spill_store.h
// Where `inspector-cli accuracy` keeps the intermediate tensors of its two
// runs: in memory up to a byte budget (--keep-bytes), past it written to
// DIR as .npy and mapped back, so their pages are the file's (the kernel
// drops and rereads them under memory pressure) and not the process's own.
// Values are exact either way: a spilled tensor reads back bit for bit.
//
//   SpillStore store(dir + "/spill", 64 << 20);
//   OPSCOPE_ASSIGN_OR_RETURN(Tensor kept, store.Keep("conv1_out", std::move(t)));
#pragma once

#include <cstdint>
#include <string>

#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

class SpillStore {
 public:
  // `budget` < 0: everything stays in memory (the default of accuracy).
  SpillStore(std::string dir, int64_t budget) : dir_(std::move(dir)), budget_(budget) {}
  SpillStore(const SpillStore&) = delete;
  SpillStore& operator=(const SpillStore&) = delete;
  // Removes the folder it wrote (a mapped tensor outlives its file's name).
  ~SpillStore();

  // The tensor to hold for `name`: `t` itself (on the host) while the bytes
  // held in memory stay within the budget, else its spilled, mapped copy.
  StatusOr<Tensor> Keep(const std::string& name, Tensor t);

  int64_t kept_bytes() const { return kept_bytes_; }
  int64_t spilled_bytes() const { return spilled_bytes_; }
  int64_t spilled_tensors() const { return spilled_tensors_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  int64_t budget_;
  int64_t kept_bytes_ = 0, spilled_bytes_ = 0, spilled_tensors_ = 0;
  bool made_dir_ = false;
};

}  // namespace opscope
