// File: analysis/diagnose/supervise.h
// Runs a program in a child process and survives whatever happens to it: the
// parent waits with a deadline, passes the child's output through while
// keeping its tail, and on the deadline lets the caller look at the live
// child (its threads' stacks) before killing its whole process group.
//
//   SuperviseOptions o{.argv = {"ops-debug", "run", ...}, .env = {{"OPSCOPE_DIAGNOSE", dir}}, .timeout_s = 10};
//   o.on_timeout = [](int pid) { stacks = ThreadStacksOfProcess(pid); };
//   OPSCOPE_ASSIGN_OR_RETURN(ChildOutcome c, Supervise(o));
//   // c.signal, c.exit_code, c.timed_out, c.stderr_tail
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "opscope/status.h"

namespace opscope {

struct SuperviseOptions {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // set in the child, over the parent's environment
  std::string pid_env;  // if set, this variable holds the child's own pid (what it records under)
  double timeout_s = 10;
  bool echo = true;               // copy the child's stdout/stderr to ours as they come
  size_t tail_bytes = 16 << 10;   // how much of each stream to keep
  // Called with the child's pid when the deadline passes, before it is killed.
  std::function<void(int pid)> on_timeout;
  // Called in the parent once the child exists (its pid), before waiting.
  std::function<void(int pid)> on_start;
};

struct ChildOutcome {
  int pid = 0;
  bool timed_out = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it (SIGKILL after a timeout included)
  bool core_dumped = false;
  double wall_s = 0;
  std::string stdout_tail, stderr_tail;
};

// Resolves argv[0] as execvp would (a path, or a name on PATH) and checks it
// is an executable regular file: the error names it.
StatusOr<std::string> ResolveProgram(const std::string& program);

// Error Status only when the child could not be started (fork, exec).
StatusOr<ChildOutcome> Supervise(const SuperviseOptions& options);

// "SIGSEGV", "SIGKILL", ... ("signal 42" for the others).
std::string SignalName(int sig);

}  // namespace opscope
