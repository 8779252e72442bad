// File: opscope/npy.h
// numpy's .npy and .npz formats, read and written as numpy does: every dtype
// opscope has, C and Fortran order, format versions 1.0/2.0/3.0; .npz stored
// or deflated. numpy itself has no bfloat16: npy.cc documents how it is kept.
//
//   OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ReadNpy("x.npy"));
//   OPSCOPE_RETURN_IF_ERROR(WriteNpy("y.npy", y));   // atomic: temp file, then rename
//   OPSCOPE_ASSIGN_OR_RETURN(auto arrays, ReadNpz("out.npz"));  // name -> tensor, in file order
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

// Errors name the file and what was wrong ("x.npy: truncated: header says
// float32[4,4] (64 bytes of data), file has 12").
StatusOr<Tensor> ReadNpy(const std::string& path);

// How ReadNpy gets the data into memory; the tensor (values, errors) is the
// same either way.
enum class NpyReadMode {
  kAuto,  // map files of 1 MiB and more that can be used in place, read the rest
  kRead,  // always read into new memory
  kMap,   // map whenever the data can be used in place, read otherwise
};
struct NpyReadOptions {
  NpyReadMode mode = NpyReadMode::kAuto;
};
// A mapped tensor views the file's pages copy-on-write (MAP_PRIVATE): writes
// to it never reach the file, and nothing is copied until then. It is used for
// little-endian, C-order, non-bool data whose offset in the file is 64-byte
// aligned (what numpy writes). As with any mapping, truncating the file while
// the tensor lives makes reading the lost pages fault (SIGBUS).
StatusOr<Tensor> ReadNpy(const std::string& path, const NpyReadOptions& options);
StatusOr<Tensor> ParseNpy(const std::string& bytes, const std::string& name_for_errors);
Status WriteNpy(const std::string& path, const Tensor& t);
std::string SerializeNpy(const Tensor& t);

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
StatusOr<NamedTensors> ReadNpz(const std::string& path);
Status WriteNpz(const std::string& path, const NamedTensors& arrays, bool compress = false);

// Writes `bytes` to `path` through a temporary file in the same folder and a
// rename, so a killed run never leaves a half-written file. A target that is
// not a regular file is never renamed over: see core/file_util.h.
Status WriteFileAtomic(const std::string& path, const std::string& bytes);
StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace opscope
