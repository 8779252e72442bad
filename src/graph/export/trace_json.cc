#include "graph/export/trace_json.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "core/json_text.h"
#include "core/json_writer.h"
#include "core/text_format.h"
#include "opscope/npy.h"

namespace opscope::graph {

namespace {

// The writer formats with a raw cursor held in a local variable: every helper
// takes the cursor and returns the advanced one. Through a member or a
// reference, each char store could alias the cursor itself, and the compiler
// would reload it after every byte.

template <size_t N>
inline char* Lit(char* p, const char (&s)[N]) {
  std::memcpy(p, s, N - 1);
  return p + N - 1;
}

inline char* Bytes(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Most numbers in a trace are small (ids, dims, stream ids): one or two digits
// without a call.
inline char* U64(char* p, uint64_t v) {
  if (v < 10) {
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  if (v < 100) {
    std::memcpy(p, kDigitPairs + 2 * v, 2);
    return p + 2;
  }
  return std::to_chars(p, p + 20, v).ptr;
}

inline char* I64(char* p, int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return U64(p, ~static_cast<uint64_t>(v) + 1);
  }
  return U64(p, static_cast<uint64_t>(v));
}

// Nanoseconds as microseconds with three decimals: exact, so slices that
// touch in ns never overlap after formatting.
inline char* Micros(char* p, int64_t ns) {
  uint64_t u = static_cast<uint64_t>(ns);
  if (ns < 0) {
    *p++ = '-';
    u = ~u + 1;
  }
  p = U64(p, u / 1000);
  const unsigned frac = static_cast<unsigned>(u % 1000);
  p[0] = '.';
  p[1] = static_cast<char>('0' + frac / 100);
  std::memcpy(p + 2, kDigitPairs + 2 * (frac % 100), 2);
  return p + 4;
}

// "0x..." in lower-case hex, no leading zeros.
inline char* Hex(char* p, uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  p = Lit(p, "\"0x");
  const int digits = v == 0 ? 1 : (64 - std::countl_zero(v) + 3) / 4;
  for (int i = digits - 1; i >= 0; --i, v >>= 4) p[i] = kHex[v & 15];
  p[digits] = '"';
  return p + digits + 1;
}

// True when some byte is a control character, '"', '\\' or not ASCII (to
// be checked as UTF-8: names come from models nobody here wrote). Eight bytes
// at a time: each test sets a byte's high bit exactly when some byte matches
// (the borrow trick can only misfire above a byte that really matches).
inline bool NeedsEscape(std::string_view s) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    const uint64_t quote = w ^ (kOnes * '"'), slash = w ^ (kOnes * '\\');
    const uint64_t hit = ((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) | ((slash - kOnes) & ~slash) | w;
    if (hit & kHigh) return true;
  }
  for (; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u < 0x20 || u == '"' || u == '\\' || u >= 0x80) return true;
  }
  return false;
}

// The slow path, for a name that needs escaping (core/json_writer.h's rule:
// invalid UTF-8 becomes U+FFFD, 3 bytes for 1, within StrBound), so the file
// stays readable by every JSON parser, our own export included.
char* EscapedBody(char* p, std::string_view s) {
  thread_local std::string body;
  body.clear();
  AppendJsonEscaped(body, s);
  return Bytes(p, body);
}

inline char* Str(char* p, std::string_view s) {
  *p++ = '"';
  p = NeedsEscape(s) ? EscapedBody(p, s) : Bytes(p, s);
  *p++ = '"';
  return p;
}

// Worst case: every character escaped as \u00XX.
inline size_t StrBound(std::string_view s) { return 2 + 6 * s.size(); }

inline char* Dim(char* p, const Dim3& d) {
  *p++ = '[';
  p = I64(p, d.x);
  *p++ = ',';
  p = I64(p, d.y);
  *p++ = ',';
  p = I64(p, d.z);
  *p++ = ']';
  return p;
}

// A double as JSON, or null when negative (unknown); shortest round-trip form.
inline char* Real(char* p, double v) {
  if (!(v >= 0) || !std::isfinite(v)) return Lit(p, "null");
  return std::to_chars(p, p + 32, v).ptr;
}

// Room for an event's fixed text and numbers, beside its strings.
constexpr size_t kEventFixedBytes = 768;

// The output string, grown in small steps inside its reserved capacity:
// resize zero-fills what it adds, and a small step keeps that fill and our
// writes in cache (a 300 MB fill up front doubled the memory traffic).
class Buffer {
 public:
  // Reserves `capacity` bytes. A big buffer asks for transparent huge pages:
  // first-touch page faults of fresh 4 KiB pages, one per 15 events, took
  // about as long as formatting them.
  Buffer(std::string& out, size_t capacity) : out_(out) {
    out_.reserve(capacity);
#ifdef MADV_HUGEPAGE
    constexpr uintptr_t kPage = 4096;
    if (capacity >= (size_t{8} << 20)) {
      const auto begin = (reinterpret_cast<uintptr_t>(out_.data()) + kPage - 1) & ~(kPage - 1);
      const auto end = (reinterpret_cast<uintptr_t>(out_.data()) + out_.capacity()) & ~(kPage - 1);
      if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // a hint only
    }
#endif
  }
  // A cursor with room for `bytes` more characters at `p`.
  char* Ensure(char* p, size_t bytes) {
    const size_t used = p ? static_cast<size_t>(p - out_.data()) : 0;
    if (used + bytes > out_.size()) out_.resize(used + bytes + kStep);
    return out_.data() + used;
  }
  void Finish(char* p) { out_.resize(static_cast<size_t>(p - out_.data())); }

 private:
  static constexpr size_t kStep = 64 * 1024;
  std::string& out_;
};

char* Metadata(char* p, const char* what, int pid, int tid, const std::string& name) {
  p = Lit(p, "{\"ph\":\"M\",\"name\":\"");
  p = Bytes(p, what);
  p = Lit(p, "\",\"pid\":");
  p = I64(p, pid);
  p = Lit(p, ",\"tid\":");
  p = I64(p, tid);
  p = Lit(p, ",\"args\":{\"name\":");
  p = Str(p, name);
  return Lit(p, "}},\n");
}

char* Task(char* p, std::string_view prefix, const TraceTask& t) {
  p = Bytes(p, prefix);  // {"ph":"X","pid":P,"tid":T,"ts":
  p = Micros(p, t.ts_ns);
  p = Lit(p, ",\"dur\":");
  p = Micros(p, t.dur_ns);
  p = Lit(p, ",\"name\":");
  p = Str(p, t.name);
  p = Lit(p, ",\"cat\":");
  p = Str(p, t.category);
  p = Lit(p, ",\"args\":{\"task_id\":");
  p = I64(p, t.task_id);
  p = Lit(p, ",\"node_id\":");
  p = I64(p, t.node_id);
  p = Lit(p, ",\"op_id\":");
  p = Hex(p, t.op_id);
  p = Lit(p, ",\"op_type\":");
  p = Str(p, t.op_type);
  p = Lit(p, ",\"kernel\":");
  p = Str(p, t.kernel);
  if (t.launch_known) {
    p = Lit(p, ",\"grid\":");
    p = Dim(p, t.grid);
    p = Lit(p, ",\"block\":");
    p = Dim(p, t.block);
  } else {
    p = Lit(p, ",\"grid\":null,\"block\":null");
  }
  if (t.has_cost) {
    const bool known = t.bound != Bound::kNone;
    p = Lit(p, ",\"bound\":\"");
    p = Bytes(p, BoundName(t.bound));
    p = Lit(p, "\",\"lower_bound_us\":");
    p = Real(p, known ? t.lower_bound_us : -1);
    p = Lit(p, ",\"efficiency\":");
    p = Real(p, known ? t.efficiency : -1);
    if (t.above_roof != AboveRoof::kNo) {
      p = Lit(p, ",\"above_roof\":\"");
      p = Bytes(p, AboveRoofName(t.above_roof));
      p = Lit(p, "\"");
    }
    p = Lit(p, ",\"bytes\":");
    p = I64(p, t.bytes);
    p = Lit(p, ",\"flops\":");
    p = Real(p, t.flops);
  }
  if (t.spread.samples > 0) {
    p = Lit(p, ",\"median_us\":");
    p = Real(p, t.spread.median_us);
    p = Lit(p, ",\"q1_us\":");
    p = Real(p, t.spread.q1_us);
    p = Lit(p, ",\"q3_us\":");
    p = Real(p, t.spread.q3_us);
    p = Lit(p, ",\"iterations\":");
    p = I64(p, t.spread.samples);
  }
  return Lit(p, "}},\n");
}

char* FlowEnd(char* p, const TraceFlow& f, int pid, bool finish) {
  p = finish ? Lit(p, "{\"ph\":\"f\",\"bp\":\"e\",\"id\":") : Lit(p, "{\"ph\":\"s\",\"id\":");
  p = I64(p, f.id);
  p = Lit(p, ",\"pid\":");
  p = I64(p, pid);
  p = Lit(p, ",\"tid\":");
  p = I64(p, finish ? f.to_tid : f.from_tid);
  p = Lit(p, ",\"ts\":");
  p = Micros(p, finish ? f.to_ts_ns : f.from_ts_ns);
  p = Lit(p, ",\"cat\":\"dependency\",\"name\":");
  p = Str(p, f.name);
  return Lit(p, "},\n");
}

// The constant head of a task event on one tid.
std::string TaskPrefix(int pid, int tid) {
  char buf[96];
  char* p = Lit(buf, "{\"ph\":\"X\",\"pid\":");
  p = I64(p, pid);
  p = Lit(p, ",\"tid\":");
  p = I64(p, tid);
  p = Lit(p, ",\"ts\":");
  return std::string(buf, p);
}

}  // namespace

TraceData BuildTraceData(const Schedule& schedule, const Graph& compiled, const std::string& device_name) {
  return BuildTraceData(schedule, device_name);
}

TraceData BuildTraceData(const Schedule& schedule, const std::string& device_name) {
  TraceData d;
  d.process_name = device_name;
  for (int s = 0; s < schedule.num_streams(); ++s) d.threads.emplace_back(s, StreamName(schedule, s));
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const ScheduledTask& t : schedule.tasks) {
    if (t.cal_start_ns >= 0) origin = std::min(origin, t.cal_start_ns);
  }
  std::vector<int64_t> recorder_of_event(schedule.num_events, -1);
  for (const ScheduledTask& t : schedule.tasks) {
    if (t.desc.event_after >= 0) recorder_of_event[t.desc.event_after] = t.desc.task_id;
    if (t.cal_start_ns < 0) continue;
    TraceTask x;
    x.task_id = t.desc.task_id;
    x.node_id = t.desc.op_node_id;
    x.op_id = t.op_id;
    x.tid = t.desc.stream_id;
    x.ts_ns = t.cal_start_ns - origin;
    x.dur_ns = t.cal_end_ns - t.cal_start_ns;
    x.name = !t.node_name.empty() ? t.node_name : (t.desc.label.empty() ? t.op_type : t.desc.label);
    x.category = TaskKindName(t.desc.kind);
    x.op_type = t.op_type;
    x.kernel = t.desc.kernel_name;
    x.launch_known = t.launch_known;
    x.grid = t.launch.grid;
    x.block = t.launch.block;
    d.tasks.push_back(std::move(x));
  }
  int64_t flow_id = 1;
  for (const ScheduledTask& t : schedule.tasks) {
    if (t.cal_start_ns < 0) continue;
    for (int64_t e : t.wait_events) {
      const int64_t p = recorder_of_event[e];
      if (p < 0 || schedule.tasks[p].cal_start_ns < 0) continue;
      const ScheduledTask& pt = schedule.tasks[p];
      d.flows.push_back(TraceFlow{.id = flow_id++, .from_tid = pt.desc.stream_id, .to_tid = t.desc.stream_id,
                                  .from_ts_ns = pt.cal_start_ns - origin, .to_ts_ns = t.cal_start_ns - origin,
                                  .name = "event " + std::to_string(e)});
    }
  }
  return d;
}

void AddRoofline(TraceData& data, const std::vector<TaskRoof>& roofs) {
  for (TraceTask& t : data.tasks) {
    if (t.task_id < 0 || static_cast<size_t>(t.task_id) >= roofs.size()) continue;
    const RooflinePoint& p = roofs[t.task_id].point;
    t.has_cost = p.has_cost;
    t.bound = p.bound;
    t.lower_bound_us = p.lower_bound_us;
    t.efficiency = p.efficiency();
    t.above_roof = AboveRoofOf(p);
    t.bytes = p.bytes;
    t.flops = p.flops;
  }
}

void AddTiming(TraceData& data, const RunTiming& timing) {
  for (TraceTask& t : data.tasks) {
    if (t.task_id >= 0 && static_cast<size_t>(t.task_id) < timing.tasks.size()) t.spread = timing.tasks[t.task_id];
  }
  data.timing = RunTimingJson(timing);
}

std::string TraceJson(const TraceData& data) {
  std::string out;
  Buffer buf(out, 4096 + data.threads.size() * 96 + data.tasks.size() * 300 + data.flows.size() * 220);
  // The run's identity before the events, so a reader that wants only it
  // stops after the first line (run_identity.h).
  std::string head = "{\"schema\":\"opscope.trace/1\",";
  if (data.run || data.timing) {
    nlohmann::json other = nlohmann::json::object();
    if (data.run) other["run"] = RunIdentityJson(*data.run);
    if (data.timing) other["timing"] = *data.timing;
    head += "\"otherData\":" + JsonText(other) + ",";
  }
  head += "\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  char* p = buf.Ensure(nullptr, kEventFixedBytes + head.size());
  p = Bytes(p, head);
  p = buf.Ensure(p, kEventFixedBytes + StrBound(data.process_name));
  p = Metadata(p, "process_name", data.pid, 0, data.process_name);
  for (const auto& [tid, name] : data.threads) {
    p = buf.Ensure(p, kEventFixedBytes + StrBound(name));
    p = Metadata(p, "thread_name", data.pid, tid, name);
  }
  // Streams are few: their event heads are formatted once.
  std::vector<std::string> prefixes;
  for (const TraceTask& t : data.tasks) {
    p = buf.Ensure(p, kEventFixedBytes + StrBound(t.name) + StrBound(t.category) + StrBound(t.op_type) +
                          StrBound(t.kernel));
    if (t.tid >= 0 && t.tid < 4096) {
      if (static_cast<size_t>(t.tid) >= prefixes.size()) prefixes.resize(t.tid + 1);
      std::string& prefix = prefixes[t.tid];
      if (prefix.empty()) prefix = TaskPrefix(data.pid, t.tid);
      p = Task(p, prefix, t);
    } else {
      p = Task(p, TaskPrefix(data.pid, t.tid), t);
    }
  }
  for (const TraceFlow& f : data.flows) {
    p = buf.Ensure(p, 2 * (kEventFixedBytes + StrBound(f.name)));
    p = FlowEnd(p, f, data.pid, false);
    p = FlowEnd(p, f, data.pid, true);
  }
  // A trailing comma is not JSON: end on the last event (the process_name
  // event is always there, so the last two characters are ",\n").
  p -= 2;
  *p++ = '\n';
  p = buf.Ensure(p, 8);
  p = Lit(p, "]}\n");
  buf.Finish(p);
  return out;
}

Status WriteTraceJson(const std::string& path, const TraceData& data) {
  return WriteFileAtomic(path, TraceJson(data)).WithContext("trace.json");
}

}  // namespace opscope::graph
