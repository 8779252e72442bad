#include "core/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "opscope/npy.h"

namespace opscope {

Status ErrnoStatus(int err, const std::string& what, const std::string& path) {
  std::string msg = what + " '" + path + "': " + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return NotFoundError(msg);
    case EACCES:
    case EPERM:
    case EROFS:
    case EISDIR:
      return FailedPreconditionError(msg);
    case EIO:
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return DataLossError(msg);
    default:
      return InternalError(msg);
  }
}

StatusOr<InputFile> InputFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus(err, "cannot stat", path);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError("'" + path + "' is a directory, expected a file");
  }
  return InputFile(fd, path, S_ISREG(st.st_mode) ? static_cast<int64_t>(st.st_size) : -1);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<size_t> InputFile::Read(void* dst, size_t n) {
  char* p = static_cast<char*>(dst);
  size_t done = 0;
  while (done < n) {
    // Linux moves at most ~2 GiB per read(); the loop also covers short reads.
    ssize_t got = ::read(fd_, p + done, n - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot read", path_);
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

StatusOr<std::string> ReadFile(const std::string& path) {
  OPSCOPE_ASSIGN_OR_RETURN(InputFile f, InputFile::Open(path));
  std::string out;
  if (f.size() >= 0) {
    out.resize(static_cast<size_t>(f.size()));
    OPSCOPE_ASSIGN_OR_RETURN(size_t got, f.Read(out.data(), out.size()));
    out.resize(got);  // the file shrank while we read it
  }
  // A stream, or a file that grew: read to the end.
  char chunk[1 << 16];
  while (true) {
    OPSCOPE_ASSIGN_OR_RETURN(size_t got, f.Read(chunk, sizeof(chunk)));
    out.append(chunk, got);
    if (got < sizeof(chunk)) break;
  }
  return out;
}

namespace {

// The mode a new file gets from open(..., 0666): mkstemp uses 0600, which
// would make our outputs unreadable to others where a plain write would not.
mode_t DefaultFileMode() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) return 0666 & ~static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 0644;
}

Status WriteAll(int fd, std::string_view bytes, const std::string& tmp) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot write", tmp);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomicParts(const std::string& path, const std::vector<std::string_view>& parts) {
  if (path.empty()) return InvalidArgumentError("cannot write a file with an empty path");
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) return InvalidArgumentError("cannot write '" + path + "': it names a folder, expected a file");

  // Same folder as the target, so rename() is atomic (never across file systems).
  std::string tmp = (dir == "/" ? "" : dir) + "/." + base + ".tmp.XXXXXX";
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot create a temporary file in folder", dir).WithContext(path);

  auto fail = [&](Status st) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return std::move(st).WithContext(path);
  };
  struct stat existing;
  mode_t mode = ::stat(path.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : DefaultFileMode();
  if (::fchmod(fd, mode) != 0) return fail(ErrnoStatus(errno, "cannot set the mode of", tmp));
  for (std::string_view part : parts) {
    Status st = WriteAll(fd, part, tmp);
    if (!st.ok()) return fail(st);
  }
  if (::fsync(fd) != 0) return fail(ErrnoStatus(errno, "cannot flush", tmp));
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus(err, "cannot close", tmp).WithContext(path);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus(err, "cannot rename the temporary file onto", path);
  }
  // The rename itself is durable only once the folder is flushed.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, const std::string& bytes) {
  return WriteFileAtomicParts(path, {std::string_view(bytes)});
}

}  // namespace opscope
