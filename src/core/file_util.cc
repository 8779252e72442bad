#include "core/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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

namespace {

// What a non-regular file is, for messages.
const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

}  // namespace

uint64_t MaxInputBytes() {
  if (const char* env = std::getenv("OPSCOPE_MAX_INPUT_BYTES")) {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (errno == 0 && end != env && *end == '\0' && v > 0) return v;
  }
  // More than the machine's memory can never be read into it.
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  return uint64_t{1} << 40;
}

Status InputTooLarge(const std::string& path, uint64_t bytes) {
  return InvalidArgumentError("'" + path + "' is " + std::to_string(bytes) + " bytes, more than the " +
                              std::to_string(MaxInputBytes()) +
                              " an input may have (OPSCOPE_MAX_INPUT_BYTES; default: this machine's memory)");
}

StatusOr<InputFile> InputFile::Open(const std::string& path, bool follow_links) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever;
  // it is refused below, and reads of a regular file never block anyway.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow_links ? 0 : O_NOFOLLOW));
  if (fd < 0 && errno == ELOOP && !follow_links) {
    return InvalidArgumentError("'" + path + "' is a symbolic link, expected a regular file of its folder");
  }
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus(err, "cannot stat", path);
  }
  // A device or a pipe has no size to check before reading (/dev/zero never ends).
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError("'" + path + "' is " + FileKind(st.st_mode) + ", expected a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > MaxInputBytes()) {
    ::close(fd);
    return InputTooLarge(path, static_cast<uint64_t>(st.st_size));
  }
  return InputFile(fd, path, static_cast<int64_t>(st.st_size));
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

namespace {

StatusOr<std::string> ReadWhole(InputFile f) {
  const std::string& path = f.path();
  std::string out;
  if (f.size() >= 0) {
    out.resize(static_cast<size_t>(f.size()));
    OPSCOPE_ASSIGN_OR_RETURN(size_t got, f.Read(out.data(), out.size()));
    out.resize(got);  // the file shrank while we read it
  }
  // A file that grew, or one that says it is empty (/proc): read to the end,
  // within the limit.
  char chunk[1 << 16];
  while (true) {
    OPSCOPE_ASSIGN_OR_RETURN(size_t got, f.Read(chunk, sizeof(chunk)));
    out.append(chunk, got);
    if (out.size() > MaxInputBytes()) return InputTooLarge(path, out.size());
    if (got < sizeof(chunk)) break;
  }
  return out;
}

}  // namespace

StatusOr<std::string> ReadFile(const std::string& path) {
  OPSCOPE_ASSIGN_OR_RETURN(InputFile f, InputFile::Open(path));
  return ReadWhole(std::move(f));
}

StatusOr<std::string> ReadFolderFile(const std::string& dir, const std::string& name) {
  OPSCOPE_ASSIGN_OR_RETURN(InputFile f, InputFile::Open(dir + "/" + name, /*follow_links=*/false));
  return ReadWhole(std::move(f));
}

Status MakeOutputDir(const std::string& dir, const std::string& what) {
  if (dir.empty()) return InvalidArgumentError(what + ": an empty folder name");
  namespace fs = std::filesystem;
  const fs::path path(dir);
  fs::path at;
  const auto last = std::prev(path.end());
  for (auto it = path.begin(); it != path.end(); ++it) {
    at /= *it;
    if (it->empty() || *it == "/" || *it == "." || *it == "..") continue;
    if (path.is_absolute() && it != last && !(it == std::prev(last) && last->empty())) continue;
    struct stat st;
    if (::lstat(at.c_str(), &st) != 0) break;  // missing: created below, by us, as a folder
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      const fs::path to = fs::read_symlink(at, ec);
      return InvalidArgumentError(what + " " + dir + ": '" + at.string() + "' is a symbolic link" +
                                  (ec ? "" : " (to " + to.string() + ")") +
                                  ", expected a folder: the tools never write through one");
    }
    if (!S_ISDIR(st.st_mode)) return InvalidArgumentError(what + " " + dir + ": '" + at.string() + "' is not a folder");
  }
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return InvalidArgumentError(what + " " + dir + ": cannot create it: " + ec.message());
  // Created by us a moment ago, or checked above: still no link (a race with
  // another process making one in between is refused here).
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(what + " " + dir + ": not a folder");
  }
  return Status::Ok();
}

Status PrepareOutputFile(const std::string& path, const std::string& what) {
  if (path.empty()) return Status::Ok();
  namespace fs = std::filesystem;
  struct stat st;
  if (path.back() == '/' || (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
    return InvalidArgumentError(what + " " + path + ": names a folder, expected a file name");
  }
  const fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return Status::Ok();
  return MakeOutputDir(parent.string(), what);
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

// A target that is a character device or a FIFO is written as a shell's `>`
// would: opened and written, never renamed over (`--report /dev/null` run as
// root must not replace /dev/null with a regular file).
Status WriteThrough(const std::string& path, const std::vector<std::string_view>& parts, bool follow_link) {
  // O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of hanging.
  // O_NOFOLLOW unless the link was judged one to follow: what was a device a
  // moment ago may be a link by now.
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (follow_link ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    if (errno == ENXIO) return FailedPreconditionError("cannot write '" + path + "': a FIFO that no process reads");
    return ErrnoStatus(errno, "cannot open", path);
  }
  // Blocking again, so a slow reader is waited for rather than an EAGAIN error.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  for (std::string_view part : parts) {
    Status st = WriteAll(fd, part, path);
    if (!st.ok()) {
      ::close(fd);
      return st;
    }
  }
  ::close(fd);
  return Status::Ok();
}

// The target a temporary file of the atomic writer stands for ("." + name +
// ".tmp." + mkostemp's six letters or digits), or "" when it is not one.
std::string_view TempTarget(std::string_view name) {
  constexpr std::string_view kTmp = ".tmp.";
  constexpr size_t kSuffix = 6;
  if (name.size() < 2 + kTmp.size() + kSuffix || name[0] != '.') return {};
  const size_t at = name.size() - kSuffix - kTmp.size();
  if (name.substr(at, kTmp.size()) != kTmp) return {};
  for (char c : name.substr(name.size() - kSuffix)) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return {};
  }
  return name.substr(1, at - 1);
}

// A path only the user types names a device through a link: /dev/stdout,
// /dev/fd/N, /proc/self/fd/N. Nowhere else is a link followed.
bool IsDeviceLinkPath(const std::string& path) { return path.starts_with("/dev/") || path.starts_with("/proc/"); }

}  // namespace

Status WriteFileAtomicParts(const std::string& path, const std::vector<std::string_view>& parts) {
  if (path.empty()) return InvalidArgumentError("cannot write a file with an empty path");
  struct stat target;
  const bool exists = ::lstat(path.c_str(), &target) == 0;
  if (exists && S_ISLNK(target.st_mode) && IsDeviceLinkPath(path)) {
    // Followed, never replaced (a rename would put a file in /dev): a device
    // or pipe is written through, a regular file (stdout redirected to one)
    // is written where it really is.
    struct stat followed;
    if (::stat(path.c_str(), &followed) != 0) return ErrnoStatus(errno, "cannot write through the link", path);
    if (S_ISCHR(followed.st_mode) || S_ISFIFO(followed.st_mode)) return WriteThrough(path, parts, /*follow_link=*/true);
    char resolved[PATH_MAX];
    if (!S_ISREG(followed.st_mode) || ::realpath(path.c_str(), resolved) == nullptr || IsDeviceLinkPath(resolved)) {
      return InvalidArgumentError("cannot write '" + path + "': it leads to " + FileKind(followed.st_mode) +
                                  ", expected a regular file, a device or a pipe");
    }
    return WriteFileAtomicParts(resolved, parts);
  }
  if (exists && !S_ISREG(target.st_mode) && !S_ISLNK(target.st_mode)) {
    if (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode)) return WriteThrough(path, parts, /*follow_link=*/false);
    if (S_ISDIR(target.st_mode)) return InvalidArgumentError("cannot write '" + path + "': it names a folder, expected a file");
    return InvalidArgumentError("cannot write '" + path + "': it is " + FileKind(target.st_mode) +
                                ", expected a regular file");
  }
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
  // A regular file keeps its mode; a link (replaced) or a new file gets the default.
  const mode_t mode = exists && S_ISREG(target.st_mode) ? (target.st_mode & 07777) : DefaultFileMode();
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
  // Checked again just before the rename: what appeared meanwhile is not ours
  // either (a link is fine: rename replaces the link itself).
  if (::lstat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode) && !S_ISLNK(target.st_mode)) {
    ::unlink(tmp.c_str());
    return InvalidArgumentError("cannot write '" + path + "': it became " + FileKind(target.st_mode) +
                                " while being written, expected a regular file");
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

int RemoveStaleTempFiles(const std::string& dir, const std::function<bool(std::string_view name)>& ours) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string_view target = TempTarget(name);
    if (target.empty() || !ours(target)) continue;
    // symlink_status: a link is never a temporary file of ours, whatever it points at.
    if (!std::filesystem::is_regular_file(entry.symlink_status(ec))) continue;
    if (std::filesystem::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

Status WriteFileAtomic(const std::string& path, const std::string& bytes) {
  return WriteFileAtomicParts(path, {std::string_view(bytes)});
}

}  // namespace opscope
