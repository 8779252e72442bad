#include "graph/runtime/run_races.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "analysis/diagnose/race_check.h"
#include "core/text_format.h"
#include "capture/dispatcher.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

// One run recorder per process: the stream observer is a single global slot.
std::atomic<bool> g_recording{false};

bool Overlaps(const FlightRange& r, uint64_t begin, uint64_t bytes) {
  return r.bytes > 0 && r.begin < begin + bytes && begin < r.begin + r.bytes;
}

// The graph value behind the access's range at `begin`, from the node's
// inputs (reads) or outputs (writes), in the order the launch recorded them.
std::string ValueName(const Graph& g, const ScheduledTask& t, const StreamAccess& a, bool writes, uint64_t begin,
                      uint64_t bytes) {
  if (t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H) return t.value;
  const Node* n = g.FindNode(t.desc.op_node_id);
  if (n == nullptr) return "";
  const std::vector<FlightRange>& ranges = writes ? a.writes : a.reads;
  const std::vector<std::string>& values = writes ? n->outputs : n->inputs;
  for (size_t i = 0; i < ranges.size() && i < values.size(); ++i) {
    if (Overlaps(ranges[i], begin, bytes)) return values[i];
  }
  return "";
}

RaceAccess MapAccess(const Graph& g, const Schedule& s, const std::unordered_map<uint64_t, int64_t>& by_op_id,
                     const std::unordered_map<uint64_t, int64_t>& copy_tasks, const StreamAccess& a, bool writes,
                     const std::string& tensor, uint64_t begin, uint64_t bytes) {
  RaceAccess out{.op_type = a.op, .kernel = a.kernel, .tensor = tensor, .writes = writes};
  int64_t task = -1;
  if (a.op_id_raw != 0) {
    // A launch, or a copy a kernel issued: its caller's task.
    if (auto it = by_op_id.find(a.op_id_raw); it != by_op_id.end()) task = it->second;
  } else if (!a.is_launch && !a.writes.empty()) {
    if (auto it = copy_tasks.find(a.writes[0].begin); it != copy_tasks.end()) task = it->second;
  }
  if (task < 0) {
    out.name = a.what;  // not the schedule's: said as the recorder saw it
    return out;
  }
  const ScheduledTask& t = s.tasks[task];
  out.task_id = task;
  out.stream_id = t.desc.stream_id;
  out.op_type = t.op_type;
  out.kernel = a.is_launch || t.op_type == "memcpy" ? t.desc.kernel_name : "copy inside " + t.desc.kernel_name;
  if (t.desc.kind == TaskKind::kMemcpyH2D) out.name = "H2D copy of " + t.value;
  else if (t.desc.kind == TaskKind::kMemcpyD2H) out.name = "D2H copy of " + t.value;
  else out.name = t.node_name;
  if (std::string v = ValueName(g, t, a, writes, begin, bytes); !v.empty()) out.tensor = v;
  return out;
}

// What the ring could not hold, in words; "" when it held everything.
std::string Unjudged(const FlightRingData& ring, const RaceCheckResult& r, FlightRecorder& rec, uint32_t slots) {
  std::vector<std::string> parts;
  if (r.judged_from_seq > 0) {
    int64_t before = 0;
    for (const LaunchSlot& l : ring.launches) before += l.stream_id >= 0 && l.seq < r.judged_from_seq;
    for (const SyncRecord& y : ring.syncs) before += y.kind == static_cast<int32_t>(SyncKind::kMemcpy) && y.seq < r.judged_from_seq;
    parts.push_back(std::to_string(before) + " accesses before the oldest of the " + std::to_string(kFlightSyncSlots) +
                    " sync records kept (of " + std::to_string(ring.header.sync_head) + "; older orderings were pushed out)");
  }
  const StreamRing* streams = RingStreams(&rec.header());
  for (int i = 0; i < kFlightMaxStreams; ++i) {
    if (streams[i].key == 0 || streams[i].head <= slots) continue;
    parts.push_back("stream " + std::string(streams[i].device) + "/" + std::to_string(streams[i].stream_id) + ": " +
                    std::to_string(streams[i].head - slots) + " of its " + std::to_string(streams[i].head) +
                    " launches pushed out of its " + std::to_string(slots) + " slots");
  }
  if (ring.header.dropped_streams > 0) {
    parts.push_back(std::to_string(ring.header.dropped_streams) + " launches on streams past the recorder's " +
                    std::to_string(kFlightMaxStreams) + " never recorded");
  }
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

json AccessJson(const RaceAccess& a) {
  return {{"task_id", a.task_id}, {"name", a.name},     {"op_type", a.op_type}, {"kernel", a.kernel},
          {"stream_id", a.stream_id}, {"tensor", a.tensor}, {"writes", a.writes}};
}

RaceAccess AccessFromJson(const JsonField& j) {
  return {.task_id = j["task_id"].Int(),
          .name = j["name"].String(),
          .op_type = j["op_type"].String(),
          .kernel = j["kernel"].String(),
          .stream_id = j["stream_id"].IntInRange(-1, 1 << 20),
          .tensor = j["tensor"].String(),
          .writes = j["writes"].Bool()};
}

std::string AccessText(const RaceAccess& a) {
  std::string s = a.task_id >= 0 ? "task " + std::to_string(a.task_id) + " '" + a.name + "'" : a.name;
  s += " (" + a.op_type + (a.kernel.empty() ? "" : ", kernel " + a.kernel) + ", stream " + std::to_string(a.stream_id) + ")";
  return s + (a.writes ? " writes" : " reads") + (a.tensor.empty() ? "" : " '" + a.tensor + "'");
}

}  // namespace

uint32_t RaceRingSlots(const Schedule& schedule) {
  std::vector<uint32_t> kernels(static_cast<size_t>(std::max(schedule.num_streams(), 1)), 0);
  for (const ScheduledTask& t : schedule.tasks) {
    const bool copy = t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H;
    if (!copy && t.desc.stream_id >= 0 && t.desc.stream_id < static_cast<int>(kernels.size())) ++kernels[t.desc.stream_id];
  }
  const uint32_t busiest = *std::max_element(kernels.begin(), kernels.end());
  return std::clamp<uint32_t>(2 * busiest + 16, 64, 4096);
}

RaceRecording::RaceRecording(std::string path, std::shared_ptr<FlightRecorder> recorder, uint32_t slots)
    : path_(std::move(path)), recorder_(std::move(recorder)), slots_(slots) {
  hook_id_ = Dispatcher::Global().AddHook(recorder_);
  SetStreamObserver(recorder_.get());
}

RaceRecording::~RaceRecording() {
  Stop();
  recorder_.reset();  // unmaps
  std::error_code ec;
  std::filesystem::remove(path_, ec);  // scratch: the verdict goes to summary.json and capture.json
}

void RaceRecording::Stop() {
  if (hook_id_ < 0) return;
  SetStreamObserver(nullptr);
  Dispatcher::Global().RemoveHook(hook_id_);
  hook_id_ = -1;
  g_recording.store(false);
}

StatusOr<std::unique_ptr<RaceRecording>> RaceRecording::Start(const std::string& ring_path, const Schedule& schedule,
                                                              std::string* skipped) {
  if (FlightRecorder::Active() != nullptr) {
    *skipped = "ops-debug diagnose records this process and runs the race check itself";
    return std::unique_ptr<RaceRecording>();
  }
  if (g_recording.exchange(true)) {
    *skipped = "another run in this process holds the stream observer";
    return std::unique_ptr<RaceRecording>();
  }
  const uint32_t slots = RaceRingSlots(schedule);
  auto rec = FlightRecorder::Open(ring_path, {.slots = slots, .tensor_summaries = false});
  if (!rec.ok()) {
    g_recording.store(false);
    return std::move(rec).status().WithContext("race check");
  }
  return std::unique_ptr<RaceRecording>(new RaceRecording(ring_path, std::move(rec).value(), slots));
}

RaceCheckOutcome RaceRecording::Finish(const Graph& compiled, const Schedule& schedule,
                                       const std::unordered_map<uint64_t, int64_t>& copy_tasks) {
  Stop();
  RaceCheckOutcome out;
  StatusOr<FlightRingData> ring = ReadFlightRing(path_);
  if (!ring.ok()) {
    out.skipped = "the ring could not be read back: " + ring.status().ToString();
    return out;
  }
  const RaceCheckResult r = FindRaces(*ring);
  out.ran = true;
  out.accesses = static_cast<int64_t>(r.accesses);
  out.sync_records = static_cast<int64_t>(ring->header.sync_head);
  out.ring_slots = slots_;
  out.unjudged = Unjudged(*ring, r, *recorder_, slots_);
  std::unordered_map<uint64_t, int64_t> by_op_id;
  for (const ScheduledTask& t : schedule.tasks) {
    if (t.op_id != 0) by_op_id[t.op_id] = t.desc.task_id;
  }
  for (const Race& race : r.races) {
    StreamRace sr{.begin = race.begin, .bytes = race.bytes};
    sr.first = MapAccess(compiled, schedule, by_op_id, copy_tasks, race.first, race.first_writes, race.first_tensor,
                         race.begin, race.bytes);
    sr.second = MapAccess(compiled, schedule, by_op_id, copy_tasks, race.second, race.second_writes,
                          race.second_tensor, race.begin, race.bytes);
    out.races.push_back(std::move(sr));
  }
  return out;
}

std::string RaceText(const StreamRace& race) {
  return AccessText(race.first) + ", " + AccessText(race.second) + " (" + std::to_string(race.bytes) + " B at " +
         Hex(race.begin) + "): no event or synchronisation orders them";
}

json RaceCheckJson(const RaceCheckOutcome& c) {
  json races = json::array();
  for (const StreamRace& r : c.races) {
    races.push_back({{"begin", Hex(r.begin)}, {"bytes", r.bytes}, {"first", AccessJson(r.first)},
                     {"second", AccessJson(r.second)}});
  }
  return {{"ran", c.ran},
          {"skipped", c.skipped.empty() ? json(nullptr) : json(c.skipped)},
          {"accesses", c.accesses},
          {"sync_records", c.sync_records},
          {"ring_slots", c.ring_slots},
          {"unjudged", c.unjudged.empty() ? json(nullptr) : json(c.unjudged)},
          {"races", std::move(races)}};
}

RaceCheckOutcome RaceCheckFromJson(const JsonField& j) {
  RaceCheckOutcome c;
  c.ran = j["ran"].Bool();
  if (j["skipped"].Present()) c.skipped = j["skipped"].String();
  c.accesses = j["accesses"].Int();
  c.sync_records = j["sync_records"].Int();
  c.ring_slots = j["ring_slots"].Int();
  if (j["unjudged"].Present()) c.unjudged = j["unjudged"].String();
  const JsonField races = j["races"];
  for (size_t i = 0; i < races.Size(); ++i) {
    const JsonField r = races[i];
    const JsonField begin = r["begin"];
    const std::string hex = begin.String();
    char* end = nullptr;
    const uint64_t at = std::strtoull(hex.c_str(), &end, 16);
    if (!hex.empty() && (end == hex.c_str() || *end != '\0')) begin.Fail("expected a hexadecimal address, found \"" + hex + "\"");
    c.races.push_back({.begin = at, .bytes = r["bytes"].Uint(), .first = AccessFromJson(r["first"]),
                       .second = AccessFromJson(r["second"])});
  }
  return c;
}

}  // namespace opscope::graph
