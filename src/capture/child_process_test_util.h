// File: capture/child_process_test_util.h
// For tests of what happens in a process that crashes or hangs: run a body
// in a forked child that reports to the test over a pipe.
//
//   ChildProcess child = StartChild([](int fd) { ...; WriteAll(fd, &x, sizeof(x)); });
//   std::string out = ReadAll(child.fd);   // until the child closes it (exits)
//   int status = Reap(child);              // waitpid status: WIFSIGNALED, ...
//
// The child leaves with _exit when the body returns: no atexit handlers, no
// gtest teardown, no LeakSanitizer pass over a copy of the test's heap.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>

namespace opscope {

struct ChildProcess {
  pid_t pid = -1;
  int fd = -1;  // read end of the pipe the child writes to
};

// Writes all of `data`, with write() only: usable from a signal handler.
inline bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

inline ChildProcess StartChild(const std::function<void(int fd)>& body) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    body(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return {};
  }
  return {pid, fds[0]};
}

// Everything the child writes until it closes its end; closes ours.
inline std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// Waits for the child to end; its waitpid status, -1 if there was no child.
inline int Reap(const ChildProcess& child) {
  if (child.pid <= 0) return -1;
  int status = 0;
  while (waitpid(child.pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

}  // namespace opscope
