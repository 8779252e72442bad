#include "graph/runtime/trace_json.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>

#include "opscope/npy.h"

namespace opscope::graph {

namespace {

// Formats into a string through a raw cursor: the caller makes room once per
// event (Ensure), so each append is a plain copy with no capacity check.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  ~Writer() { out_.resize(pos_); }
  // Room for `bytes` more characters. The string grows in small steps inside
  // its reserved capacity: resize zero-fills what it adds, and a small step
  // keeps that fill and our writes in cache (a 300 MB fill up front doubled
  // the memory traffic).
  void Ensure(size_t bytes) {
    if (pos_ + bytes > out_.size()) out_.resize(pos_ + bytes + kStep);
  }
  static constexpr size_t kStep = 64 * 1024;
  void Raw(std::string_view s) {
    std::memcpy(out_.data() + pos_, s.data(), s.size());
    pos_ += s.size();
  }
  void Char(char c) { out_[pos_++] = c; }
  void Int(int64_t v) {
    auto r = std::to_chars(out_.data() + pos_, out_.data() + pos_ + 24, v);
    pos_ = static_cast<size_t>(r.ptr - out_.data());
  }
  // Nanoseconds as microseconds with three decimals: exact, so slices that
  // touch in ns never overlap after formatting.
  void Micros(int64_t ns) {
    if (ns < 0) {
      Char('-');
      ns = -ns;
    }
    Int(ns / 1000);
    const int frac = static_cast<int>(ns % 1000);
    Char('.');
    Char(static_cast<char>('0' + frac / 100));
    Char(static_cast<char>('0' + frac / 10 % 10));
    Char(static_cast<char>('0' + frac % 10));
  }
  void Hex(uint64_t v) {
    Raw("\"0x");
    auto r = std::to_chars(out_.data() + pos_, out_.data() + pos_ + 20, v, 16);
    pos_ = static_cast<size_t>(r.ptr - out_.data());
    Char('"');
  }
  // Worst case: every character escaped as \u00XX.
  static size_t StrBound(std::string_view s) { return 2 + 6 * s.size(); }
  void Str(std::string_view s) {
    Char('"');
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        Char('\\');
        Char(c);
      } else if (u < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", u);
        Raw(buf);
      } else {
        Char(c);
      }
    }
    Char('"');
  }
  void Dim(const Dim3& d) {
    Char('[');
    Int(d.x);
    Char(',');
    Int(d.y);
    Char(',');
    Int(d.z);
    Char(']');
  }
  size_t size() const { return pos_; }
  char& back(size_t from_end) { return out_[pos_ - from_end]; }
  void Drop(size_t n) { pos_ -= n; }

 private:
  std::string& out_;
  size_t pos_ = 0;
};

// Room for an event's fixed text and numbers, beside its strings.
constexpr size_t kEventFixedBytes = 512;

void Metadata(Writer& w, const char* what, int pid, int tid, const std::string& name) {
  w.Ensure(kEventFixedBytes + Writer::StrBound(name));
  w.Raw("{\"ph\":\"M\",\"name\":\"");
  w.Raw(what);
  w.Raw("\",\"pid\":");
  w.Int(pid);
  w.Raw(",\"tid\":");
  w.Int(tid);
  w.Raw(",\"args\":{\"name\":");
  w.Str(name);
  w.Raw("}},\n");
}

}  // namespace

std::string StreamName(const Schedule& s, int stream_id) {
  if (stream_id >= 0 && static_cast<size_t>(stream_id) < s.stream_names.size()) return s.stream_names[stream_id];
  if (stream_id == s.copy_stream) return "copy";
  return "compute " + std::to_string(stream_id);
}

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

std::string TraceJson(const TraceData& data) {
  std::string out;
  out.reserve(4096 + data.threads.size() * 96 + data.tasks.size() * 300 + data.flows.size() * 220);
  {
  Writer w(out);
  w.Ensure(kEventFixedBytes);
  w.Raw("{\"schema\":\"opscope.trace/1\",\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  Metadata(w, "process_name", data.pid, 0, data.process_name);
  for (const auto& [tid, name] : data.threads) Metadata(w, "thread_name", data.pid, tid, name);
  for (const TraceTask& t : data.tasks) {
    w.Ensure(kEventFixedBytes + Writer::StrBound(t.name) + Writer::StrBound(t.category) +
             Writer::StrBound(t.op_type) + Writer::StrBound(t.kernel));
    w.Raw("{\"ph\":\"X\",\"pid\":");
    w.Int(data.pid);
    w.Raw(",\"tid\":");
    w.Int(t.tid);
    w.Raw(",\"ts\":");
    w.Micros(t.ts_ns);
    w.Raw(",\"dur\":");
    w.Micros(t.dur_ns);
    w.Raw(",\"name\":");
    w.Str(t.name);
    w.Raw(",\"cat\":");
    w.Str(t.category);
    w.Raw(",\"args\":{\"task_id\":");
    w.Int(t.task_id);
    w.Raw(",\"node_id\":");
    w.Int(t.node_id);
    w.Raw(",\"op_id\":");
    w.Hex(t.op_id);
    w.Raw(",\"op_type\":");
    w.Str(t.op_type);
    w.Raw(",\"kernel\":");
    w.Str(t.kernel);
    if (t.launch_known) {
      w.Raw(",\"grid\":");
      w.Dim(t.grid);
      w.Raw(",\"block\":");
      w.Dim(t.block);
    } else {
      w.Raw(",\"grid\":null,\"block\":null");
    }
    w.Raw("}},\n");
  }
  for (const TraceFlow& f : data.flows) {
    for (int end = 0; end < 2; ++end) {
      w.Ensure(kEventFixedBytes + Writer::StrBound(f.name));
      w.Raw(end ? "{\"ph\":\"f\",\"bp\":\"e\",\"id\":" : "{\"ph\":\"s\",\"id\":");
      w.Int(f.id);
      w.Raw(",\"pid\":");
      w.Int(data.pid);
      w.Raw(",\"tid\":");
      w.Int(end ? f.to_tid : f.from_tid);
      w.Raw(",\"ts\":");
      w.Micros(end ? f.to_ts_ns : f.from_ts_ns);
      w.Raw(",\"cat\":\"dependency\",\"name\":");
      w.Str(f.name);
      w.Raw("},\n");
    }
  }
  // A trailing comma is not JSON: end on the last event.
  if (w.size() >= 2 && w.back(2) == ',') {
    w.Drop(2);
    w.Char('\n');
  }
  w.Ensure(8);
  w.Raw("]}\n");
  }  // the writer trims `out` to what was written
  return out;
}

Status WriteTraceJson(const std::string& path, const TraceData& data) {
  return WriteFileAtomic(path, TraceJson(data)).WithContext("trace.json");
}

}  // namespace opscope::graph
