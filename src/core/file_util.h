// File: core/file_util.h
// Whole-file reads and atomic writes (temporary file in the same folder,
// fsync, rename). ReadFile and WriteFileAtomic are declared in opscope/npy.h;
// these are the pieces the .npy/.npz code needs beyond them.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"

namespace opscope {

// Like WriteFileAtomic, for content held in several pieces (a header and a
// tensor's own buffer), so large tensors are written without a joined copy.
Status WriteFileAtomicParts(const std::string& path, const std::vector<std::string_view>& parts);

// An open file for reading; closes itself.
class InputFile {
 public:
  static StatusOr<InputFile> Open(const std::string& path);
  InputFile(InputFile&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  InputFile& operator=(InputFile&&) = delete;
  InputFile(const InputFile&) = delete;
  ~InputFile();

  // Reads up to `n` bytes, fewer only at end of file; returns how many.
  StatusOr<size_t> Read(void* dst, size_t n);
  // Size of a regular file; -1 for a pipe or other stream.
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  InputFile(int fd, std::string path, int64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  int fd_;
  std::string path_;
  int64_t size_ = -1;
};

// The Status for a failed system call on `path`: NotFound for a missing file
// or folder, FailedPrecondition for permissions, DataLoss for I/O and space.
Status ErrnoStatus(int err, const std::string& what, const std::string& path);

}  // namespace opscope
