// SnapshotSelfMaps (capture/stack_capture.h): the maps text a crash
// snapshot carries beside its pcs. Apart from the unwinder, so the minimal
// build, which has no libunwind (stack_capture_minimal.cc), keeps it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "capture/stack_capture.h"

namespace opscope {

size_t SnapshotSelfMaps(char* buf, size_t cap) {
  if (buf == nullptr || cap == 0) return 0;
  // A signal handler must leave errno as the interrupted code had it.
  const int saved_errno = errno;
  int fd;
  do {
    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    errno = saved_errno;
    return 0;
  }
  // The kernel hands /proc/self/maps out a page or so per read; keep reading
  // until end of file or the buffer is full.
  size_t len = 0;
  while (len < cap) {
    ssize_t got = read(fd, buf + len, cap - len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    len += static_cast<size_t>(got);
  }
  close(fd);
  if (len < cap) buf[len] = '\0';
  errno = saved_errno;
  return len;
}

}  // namespace opscope
