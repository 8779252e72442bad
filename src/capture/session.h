// File: capture/session.h
// A capture session: `inspector-cli start --output-dir DIR` writes
// DIR/session.json and prints `export OPSCOPE_SESSION=DIR`; any program that
// links libopscope.so and runs under that variable records into DIR, with no
// change to its code. A static initializer in the library reads the variable
// once, at load time. Without it nothing is registered and the library
// behaves exactly as it does outside a session.
//
// Two collectors, switched independently in session.json:
//  - runtime: a DispatchHook that keeps every launch (op, op_id, kernel,
//    device, stream, launch config, host enqueue time, device start/end from
//    its events) and at process exit writes DIR/runtime-<pid>.json;
//  - graph: each graph the program executes through graph::Execute is written
//    to DIR/graph-<pid>-<n>.json (graph/export/session_graph.h).
//
//   // session.json, written by `inspector-cli start`:
//   {"schema": "opscope.session/1", "collectors": {"graph": true, "runtime": true}}
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capture/dispatcher.h"
#include "opscope/status.h"

namespace opscope {

inline constexpr char kSessionEnv[] = "OPSCOPE_SESSION";
inline constexpr char kSessionSchema[] = "opscope.session/1";
inline constexpr char kSessionFile[] = "session.json";
inline constexpr char kSessionRuntimeSchema[] = "opscope.session-runtime/1";
inline constexpr char kSessionGraphSchema[] = "opscope.session-graph/1";

struct SessionConfig {
  std::string dir;
  bool graph = false;
  bool runtime = false;
};

// DIR/session.json, written atomically; the error names the file.
Status WriteSessionConfig(const SessionConfig& config);
StatusOr<SessionConfig> ReadSessionConfig(const std::string& dir);

// The session this process records into (from OPSCOPE_SESSION at load time),
// or nullptr outside a session.
const SessionConfig* ActiveSession();

// How many launches the runtime collector holds; past it they are counted as
// dropped in runtime-<pid>.json, never silently lost.
inline constexpr size_t kSessionMaxLaunches = size_t{1} << 20;

// The runtime collector: keeps every completed launch (at AfterLaunch: a
// failed kernel's launch is not kept). A session registers one; tests and
// benchmarks may make their own.
class SessionRuntimeCollector : public DispatchHook {
 public:
  explicit SessionRuntimeCollector(std::string dir);
  void AfterLaunch(const LaunchRecord& rec) override;
  // Writes DIR/runtime-<pid>.json (nothing when no launch was seen). Device
  // times of launches whose events were not reached stay unknown (-1).
  Status Flush();
  void Clear();
  size_t size();

 private:
  struct Entry {
    uint64_t seq = 0, op_id = 0;
    const char* op = "";
    const char* kernel = "";
    const char* device = "";
    int stream_id = -1;
    int64_t host_enqueue_ns = 0, host_done_ns = 0;
    LaunchConfig launch;
    int num_launches = 0;
    std::shared_ptr<const std::vector<KernelLaunchInfo>> async_launches;
    std::shared_ptr<Event> start, end;
  };

  const std::string dir_;
  std::mutex mu_;
  std::vector<Entry> entries_;
  uint64_t dropped_ = 0;
};

// Writes DIR/runtime-<pid>.json now (normally done at exit); a no-op outside
// a session, with the runtime collector off, or before any launch.
Status FlushSessionRuntime();

// "runtime-<pid>.json" / "graph-<pid>-<n>.json" for this process.
std::string SessionRuntimeFileName(int64_t pid);
std::string SessionGraphFileName(int64_t pid, int64_t index);

}  // namespace opscope
