#include "analysis/diagnose/diagnosis_timeline.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_field.h"
#include "core/json_text.h"
#include "core/trace_event.h"

namespace opscope {
namespace {

using nlohmann::json;

constexpr char kDiagnosisSchema[] = "opscope.diagnosis/1";

// What a field must hold; the *OrNull kinds also take null.
enum class Want { kString, kStringOrNull, kNumber, kNumberOrNull, kInt, kIntOrNull, kBool, kArray, kObject, kObjectOrNull };

const char* WantText(Want w) {
  switch (w) {
    case Want::kString: return "a string";
    case Want::kStringOrNull: return "a string or null";
    case Want::kNumber: return "a number";
    case Want::kNumberOrNull: return "a number or null";
    case Want::kInt: return "an integer";
    case Want::kIntOrNull: return "an integer or null";
    case Want::kBool: return "true or false";
    case Want::kArray: return "an array";
    case Want::kObject: return "an object";
    case Want::kObjectOrNull: return "an object or null";
  }
  return "?";
}

bool Holds(const json& v, Want w) {
  const bool null_ok = w == Want::kStringOrNull || w == Want::kNumberOrNull || w == Want::kIntOrNull ||
                       w == Want::kObjectOrNull;
  if (v.is_null() && null_ok) return true;
  switch (w) {
    case Want::kString: case Want::kStringOrNull: return v.is_string();
    case Want::kNumber: case Want::kNumberOrNull: return v.is_number();
    case Want::kInt: case Want::kIntOrNull: return v.is_number_integer();
    case Want::kBool: return v.is_boolean();
    case Want::kArray: return v.is_array();
    case Want::kObject: case Want::kObjectOrNull: return v.is_object();
  }
  return false;
}

// Checks fields against the schema, naming the first wrong one by its path
// ("snapshot.trajectory[3].start_us") and the file.
class SchemaCheck {
 public:
  explicit SchemaCheck(const std::string& source) : source_(source) {}

  Status Field(const json& parent, const std::string& key, const std::string& path, Want want) const {
    const std::string where = path.empty() ? key : path + "." + key;
    if (!parent.contains(key)) return Refuse(where + ": missing (should be " + WantText(want) + ")");
    if (!Holds(parent[key], want)) return Refuse(where + ": should be " + WantText(want));
    return Status::Ok();
  }
  Status Refuse(const std::string& what) const {
    return InvalidArgumentError(source_ + ": " + what + "; expected an " + kDiagnosisSchema +
                                " file, as ops-debug diagnose writes");
  }

 private:
  const std::string& source_;
};

// One trajectory record, checked.
struct Record {
  const json* j = nullptr;
  uint64_t seq = 0;
  std::string kind, device, state;
  int stream = -1;
  double start = 0;
  std::optional<double> end;
  bool failing = false;
};

StatusOr<std::vector<Record>> ReadTrajectory(const json& trajectory, const SchemaCheck& check) {
  std::vector<Record> out;
  for (size_t i = 0; i < trajectory.size(); ++i) {
    const json& r = trajectory[i];
    const std::string path = "snapshot.trajectory[" + std::to_string(i) + "]";
    if (!r.is_object()) return check.Refuse(path + ": should be an object");
    OPSCOPE_RETURN_IF_ERROR(check.Field(r, "seq", path, Want::kInt));
    OPSCOPE_RETURN_IF_ERROR(check.Field(r, "kind", path, Want::kString));
    OPSCOPE_RETURN_IF_ERROR(check.Field(r, "device", path, Want::kString));
    OPSCOPE_RETURN_IF_ERROR(check.Field(r, "stream", path, Want::kInt));
    OPSCOPE_RETURN_IF_ERROR(check.Field(r, "state", path, Want::kString));
    OPSCOPE_RETURN_IF_ERROR(check.Field(r, "start_us", path, Want::kNumber));
    OPSCOPE_RETURN_IF_ERROR(check.Field(r, "end_us", path, Want::kNumberOrNull));
    OPSCOPE_RETURN_IF_ERROR(check.Field(r, "failing", path, Want::kBool));
    OPSCOPE_RETURN_IF_ERROR(check.Field(r, "tensors", path, Want::kArray));
    Record rec{.j = &r, .seq = r["seq"].get<uint64_t>(), .kind = r["kind"].get<std::string>(),
               .device = r["device"].get<std::string>(), .state = r["state"].get<std::string>(),
               .stream = r["stream"].get<int>(), .start = r["start_us"].get<double>(),
               .failing = r["failing"].get<bool>()};
    if (!r["end_us"].is_null()) rec.end = r["end_us"].get<double>();
    if (rec.kind == "launch") {
      for (const char* key : {"op", "kernel", "op_id"}) OPSCOPE_RETURN_IF_ERROR(check.Field(r, key, path, Want::kString));
    }
    out.push_back(std::move(rec));
  }
  return out;
}

// A record's string field, "" when absent (sync records carry fewer).
std::string Text(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

bool IsUnfinished(const Record& r) { return r.state == "started, never finished"; }

// The buffers of a record's tensors, as the timeline's details show them.
json Buffers(const json& tensors, const char* role) {
  json out = json::array();
  for (const json& t : tensors) {
    if (t.is_object() && Text(t, "role") == role) out.push_back({{"name", Text(t, "name")}, {"address", StringMember(t, "address")},
                                                                 {"bytes", IntMember(t, "bytes", 0)}});
  }
  return out;
}

// The timeline of the trajectory (see the header for what is drawn how).
json TraceOf(const std::vector<Record>& records) {
  std::map<std::string, int> pid_of;
  std::set<std::pair<int, int>> lanes;
  double rec_begin = 0, rec_end = 0;
  bool any = false;
  for (const Record& r : records) {
    if (!pid_of.count(r.device)) {
      const int pid = static_cast<int>(pid_of.size()) + 1;
      pid_of[r.device] = pid;
    }
    lanes.insert({pid_of[r.device], r.stream});
    const double last = r.end ? std::max(r.start, *r.end) : r.start;
    rec_begin = any ? std::min(rec_begin, r.start) : r.start;
    rec_end = any ? std::max(rec_end, last) : last;
    any = true;
  }
  // A launch that never finished ran at least until the last thing recorded;
  // when it is itself the last, it still gets a bar wide enough to see.
  const double min_extent = std::max(1.0, 0.02 * (rec_end - rec_begin));
  json events = json::array();
  for (const auto& [device, pid] : pid_of) {
    events.push_back(trace_event::Metadata(pid, 0, "process_name", device));
  }
  for (const auto& lane : lanes) {
    const std::string name = lane.second >= 0 ? "stream " + std::to_string(lane.second) : "no stream";
    events.push_back(trace_event::Metadata(lane.first, lane.second, "thread_name", name));
  }
  // The latest record of each event, for the flow from a record to its waits.
  std::map<std::string, const Record*> recorded;
  int flow_id = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    const json& j = *r.j;
    const int pid = pid_of[r.device];
    json args = {{"seq", r.seq}, {"kind", r.kind}, {"state", r.state}, {"device", r.device}, {"stream", r.stream},
                 {"start_us", r.start}, {"end_us", r.end ? json(*r.end) : json(nullptr)}, {"failing", r.failing},
                 {"tensors", j["tensors"]}, {"inputs", Buffers(j["tensors"], "input")},
                 {"outputs", Buffers(j["tensors"], "output")}};
    for (const char* key : {"op", "op_id", "kernel", "attrs", "instance_key", "input_fingerprint", "error", "event"}) {
      if (!Text(j, key).empty()) args[key] = Text(j, key);
    }
    if (j.contains("issued_by") && j["issued_by"].is_object()) args["issued_by"] = j["issued_by"];
    if (j.contains("launch") && j["launch"].is_object()) {
      const json& l = j["launch"];
      for (const char* key : {"grid", "block", "vector_width"}) {
        if (l.contains(key)) args[key] = l[key];
      }
    }
    const bool bar = r.kind == "launch" || r.end.has_value();
    if (!bar) {
      events.push_back(trace_event::Instant(pid, r.stream, r.kind, r.kind == "memcpy" ? "memcpy" : "sync", r.start, args));
    } else {
      double end = r.start;
      if (r.end) {
        end = *r.end;
      } else if (IsUnfinished(r)) {
        end = std::max(rec_end, r.start + min_extent);
        args["unfinished"] = true;
        args["extent"] = "never finished: drawn to the end of the recording";
      } else {
        // Stream order says it ended before the next record on its stream began.
        end = rec_end;
        for (size_t k = i + 1; k < records.size(); ++k) {
          if (records[k].device == r.device && records[k].stream == r.stream && records[k].start >= r.start) {
            end = records[k].start;
            break;
          }
        }
        args["end_inferred"] = true;
        args["extent"] = "end not recorded: drawn to the next record on its stream";
      }
      const std::string op = Text(j, "op");
      events.push_back(trace_event::Complete(pid, r.stream, op.empty() ? r.kind : op, r.kind == "launch" ? "kernel" : r.kind,
                                             r.start, std::max(0.0, end - r.start), args));
    }
    const std::string event = Text(j, "event");
    if (event.empty()) continue;
    if (r.kind == "record") {
      recorded[event] = &r;
    } else if (r.kind == "wait" && recorded.count(event)) {
      const Record& from = *recorded[event];
      ++flow_id;
      const std::string name = "event " + event;
      events.push_back(trace_event::FlowStart(flow_id, pid_of[from.device], from.stream, from.start, name, "event"));
      events.push_back(trace_event::FlowEnd(flow_id, pid, r.stream, r.start, name, "event"));
    }
  }
  return {{"schema", "opscope.diagnosis_timeline/1"}, {"traceEvents", events}};
}

// The seqs of the launches a cause names, in the order it names them: by
// op_id; failing that, by "kernel NAME" (a hang names no op_id), the failing
// launch when it is one of them, else the last.
json LaunchesNamed(const json& cause, const std::vector<Record>& records) {
  std::string text = Text(cause, "cause");
  for (const json& e : cause["evidence"]) text += "\n" + e.get<std::string>();
  std::vector<std::pair<size_t, uint64_t>> by_op_id;  // (position in text, seq)
  std::vector<const Record*> by_kernel;
  for (const Record& r : records) {
    if (r.kind != "launch") continue;
    const std::string op_id = Text(*r.j, "op_id"), kernel = Text(*r.j, "kernel");
    const size_t at = op_id.empty() ? std::string::npos : text.find(op_id);
    if (at != std::string::npos) by_op_id.emplace_back(at, r.seq);
    if (!kernel.empty() && text.find("kernel " + kernel) != std::string::npos) by_kernel.push_back(&r);
  }
  json seqs = json::array();
  if (!by_op_id.empty()) {
    std::stable_sort(by_op_id.begin(), by_op_id.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [at, seq] : by_op_id) {
      if (std::find(seqs.begin(), seqs.end(), json(seq)) == seqs.end()) seqs.push_back(seq);
    }
  } else if (!by_kernel.empty()) {
    const auto failing = std::find_if(by_kernel.begin(), by_kernel.end(), [](const Record* r) { return r->failing; });
    seqs.push_back((failing != by_kernel.end() ? *failing : by_kernel.back())->seq);
  }
  return seqs;
}

StatusOr<json> PanelOf(const json& d, const std::vector<Record>& records, const SchemaCheck& check) {
  OPSCOPE_RETURN_IF_ERROR(check.Field(d, "causes", "", Want::kArray));
  json causes = json::array();
  for (size_t i = 0; i < d["causes"].size(); ++i) {
    const json& c = d["causes"][i];
    const std::string path = "causes[" + std::to_string(i) + "]";
    if (!c.is_object()) return check.Refuse(path + ": should be an object");
    for (const char* key : {"cause", "confidence", "rule", "fix"}) {
      OPSCOPE_RETURN_IF_ERROR(check.Field(c, key, path, Want::kString));
    }
    OPSCOPE_RETURN_IF_ERROR(check.Field(c, "evidence", path, Want::kArray));
    for (const json& e : c["evidence"]) {
      if (!e.is_string()) return check.Refuse(path + ".evidence: should be an array of strings");
    }
    causes.push_back({{"rank", i + 1}, {"cause", c["cause"]}, {"confidence", c["confidence"]}, {"rule", c["rule"]},
                      {"evidence", c["evidence"]}, {"fix", c["fix"]}, {"launches", LaunchesNamed(c, records)}});
  }
  const json& snapshot = d["snapshot"];
  OPSCOPE_RETURN_IF_ERROR(check.Field(snapshot, "stack", "snapshot", Want::kArray));
  OPSCOPE_RETURN_IF_ERROR(check.Field(snapshot, "threads", "snapshot", Want::kArray));
  json panel = {{"schema", "opscope.diagnosis_panel/1"}, {"status", d["status"]}, {"causes", causes},
                {"stack", snapshot["stack"]}, {"threads", snapshot["threads"]}};
  const auto copy = [&](const char* key, Want want) -> Status {
    if (!d.contains(key)) return Status::Ok();  // optional for the page; the checked ones are above
    if (!Holds(d[key], want)) return check.Refuse(std::string(key) + ": should be " + WantText(want));
    panel[key] = d[key];
    return Status::Ok();
  };
  OPSCOPE_RETURN_IF_ERROR(copy("signal", Want::kStringOrNull));
  OPSCOPE_RETURN_IF_ERROR(copy("exit_code", Want::kIntOrNull));
  OPSCOPE_RETURN_IF_ERROR(copy("command", Want::kArray));
  OPSCOPE_RETURN_IF_ERROR(copy("op", Want::kStringOrNull));
  OPSCOPE_RETURN_IF_ERROR(copy("op_id", Want::kStringOrNull));
  OPSCOPE_RETURN_IF_ERROR(copy("kernel", Want::kStringOrNull));
  OPSCOPE_RETURN_IF_ERROR(copy("fault", Want::kObjectOrNull));
  OPSCOPE_RETURN_IF_ERROR(copy("wall_s", Want::kNumber));
  OPSCOPE_RETURN_IF_ERROR(copy("device", Want::kStringOrNull));
  OPSCOPE_RETURN_IF_ERROR(copy("links", Want::kArray));
  OPSCOPE_RETURN_IF_ERROR(copy("static_findings", Want::kArray));
  OPSCOPE_RETURN_IF_ERROR(copy("notes", Want::kArray));
  OPSCOPE_RETURN_IF_ERROR(copy("sync_points", Want::kBool));
  const auto failing = std::find_if(records.begin(), records.end(), [](const Record& r) { return r.failing; });
  panel["failing_seq"] = failing != records.end() ? json(failing->seq) : json(nullptr);
  return panel;
}

// "my_pool: crashed (SIGSEGV)", "./app: clean (exit 0)".
std::string TitleOf(const json& d) {
  std::string what = d.contains("op") && d["op"].is_string() ? d["op"].get<std::string>() : "";
  if (what.empty() && d.contains("command") && d["command"].is_array() && !d["command"].empty() &&
      d["command"][0].is_string()) {
    what = d["command"][0].get<std::string>();
    what = what.substr(what.rfind('/') + 1);
  }
  std::string title = (what.empty() ? "" : what + ": ") + d["status"].get<std::string>();
  if (d.contains("signal") && d["signal"].is_string()) title += " (" + d["signal"].get<std::string>() + ")";
  else if (d.contains("exit_code") && d["exit_code"].is_number_integer()) {
    title += " (exit " + std::to_string(d["exit_code"].get<int>()) + ")";
  }
  return title;
}

}  // namespace

StatusOr<DiagnosisTimeline> DiagnosisTimelineFromJson(std::string_view diagnosis_json, const std::string& source) {
  const SchemaCheck check(source);
  json d;
  try {
    d = json::parse(diagnosis_json);
  } catch (const json::parse_error& e) {
    return check.Refuse("not JSON (at byte " + std::to_string(e.byte) + ")");
  }
  if (!d.is_object()) return check.Refuse("not a JSON object");
  if (!d.contains("schema") || !d["schema"].is_string()) return check.Refuse("no \"schema\" string");
  if (d["schema"] != kDiagnosisSchema) {
    return check.Refuse("schema \"" + d["schema"].get<std::string>() + "\", not \"" + kDiagnosisSchema + "\"");
  }
  OPSCOPE_RETURN_IF_ERROR(check.Field(d, "status", "", Want::kString));
  OPSCOPE_RETURN_IF_ERROR(check.Field(d, "snapshot", "", Want::kObject));
  OPSCOPE_RETURN_IF_ERROR(check.Field(d["snapshot"], "trajectory", "snapshot", Want::kArray));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<Record> records, ReadTrajectory(d["snapshot"]["trajectory"], check));
  OPSCOPE_ASSIGN_OR_RETURN(json panel, PanelOf(d, records, check));
  // Invalid UTF-8 (a kernel's message) is replaced, never thrown on.
  return DiagnosisTimeline{.trace = JsonText(TraceOf(records)), .panel = JsonText(panel), .title = TitleOf(d)};
}

}  // namespace opscope
