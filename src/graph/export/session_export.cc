#include "graph/export/session_export.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "capture/session.h"
#include "core/file_util.h"
#include "core/json_field.h"
#include "core/json_text.h"
#include "graph/export/graph_json.h"
#include "graph/export/session_graph.h"
#include "graph/export/trace_json.h"
#include "graph/run/summary.h"
#include "opscope/npy.h"

namespace opscope::graph {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct RecordFile {
  std::string name;
  int64_t pid = 0, index = 0;
  json body;
};

// "runtime-<pid>.json" or "graph-<pid>-<n>.json": the numbers, or false.
bool ParseRecordName(const std::string& name, const std::string& prefix, int numbers, int64_t* pid, int64_t* index) {
  if (name.rfind(prefix, 0) != 0 || name.size() <= prefix.size() + 5 || !name.ends_with(".json")) return false;
  const std::string middle = name.substr(prefix.size(), name.size() - prefix.size() - 5);
  size_t dash = numbers == 2 ? middle.find('-') : std::string::npos;
  if (numbers == 2 && dash == std::string::npos) return false;
  auto number = [](const std::string& s, int64_t* out) {
    if (s.empty() || s.size() > 18 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
    *out = std::stoll(s);
    return true;
  };
  if (numbers == 1) return number(middle, pid);
  return number(middle.substr(0, dash), pid) && number(middle.substr(dash + 1), index);
}

StatusOr<json> ReadRecord(const fs::path& path, const char* schema) {
  // A session folder's record, never read through a link planted in it.
  OPSCOPE_ASSIGN_OR_RETURN(std::string text,
                           ReadFolderFile(path.parent_path().string(), path.filename().string()));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgumentError(path.string() + ": not valid JSON");
  if (StringMember(j, "schema") != schema) {
    return InvalidArgumentError(path.string() + ": expected \"schema\": \"" + schema + "\"");
  }
  return j;
}

// Streams of the merged schedule, one per (process, device stream).
class StreamTable {
 public:
  int Get(int64_t pid, int64_t device_stream, const std::string& name) {
    auto [it, added] = ids_.emplace(std::make_pair(pid, device_stream), static_cast<int>(names_.size()));
    if (added) names_.push_back(name);
    return it->second;
  }
  std::vector<std::string>& names() { return names_; }

 private:
  std::map<std::pair<int64_t, int64_t>, int> ids_;
  std::vector<std::string> names_;
};

class Merger {
 public:
  Merger(bool many_processes, bool many_graphs) : many_processes_(many_processes), many_graphs_(many_graphs) {}

  void AddGraph(const RecordFile& f) {
    const json& j = f.body;
    const auto streams = j.at("streams").get<std::vector<std::string>>();
    const auto device_ids = j.at("device_stream_ids").get<std::vector<int64_t>>();
    const int64_t task_offset = static_cast<int64_t>(s_.tasks.size());
    const int64_t event_offset = s_.num_events;
    for (const json& tj : j.at("tasks")) {
      ScheduledTask t = SessionTaskFromJson(tj);
      const int local = t.desc.stream_id;
      if (local < 0 || static_cast<size_t>(local) >= streams.size() || static_cast<size_t>(local) >= device_ids.size()) {
        throw std::out_of_range("task " + std::to_string(t.desc.task_id) + " names stream " + std::to_string(local));
      }
      std::string name = streams[local];
      if (many_graphs_) name = "graph " + std::to_string(f.index) + " " + name;
      t.desc.stream_id = streams_.Get(f.pid, device_ids[local], Prefix(f.pid) + name);
      t.desc.task_id += task_offset;
      for (int64_t& d : t.deps) d += task_offset;
      for (int64_t& e : t.wait_events) e += event_offset;
      if (t.desc.event_before >= 0) t.desc.event_before += event_offset;
      if (t.desc.event_after >= 0) t.desc.event_after += event_offset;
      if (t.op_id != 0) task_op_ids_.insert(t.op_id);
      s_.tasks.push_back(std::move(t));
      ++graph_tasks_;
    }
    s_.num_events += j.at("num_events").get<int64_t>();
    AddDevice(j.at("device").get<std::string>());
  }

  void AddLaunches(const RecordFile& f) {
    const json& j = f.body;
    dropped_ += j.at("dropped").get<uint64_t>();
    for (const json& l : j.at("launches")) {
      ++launches_;
      const uint64_t op_id = l.at("op_id").get<uint64_t>();
      if (task_op_ids_.count(op_id)) {
        ++merged_;
        continue;
      }
      ScheduledTask t;
      t.desc.task_id = static_cast<int64_t>(s_.tasks.size());
      t.desc.kind = TaskKind::kKernel;
      t.op_type = l.at("op").get<std::string>();
      t.desc.label = "dispatched " + t.op_type;
      t.desc.kernel_name = l.at("kernel").get<std::string>();
      t.op_id = op_id;
      const int64_t stream = l.at("stream_id").get<int64_t>();
      t.desc.stream_id = streams_.Get(f.pid, stream, Prefix(f.pid) + (stream < 0 ? std::string("host (reference)")
                                                                              : "stream " + std::to_string(stream)));
      const json& dev = l.at("device_ns");
      const bool device_times = dev.at(0).get<int64_t>() >= 0 && dev.at(1).get<int64_t>() >= 0;
      t.cal_start_ns = t.raw_start_ns = device_times ? dev.at(0).get<int64_t>() : l.at("host_enqueue_ns").get<int64_t>();
      t.cal_end_ns = t.raw_end_ns = device_times ? dev.at(1).get<int64_t>() : l.at("host_done_ns").get<int64_t>();
      t.desc.duration_us_raw = t.desc.duration_us_calibrated = static_cast<double>(t.cal_end_ns - t.cal_start_ns) / 1e3;
      t.launch_known = !l.at("grid").is_null();
      if (t.launch_known) {
        const json& g = l.at("grid");
        const json& b = l.at("block");
        t.launch.grid = {g.at(0).get<int64_t>(), g.at(1).get<int64_t>(), g.at(2).get<int64_t>()};
        t.launch.block = {b.at(0).get<int64_t>(), b.at(1).get<int64_t>(), b.at(2).get<int64_t>()};
        t.launch.vector_width = l.value("vector_width", 1);
        t.desc.launch = t.launch;
      }
      s_.tasks.push_back(std::move(t));
      AddDevice(l.at("device").get<std::string>());
    }
  }

  // Every start measured from the earliest one, as a run's schedule has it.
  Schedule Finish() {
    int64_t origin = std::numeric_limits<int64_t>::max();
    for (const ScheduledTask& t : s_.tasks) {
      if (t.cal_start_ns >= 0) origin = std::min(origin, t.cal_start_ns);
    }
    for (ScheduledTask& t : s_.tasks) {
      if (t.cal_start_ns >= 0) t.desc.start_us = static_cast<double>(t.cal_start_ns - origin) / 1e3;
      if (t.raw_start_ns >= 0) t.start_us_raw = static_cast<double>(t.raw_start_ns - origin) / 1e3;
    }
    s_.stream_names = std::move(streams_.names());
    s_.compute_streams = std::max<int>(0, static_cast<int>(s_.stream_names.size()) - 1);
    s_.copy_stream = -1;
    return std::move(s_);
  }

  std::string device() const {
    std::string out;
    for (const std::string& d : devices_) out += (out.empty() ? "" : "+") + d;
    return out.empty() ? "cpu" : out;
  }
  int64_t graph_tasks() const { return graph_tasks_; }
  int64_t launches() const { return launches_; }
  int64_t merged() const { return merged_; }
  uint64_t dropped() const { return dropped_; }

 private:
  std::string Prefix(int64_t pid) const { return many_processes_ ? "pid " + std::to_string(pid) + " " : ""; }
  void AddDevice(const std::string& d) {
    if (std::find(devices_.begin(), devices_.end(), d) == devices_.end()) devices_.push_back(d);
  }

  const bool many_processes_, many_graphs_;
  Schedule s_;
  StreamTable streams_;
  std::unordered_set<uint64_t> task_op_ids_;
  std::vector<std::string> devices_;
  int64_t graph_tasks_ = 0, launches_ = 0, merged_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace

bool IsSessionDir(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / kSessionFile, ec);
}

namespace {

struct SessionRecords {
  SessionConfig config;
  std::vector<RecordFile> graphs, runtimes;  // each in (pid, index) order
};

StatusOr<SessionRecords> ReadSessionRecords(const std::string& dir) {
  SessionRecords r;
  OPSCOPE_ASSIGN_OR_RETURN(r.config, ReadSessionConfig(dir));
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    RecordFile f;
    f.name = e.path().filename().string();
    if (ParseRecordName(f.name, "graph-", 2, &f.pid, &f.index)) {
      OPSCOPE_ASSIGN_OR_RETURN(f.body, ReadRecord(e.path(), kSessionGraphSchema));
      r.graphs.push_back(std::move(f));
    } else if (ParseRecordName(f.name, "runtime-", 1, &f.pid, &f.index)) {
      OPSCOPE_ASSIGN_OR_RETURN(f.body, ReadRecord(e.path(), kSessionRuntimeSchema));
      r.runtimes.push_back(std::move(f));
    }
  }
  if (ec) return InvalidArgumentError(dir + ": cannot list the session folder (" + ec.message() + ")");
  auto order = [](const RecordFile& a, const RecordFile& b) { return std::tie(a.pid, a.index) < std::tie(b.pid, b.index); };
  std::sort(r.graphs.begin(), r.graphs.end(), order);
  std::sort(r.runtimes.begin(), r.runtimes.end(), order);
  return r;
}

struct Merged {
  SessionExport out;
  std::string device;
};

StatusOr<Merged> MergeRecords(const std::string& dir, const SessionRecords& r) {
  if (r.graphs.empty() && r.runtimes.empty()) {
    std::string why = !r.config.graph && !r.config.runtime
                          ? " (both collectors are off: start it with --enable-graph and/or --enable-runtime)"
                          : " (run a program under the environment `inspector-cli start` printed)";
    return InvalidArgumentError(dir + ": the session recorded nothing: no graph-*.json or runtime-*.json" + why);
  }
  std::set<int64_t> pids;
  for (const RecordFile& f : r.graphs) pids.insert(f.pid);
  for (const RecordFile& f : r.runtimes) pids.insert(f.pid);

  Merger merger(pids.size() > 1, r.graphs.size() > 1);
  const RecordFile* current = nullptr;
  try {
    for (const RecordFile& f : r.graphs) current = &f, merger.AddGraph(f);
    for (const RecordFile& f : r.runtimes) current = &f, merger.AddLaunches(f);
  } catch (const std::exception& e) {
    return InvalidArgumentError((fs::path(dir) / current->name).string() + ": missing or malformed field (" +
                                e.what() + ")");
  }
  Merged m;
  m.out.graphs = static_cast<int>(r.graphs.size());
  m.out.processes = static_cast<int>(pids.size());
  m.out.graph_tasks = merger.graph_tasks();
  m.out.launches = merger.launches();
  m.out.launches_merged = merger.merged();
  m.out.dropped = merger.dropped();
  m.device = merger.device();
  m.out.schedule = merger.Finish();
  return m;
}

// The structure of one layer of graph.json back as a Graph. Constants keep
// no data in graph.json: an empty tensor marks them as constants.
Graph LayerFromJson(const json& j, Layer layer) {
  Graph g(layer);
  for (const json& v : j.at("values")) {
    Value& value = g.GetOrAddValue(v.at("name").get<std::string>());
    if (v.at("constant").get<bool>()) value.constant = Tensor();
    value.is_graph_input = v.value("graph_input", false);
    value.is_graph_output = v.value("graph_output", false);
  }
  for (const json& nj : j.at("nodes")) {
    Node n;
    n.id = nj.at("node_id").get<int64_t>();
    n.layer = layer;
    n.op_type = nj.at("op_type").get<std::string>();
    n.domain = nj.at("domain").get<std::string>();
    n.name = nj.at("name").get<std::string>();
    n.name_space = nj.at("namespace").get<std::string>();
    for (const json& t : nj.at("inputs")) n.inputs.push_back(t.at("name").get<std::string>());
    for (const json& t : nj.at("outputs")) n.outputs.push_back(t.at("name").get<std::string>());
    n.fused_from = nj.at("fused_from").get<std::vector<int64_t>>();
    n.mapped_task_ids = nj.at("mapped_task_ids").get<std::vector<int64_t>>();
    n.executed = nj.at("executed").get<bool>();
    n.executable = nj.at("executable").get<bool>();
    if (!n.executed) n.not_executed_reason = nj.value("reason", "");
    n.not_executable_reason = nj.value("not_executable_reason", "");
    n.absorbed_into = nj.value("compiled_node_id", int64_t{-1});
    g.mutable_nodes().push_back(std::move(n));
  }
  g.inputs() = j.at("inputs").get<std::vector<std::string>>();
  g.outputs() = j.at("outputs").get<std::vector<std::string>>();
  return g;
}

StatusOr<SessionGraph> SessionGraphFromRecord(const RecordFile& f) {  // throws on a malformed field
  SessionGraph sg;
  sg.source = f.name;
  const json& j = f.body;
  sg.framework_known = j.at("framework_known").get<bool>();
  json g = j.at("graph");
  ExpandGraphJson(g);  // a record holds graph.json's form, which leaves out what this reads
  sg.model.framework = LayerFromJson(g.at("framework"), Layer::kFramework);
  sg.model.compiled = LayerFromJson(g.at("compiled"), Layer::kCompiled);
  OPSCOPE_RETURN_IF_ERROR(sg.model.framework.Rebuild().WithContext("framework graph"));
  OPSCOPE_RETURN_IF_ERROR(sg.model.compiled.Rebuild().WithContext("compiled graph"));
  Schedule& s = sg.schedule;
  s.stream_names = j.at("streams").get<std::vector<std::string>>();
  if (s.stream_names.empty()) throw std::out_of_range("no streams");
  // A run's schedule: compute streams first, the copy stream last.
  s.compute_streams = static_cast<int>(s.stream_names.size()) - 1;
  s.copy_stream = s.compute_streams;
  s.num_events = j.at("num_events").get<int64_t>();
  for (const json& tj : j.at("tasks")) {
    ScheduledTask t = SessionTaskFromJson(tj);
    if (t.desc.task_id != static_cast<int64_t>(s.tasks.size()) || t.desc.stream_id < 0 ||
        t.desc.stream_id >= s.num_streams()) {
      throw std::out_of_range("task " + std::to_string(t.desc.task_id) + " is out of order or names stream " +
                              std::to_string(t.desc.stream_id));
    }
    for (int64_t d : t.deps) {
      if (d < 0 || d >= t.desc.task_id) throw std::out_of_range("task " + std::to_string(t.desc.task_id) +
                                                                " depends on a later or unknown task");
    }
    s.tasks.push_back(std::move(t));
  }
  return sg;
}

}  // namespace

StatusOr<SessionExport> MergeSession(const std::string& dir) {
  OPSCOPE_ASSIGN_OR_RETURN(SessionRecords records, ReadSessionRecords(dir));
  OPSCOPE_ASSIGN_OR_RETURN(Merged m, MergeRecords(dir, records));
  return std::move(m.out);
}

StatusOr<SessionGraph> LastSessionGraph(const std::string& dir) {
  OPSCOPE_ASSIGN_OR_RETURN(SessionRecords records, ReadSessionRecords(dir));
  if (records.graphs.empty()) {
    return InvalidArgumentError(dir + ": the session collected no graph (no graph-*.json): start it with "
                                "`inspector-cli start --enable-graph` and run the program again");
  }
  const RecordFile& last = records.graphs.back();
  const std::string file = (fs::path(dir) / last.name).string();
  try {
    StatusOr<SessionGraph> sg = SessionGraphFromRecord(last);
    if (!sg.ok()) return std::move(sg).status().WithContext(file);
    sg->graphs_collected = static_cast<int>(records.graphs.size());
    return sg;
  } catch (const std::exception& e) {
    return InvalidArgumentError(file + ": missing or malformed field (" + e.what() + ")");
  }
}

StatusOr<SessionExport> ExportSession(const std::string& dir, int top_n) {
  OPSCOPE_ASSIGN_OR_RETURN(SessionRecords records, ReadSessionRecords(dir));
  OPSCOPE_ASSIGN_OR_RETURN(Merged m, MergeRecords(dir, records));
  SessionExport& out = m.out;
  const std::vector<RecordFile>& graphs = records.graphs;
  std::error_code ec;
  const std::string graph_file = dir + "/graph.json", trace_file = dir + "/trace.json",
                    summary_file = dir + "/summary.json";
  if (!graphs.empty()) {
    const RecordFile& last = graphs.back();
    json g = last.body.at("graph");
    g["session"] = {{"source", last.name},
                    {"graphs_collected", graphs.size()},
                    {"framework_known", last.body.value("framework_known", false)}};
    OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(graph_file, JsonText(g)).WithContext("graph.json"));
    out.files.push_back(graph_file);
  } else {
    fs::remove(graph_file, ec);  // an old export's graph.json would describe another run
  }
  OPSCOPE_RETURN_IF_ERROR(WriteTraceJson(trace_file, BuildTraceData(out.schedule, m.device)));
  out.files.push_back(trace_file);
  OPSCOPE_RETURN_IF_ERROR(WriteSummaryJson(summary_file, Summarize(out.schedule, top_n)));
  out.files.push_back(summary_file);
  return std::move(out);
}

}  // namespace opscope::graph
