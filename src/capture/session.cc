#include "capture/session.h"

#include <unistd.h>

#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture/recorder.h"
#include "core/clock.h"
#include "core/json_field.h"
#include "core/json_text.h"
#include "opscope/npy.h"

namespace opscope {
namespace {

using nlohmann::json;

// The first word of /proc/self/cmdline: which program recorded.
std::string ProgramName() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string argv0;
  std::getline(f, argv0, '\0');
  return argv0;
}

void FlushAtExit() {
  Status st = FlushSessionRuntime();
  if (!st.ok()) std::fprintf(stderr, "opscope: session: %s\n", st.ToString().c_str());
}

struct SessionState {
  bool active = false;
  SessionConfig config;
  std::shared_ptr<SessionRuntimeCollector> runtime;
};

// Never destroyed: exit handlers read it.
SessionState& State() {
  static SessionState* s = new SessionState();
  return *s;
}

void StartFromEnvironment() {
  const char* dir = std::getenv(kSessionEnv);
  if (dir == nullptr || *dir == '\0') return;
  StatusOr<SessionConfig> config = ReadSessionConfig(dir);
  if (!config.ok()) {
    std::fprintf(stderr, "opscope: %s=%s: %s; recording nothing\n", kSessionEnv, dir,
                 config.status().ToString().c_str());
    return;
  }
  SessionState& s = State();
  s.config = std::move(config).value();
  s.active = true;
  if (s.config.runtime) {
    s.runtime = std::make_shared<SessionRuntimeCollector>(s.config.dir);
    Dispatcher::Global().AddHook(s.runtime);
  }
}

[[maybe_unused]] const bool session_started = [] {
  StartFromEnvironment();
  return true;
}();

}  // namespace

SessionRuntimeCollector::SessionRuntimeCollector(std::string dir) : dir_(std::move(dir)) { entries_.reserve(4096); }

// A mutex is enough here: it is uncontended unless several host threads
// dispatch at once, and the per-launch work is a few stores and two
// shared_ptr copies (no formatting until exit).
void SessionRuntimeCollector::AfterLaunch(const LaunchRecord& rec) {
  Entry e;
  e.seq = rec.seq;
  e.op_id = rec.op_id;
  e.op = rec.op ? InternName(rec.op->name) : "";
  e.kernel = InternName(rec.kernel);
  e.device = rec.device ? InternName(rec.device->name()) : "host";
  e.stream_id = rec.stream_id;
  e.host_enqueue_ns = rec.host_enqueue_ns;
  e.host_done_ns = SteadyNowNs();
  if (!rec.launches.empty()) {
    e.launch = rec.launches.front().config;
    e.num_launches = static_cast<int>(rec.launches.size());
  }
  e.async_launches = rec.async_launches;
  e.start = rec.start;
  e.end = rec.end;
  // Registered after the first launch, so after the device it ran on was
  // created: exit runs this before that device is torn down.
  static std::once_flag at_exit_once;
  std::call_once(at_exit_once, [] { std::atexit(FlushAtExit); });
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.size() >= kSessionMaxLaunches) {
    ++dropped_;
    return;
  }
  entries_.push_back(std::move(e));
}

void SessionRuntimeCollector::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  dropped_ = 0;
}

size_t SessionRuntimeCollector::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

Status SessionRuntimeCollector::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.empty() && dropped_ == 0) return Status::Ok();
  json launches = json::array();
  for (const Entry& e : entries_) {
    int64_t start = -1, end = -1;
    // A launch whose events were not reached (the program exited without
    // waiting for it) keeps unknown device times rather than blocking exit.
    if (e.start && e.end && e.end->Query()) {
      auto s = e.start->TimestampNs();
      auto t = e.end->TimestampNs();
      if (s.ok() && t.ok()) start = *s, end = *t;
    }
    bool launch_known = e.num_launches > 0;
    LaunchConfig launch = e.launch;
    int num_launches = e.num_launches;
    if (!launch_known && e.async_launches && end >= 0 && !e.async_launches->empty()) {
      launch = e.async_launches->front().config;
      num_launches = static_cast<int>(e.async_launches->size());
      launch_known = true;
    }
    json l = {{"seq", e.seq},
              {"op_id", e.op_id},
              {"op", e.op},
              {"kernel", e.kernel},
              {"device", e.device},
              {"stream_id", e.stream_id},
              {"host_enqueue_ns", e.host_enqueue_ns},
              {"host_done_ns", e.host_done_ns},
              {"device_ns", {start, end}},
              {"launches", num_launches}};
    if (launch_known) {
      l["grid"] = {launch.grid.x, launch.grid.y, launch.grid.z};
      l["block"] = {launch.block.x, launch.block.y, launch.block.z};
      l["vector_width"] = launch.vector_width;
    } else {
      l["grid"] = nullptr;
      l["block"] = nullptr;
    }
    launches.push_back(std::move(l));
  }
  const int64_t pid = ::getpid();
  json j = {{"schema", kSessionRuntimeSchema},
            {"pid", pid},
            {"program", ProgramName()},
            {"dropped", dropped_},
            {"launches", std::move(launches)}};
  return WriteFileAtomic(dir_ + "/" + SessionRuntimeFileName(pid), JsonText(j) + "\n");
}

Status WriteSessionConfig(const SessionConfig& config) {
  json j = {{"schema", kSessionSchema}, {"collectors", {{"graph", config.graph}, {"runtime", config.runtime}}}};
  return WriteFileAtomic(config.dir + "/" + kSessionFile, JsonText(j, 2) + "\n").WithContext(kSessionFile);
}

StatusOr<SessionConfig> ReadSessionConfig(const std::string& dir) {
  const std::string file = dir + "/" + kSessionFile;
  StatusOr<std::string> text = ReadFile(file);
  if (!text.ok()) {
    return NotFoundError(file + ": cannot read it (start a session with `inspector-cli start --output-dir " + dir +
                         "`)");
  }
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgumentError(file + ": not valid JSON");
  if (StringMember(j, "schema") != kSessionSchema) {
    return InvalidArgumentError(file + ": expected \"schema\": \"" + kSessionSchema + "\"");
  }
  const json& c = j.contains("collectors") ? j["collectors"] : json();
  if (!c.is_object() || !c.value("graph", json()).is_boolean() || !c.value("runtime", json()).is_boolean()) {
    return InvalidArgumentError(file + ": expected \"collectors\": {\"graph\": bool, \"runtime\": bool}");
  }
  return SessionConfig{.dir = dir, .graph = c["graph"].get<bool>(), .runtime = c["runtime"].get<bool>()};
}

const SessionConfig* ActiveSession() {
  const SessionState& s = State();
  return s.active ? &s.config : nullptr;
}

Status FlushSessionRuntime() {
  SessionState& s = State();
  if (!s.active || !s.runtime) return Status::Ok();
  return s.runtime->Flush();
}

std::string SessionRuntimeFileName(int64_t pid) { return "runtime-" + std::to_string(pid) + ".json"; }

std::string SessionGraphFileName(int64_t pid, int64_t index) {
  return "graph-" + std::to_string(pid) + "-" + std::to_string(index) + ".json";
}

}  // namespace opscope
