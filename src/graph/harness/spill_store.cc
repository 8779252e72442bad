#include "graph/harness/spill_store.h"

#include <filesystem>

#include "core/file_util.h"
#include "opscope/device.h"
#include "opscope/npy.h"

namespace opscope {

SpillStore::~SpillStore() {
  if (!made_dir_) return;
  // Only the files it wrote, then the folder if that left it empty: the
  // mapped pages stay valid without their names. Best effort.
  std::error_code ec;
  for (int64_t i = 0; i < spilled_tensors_; ++i) std::filesystem::remove(dir_ + "/" + std::to_string(i) + ".npy", ec);
  std::filesystem::remove(dir_, ec);
}

StatusOr<Tensor> SpillStore::Keep(const std::string& name, Tensor t) {
  if (!t.defined()) return t;
  OPSCOPE_ASSIGN_OR_RETURN(Tensor host, ToHost(t));
  const int64_t bytes = static_cast<int64_t>(host.nbytes());
  if (budget_ < 0 || kept_bytes_ + bytes <= budget_ || bytes == 0) {
    kept_bytes_ += bytes;
    return host;
  }
  if (!made_dir_) {
    OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(dir_, "spill folder"));
    made_dir_ = true;
  }
  // Numbered, not named: value names hold slashes and colons.
  const std::string path = dir_ + "/" + std::to_string(spilled_tensors_) + ".npy";
  OPSCOPE_ASSIGN_OR_RETURN(Tensor contiguous, host.Contiguous());
  OPSCOPE_RETURN_IF_ERROR(WriteNpy(path, contiguous).WithContext("spilling '" + name + "'"));
  OPSCOPE_ASSIGN_OR_RETURN(Tensor mapped, ReadNpy(path, NpyReadOptions{.mode = NpyReadMode::kMap}));
  ++spilled_tensors_;
  spilled_bytes_ += bytes;
  return mapped;
}

}  // namespace opscope
