#include "graph/runtime/trace_json.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>

#include "opscope/npy.h"

namespace opscope::graph {

namespace {

// Appends to a string whose capacity was reserved up front.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  void Raw(std::string_view s) { out_.append(s); }
  void Char(char c) { out_.push_back(c); }
  void Int(int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
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
    char buf[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                   static_cast<char>('0' + frac % 10)};
    out_.append(buf, 4);
  }
  void Hex(uint64_t v) {
    char buf[20];
    auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
    Raw("\"0x");
    out_.append(buf, r.ptr);
    Char('"');
  }
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

 private:
  std::string& out_;
};

void Metadata(Writer& w, const char* what, int pid, int tid, const std::string& name) {
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
  if (stream_id == s.copy_stream) return "copy";
  return "compute " + std::to_string(stream_id);
}

TraceData BuildTraceData(const Schedule& schedule, const Graph& compiled, const std::string& device_name) {
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
    const Node* n = t.desc.op_node_id >= 0 ? compiled.FindNode(t.desc.op_node_id) : nullptr;
    x.name = n && !n->name.empty() ? n->name : (t.desc.label.empty() ? t.op_type : t.desc.label);
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
  out.reserve(256 + data.threads.size() * 96 + data.tasks.size() * 300 + data.flows.size() * 220);
  Writer w(out);
  w.Raw("{\"schema\":\"opscope.trace/1\",\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  Metadata(w, "process_name", data.pid, 0, data.process_name);
  for (const auto& [tid, name] : data.threads) Metadata(w, "thread_name", data.pid, tid, name);
  for (const TraceTask& t : data.tasks) {
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
  if (out.size() >= 2 && out[out.size() - 2] == ',') out.erase(out.size() - 2, 1);
  w.Raw("]}\n");
  return out;
}

Status WriteTraceJson(const std::string& path, const TraceData& data) {
  return WriteFileAtomic(path, TraceJson(data)).WithContext("trace.json");
}

}  // namespace opscope::graph
