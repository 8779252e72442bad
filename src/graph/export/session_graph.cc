#include "graph/export/session_graph.h"

#include <unistd.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "capture/session.h"
#include "core/json_text.h"
#include "graph/export/graph_json.h"
#include "graph/export/trace_json.h"
#include "graph/run/mapping.h"
#include "opscope/npy.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

TaskKind KnownTaskKind(const std::string& name) {
  if (std::optional<TaskKind> k = TaskKindFromName(name)) return *k;
  throw std::invalid_argument("unknown task kind '" + name + "'");
}

json Dim3Json(const Dim3& d) { return {d.x, d.y, d.z}; }
Dim3 Dim3FromJson(const json& j) { return {j.at(0).get<int64_t>(), j.at(1).get<int64_t>(), j.at(2).get<int64_t>()}; }

// Which file each executed graph went to. The key is the graph object and its
// size: a later graph built at a freed graph's address differs in size almost
// always, and at worst rewrites that graph's file with its own run.
struct GraphFiles {
  std::mutex mu;
  std::map<std::tuple<const Graph*, size_t, size_t>, int64_t> index;
  bool warned = false;
};

GraphFiles& Files() {
  static GraphFiles* f = new GraphFiles();
  return *f;
}

}  // namespace

json SessionTaskJson(const ScheduledTask& t) {
  json j = {{"task_id", t.desc.task_id},
            {"node_id", t.desc.op_node_id},
            {"stream_id", t.desc.stream_id},
            {"kind", TaskKindName(t.desc.kind)},
            {"op_type", t.op_type},
            {"node_name", t.node_name},
            {"label", t.desc.label},
            {"value", t.value},
            {"kernel", t.desc.kernel_name},
            {"op_id", t.op_id},
            {"deps", t.deps},
            {"wait_events", t.wait_events},
            {"event_before", t.desc.event_before},
            {"event_after", t.desc.event_after},
            {"raw_ns", {t.raw_start_ns, t.raw_end_ns}},
            {"cal_ns", {t.cal_start_ns, t.cal_end_ns}},
            {"duration_us_raw", t.desc.duration_us_raw},
            {"duration_us_calibrated", t.desc.duration_us_calibrated}};
  if (t.launch_known) {
    j["launch"] = {{"grid", Dim3Json(t.launch.grid)},
                   {"block", Dim3Json(t.launch.block)},
                   {"vector_width", t.launch.vector_width}};
  } else {
    j["launch"] = nullptr;
  }
  return j;
}

ScheduledTask SessionTaskFromJson(const json& j) {
  ScheduledTask t;
  t.desc.task_id = j.at("task_id").get<int64_t>();
  t.desc.op_node_id = j.at("node_id").get<int64_t>();
  t.desc.stream_id = j.at("stream_id").get<int>();
  t.desc.kind = KnownTaskKind(j.at("kind").get<std::string>());
  t.op_type = j.at("op_type").get<std::string>();
  t.node_name = j.at("node_name").get<std::string>();
  t.desc.label = j.at("label").get<std::string>();
  t.value = j.at("value").get<std::string>();
  t.desc.kernel_name = j.at("kernel").get<std::string>();
  t.op_id = j.at("op_id").get<uint64_t>();
  t.deps = j.at("deps").get<std::vector<int64_t>>();
  t.wait_events = j.at("wait_events").get<std::vector<int64_t>>();
  t.desc.event_before = j.at("event_before").get<int64_t>();
  t.desc.event_after = j.at("event_after").get<int64_t>();
  t.raw_start_ns = j.at("raw_ns").at(0).get<int64_t>();
  t.raw_end_ns = j.at("raw_ns").at(1).get<int64_t>();
  t.cal_start_ns = j.at("cal_ns").at(0).get<int64_t>();
  t.cal_end_ns = j.at("cal_ns").at(1).get<int64_t>();
  t.desc.duration_us_raw = j.at("duration_us_raw").get<double>();
  t.desc.duration_us_calibrated = j.at("duration_us_calibrated").get<double>();
  const json& l = j.at("launch");
  t.launch_known = !l.is_null();
  if (t.launch_known) {
    t.launch.grid = Dim3FromJson(l.at("grid"));
    t.launch.block = Dim3FromJson(l.at("block"));
    t.launch.vector_width = l.at("vector_width").get<int>();
    t.desc.launch = t.launch;
  }
  return t;
}

void RecordSessionExecution(const Model* model, const Graph& compiled, const Schedule& schedule,
                            const ExecutionResult& result, const Device& device) {
  const SessionConfig* session = ActiveSession();
  if (session == nullptr || !session->graph) return;
  GraphFiles& files = Files();
  std::lock_guard<std::mutex> lock(files.mu);
  const auto key = std::make_tuple(&compiled, compiled.nodes().size(), schedule.tasks.size());
  auto [it, added] = files.index.emplace(key, static_cast<int64_t>(files.index.size()));

  // Mapping labels tasks and marks nodes: do it on copies, the caller's stay as they were.
  Model m;
  if (model != nullptr) {
    m = *model;
  } else {
    m.compiled = compiled;
  }
  Schedule s = schedule;
  Status st = MapTasks(m, s);
  json tasks = json::array(), streams = json::array();
  for (const ScheduledTask& t : s.tasks) tasks.push_back(SessionTaskJson(t));
  for (int i = 0; i < s.num_streams(); ++i) streams.push_back(StreamName(s, i));
  const int64_t pid = ::getpid();
  json j = {{"schema", kSessionGraphSchema},
            {"pid", pid},
            {"index", it->second},
            {"device", device.name()},
            {"framework_known", model != nullptr},
            {"graph", json::parse(GraphJsonText(m, {}))},  // graph.json's form, as export writes it
            {"streams", std::move(streams)},
            {"device_stream_ids", result.device_stream_ids},
            {"num_events", s.num_events},
            {"tasks", std::move(tasks)}};
  if (st.ok()) {
    st = WriteFileAtomic(session->dir + "/" + SessionGraphFileName(pid, it->second), JsonText(j) + "\n");
  }
  if (!st.ok() && !files.warned) {
    files.warned = true;
    std::fprintf(stderr, "opscope: session: graph collector: %s\n", st.ToString().c_str());
  }
}

}  // namespace opscope::graph
