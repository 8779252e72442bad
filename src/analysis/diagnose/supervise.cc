#include "analysis/diagnose/supervise.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace opscope {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

void Keep(std::string& tail, const char* data, size_t n, size_t cap) {
  tail.append(data, n);
  if (tail.size() > cap) tail.erase(0, tail.size() - cap);
}

}  // namespace

std::string SignalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    default: return "signal " + std::to_string(sig);
  }
}

StatusOr<std::string> ResolveProgram(const std::string& program) {
  if (program.empty()) return InvalidArgumentError("no program given after --");
  if (program.find('/') != std::string::npos) {
    if (IsExecutableFile(program)) return program;
    struct stat st;
    if (stat(program.c_str(), &st) != 0) return NotFoundError(program + ": no such program");
    return InvalidArgumentError(program + ": not an executable file");
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return NotFoundError(program + ": no such program on PATH");
}

StatusOr<ChildOutcome> Supervise(const SuperviseOptions& options) {
  OPSCOPE_ASSIGN_OR_RETURN(std::string program, ResolveProgram(options.argv.empty() ? "" : options.argv[0]));
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
    return InternalError(std::string("cannot create pipes for the child: ") + std::strerror(errno));
  }
  // Everything the child needs, built before fork: after it, only
  // async-signal-safe calls until exec.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : options.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) {
    bool overridden = false;
    for (const auto& [k, v] : options.env) {
      if (std::strncmp(*e, k.c_str(), k.size()) == 0 && (*e)[k.size()] == '=') overridden = true;
    }
    if (!overridden) envp.push_back(*e);
  }
  for (std::string& s : env_strings) envp.push_back(s.data());
  // NAME=<pid>, the digits written by the child itself (it learns its pid after fork).
  std::string pid_var = options.pid_env.empty() ? "" : options.pid_env + "=" + std::string(24, '\0');
  if (!pid_var.empty()) envp.push_back(pid_var.data());
  envp.push_back(nullptr);

  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) return InternalError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);  // its own group: a timeout kills whatever it started too
    if (!pid_var.empty()) {
      char digits[24];
      int n = 0;
      for (long v = getpid(); v > 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
      char* p = pid_var.data() + options.pid_env.size() + 1;
      while (n > 0) *p++ = digits[--n];
      *p = '\0';
    }
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execve(program.c_str(), argv.data(), envp.data());
    int e = errno;
    (void)!write(exec_pipe[1], &e, sizeof e);
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  int exec_errno = 0;
  if (read(exec_pipe[0], &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno)) {
    close(exec_pipe[0]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    waitpid(pid, nullptr, 0);
    return InvalidArgumentError(program + ": cannot execute: " + std::strerror(exec_errno));
  }
  close(exec_pipe[0]);
  if (options.on_start) options.on_start(pid);

  ChildOutcome outcome;
  outcome.pid = pid;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  int status = 0;
  bool reaped = false;
  char buf[8192];
  while (!reaped) {
    const double left = options.timeout_s - Seconds(t0);
    if (left <= 0 && !outcome.timed_out) {
      outcome.timed_out = true;
      if (options.on_timeout) options.on_timeout(pid);
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
    }
    const int wait_ms = outcome.timed_out ? 50 : static_cast<int>(std::min(left * 1000 + 1, 50.0));
    if (open_fds > 0) {
      if (poll(fds, 2, wait_ms) > 0) {
        for (int i = 0; i < 2; ++i) {
          if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          ssize_t n = read(fds[i].fd, buf, sizeof buf);
          if (n <= 0) {
            close(fds[i].fd);
            fds[i].fd = -1;
            --open_fds;
            continue;
          }
          Keep(i == 0 ? outcome.stdout_tail : outcome.stderr_tail, buf, static_cast<size_t>(n), options.tail_bytes);
          if (options.echo) (void)!write(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buf, static_cast<size_t>(n));
        }
      }
    } else {
      usleep(static_cast<useconds_t>(wait_ms) * 1000);
    }
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) reaped = true;
  }
  // What the child wrote just before it died is still in the pipes.
  for (auto& f : fds) {
    if (f.fd < 0) continue;
    int flags = fcntl(f.fd, F_GETFL);
    fcntl(f.fd, F_SETFL, flags | O_NONBLOCK);
    ssize_t n;
    while ((n = read(f.fd, buf, sizeof buf)) > 0) {
      Keep(&f == &fds[0] ? outcome.stdout_tail : outcome.stderr_tail, buf, static_cast<size_t>(n), options.tail_bytes);
      if (options.echo) (void)!write(&f == &fds[0] ? STDOUT_FILENO : STDERR_FILENO, buf, static_cast<size_t>(n));
    }
    close(f.fd);
  }
  // Whatever it started in its group goes with it.
  kill(-pid, SIGKILL);
  outcome.wall_s = Seconds(t0);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
    outcome.core_dumped = WCOREDUMP(status);
  }
  return outcome;
}

}  // namespace opscope
