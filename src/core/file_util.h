// File: core/file_util.h
// Whole-file reads and atomic writes (temporary file in the same folder,
// fsync, rename). ReadFile and WriteFileAtomic are declared in opscope/npy.h;
// these are the pieces the .npy/.npz code needs beyond them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"

namespace opscope {

// Every write names its target: a regular file (or a missing one) is replaced
// through a temporary file and a rename; so is a symbolic link, never followed:
// a folder someone sent may hold `report.html -> ~/.ssh/authorized_keys`, and
// the link is what gets replaced, its target is left alone. A character device
// or a FIFO is opened and written through (a FIFO nobody reads is refused,
// never waited on), as is a link under /dev/ or /proc/ to one (/dev/stdout,
// /dev/fd/N: a path only the user types); anything else is refused.
//
// Like WriteFileAtomic, for content held in several pieces (a header and a
// tensor's own buffer), so large tensors are written without a joined copy.
Status WriteFileAtomicParts(const std::string& path, const std::vector<std::string_view>& parts);

// Creates the output folder `dir` with its missing parents, as `what` (the
// flag or field it came from, for messages) names it. A folder the path passes
// through that is a symbolic link is refused, naming the link: a cloned
// repository or a folder someone sent holding `diagnose -> ~/.ssh` must not
// send what the tools write somewhere else. Every component of a relative path
// is checked (it lies in the current folder, which may be such a folder); of
// an absolute one, the last (/var/run is a link on Debian, and the user typed
// the whole path).
Status MakeOutputDir(const std::string& dir, const std::string& what);

// Readies `path` to be written as a file before any work runs: a path that
// names a folder (or ends in '/') is refused, a parent that is a file is
// refused, and missing parent folders are made as MakeOutputDir makes them.
// An empty path is nothing to write.
Status PrepareOutputFile(const std::string& path, const std::string& what);

// Opens `name` inside `dir` for reading like InputFile::Open, refusing a
// symbolic link there (O_NOFOLLOW): a file of a folder is read only from the
// folder, however the folder changes while a tool reads it.
StatusOr<std::string> ReadFolderFile(const std::string& dir, const std::string& name);

// The most bytes one input file may hold: OPSCOPE_MAX_INPUT_BYTES, else the
// machine's physical memory. Checked before reading, so a huge file (or an
// .npz member's declared size) is refused instead of exhausting memory.
uint64_t MaxInputBytes();
// "'PATH' is N bytes, more than the M an input may have (...)".
Status InputTooLarge(const std::string& path, uint64_t bytes);

// Removes the temporary files a killed WriteFileAtomic left in `dir`: regular
// files (never a link) named ".NAME.tmp.XXXXXX", XXXXXX six letters or digits
// as mkostemp makes them, for the NAMEs `ours` accepts, so that a user's own
// file of a similar name stays. Returns how many. Call it only on a folder the
// caller owns and writes into alone, as a run folder.
int RemoveStaleTempFiles(const std::string& dir, const std::function<bool(std::string_view name)>& ours);

// An open regular file for reading, no larger than MaxInputBytes(); closes
// itself. Devices, FIFOs and sockets are refused: they have no size to check,
// and a FIFO would block.
class InputFile {
 public:
  // follow_links false: a symbolic link at `path` is refused (O_NOFOLLOW).
  static StatusOr<InputFile> Open(const std::string& path, bool follow_links = true);
  // size_ too: dropping it made every file look like a stream of unknown size,
  // so declared sizes were trusted before the file size was checked.
  InputFile(InputFile&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)), size_(o.size_) { o.fd_ = -1; }
  InputFile& operator=(InputFile&&) = delete;
  InputFile(const InputFile&) = delete;
  ~InputFile();

  // Reads up to `n` bytes, fewer only at end of file; returns how many.
  StatusOr<size_t> Read(void* dst, size_t n);
  // The file's size when it was opened.
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
