#include "analysis/diagnose/diagnosis_timeline.h"

#include <algorithm>
#include <cstdint>
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

// The trajectory's records; a wrong field is left in `f` (read as empty).
std::vector<Record> ReadTrajectory(const JsonField& trajectory) {
  std::vector<Record> out;
  for (size_t i = 0; i < trajectory.Size(); ++i) {
    const JsonField r = trajectory[i];
    Record rec{.j = &r.raw(), .seq = r["seq"].Uint(), .kind = r["kind"].String(), .device = r["device"].String(),
               .state = r["state"].String(), .stream = static_cast<int>(r["stream"].IntInRange(INT32_MIN, INT32_MAX)),
               .start = r["start_us"].Number(), .failing = r["failing"].Bool()};
    if (r["end_us"].Present()) rec.end = r["end_us"].Number();
    r["tensors"].Size();  // an array, read where the timeline shows it
    if (rec.kind == "launch") {
      for (const char* key : {"op", "kernel", "op_id"}) r[key].String();
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

json PanelOf(const JsonField& d, const std::vector<Record>& records) {
  json causes = json::array();
  const JsonField given = d["causes"];
  for (size_t i = 0; i < given.Size(); ++i) {
    const JsonField c = given[i];
    json cause = {{"rank", i + 1}};
    for (const char* key : {"cause", "confidence", "rule", "fix"}) cause[key] = c[key].String();
    json evidence = json::array();
    for (size_t k = 0; k < c["evidence"].Size(); ++k) evidence.push_back(c["evidence"][k].String());
    cause["evidence"] = evidence;
    cause["launches"] = LaunchesNamed(cause, records);
    causes.push_back(std::move(cause));
  }
  const JsonField snapshot = d["snapshot"];
  snapshot["stack"].Size();
  snapshot["threads"].Size();
  json panel = {{"schema", "opscope.diagnosis_panel/1"}, {"status", d["status"].raw()}, {"causes", causes},
                {"stack", snapshot["stack"].raw()}, {"threads", snapshot["threads"].raw()}};
  // Optional for the page; checked when there. `null_ok`: null means unknown.
  const auto copy = [&](const char* key, bool null_ok, auto check) {
    if (!d.Has(key)) return;
    const JsonField v = d[key];
    if (!(null_ok && v.raw().is_null())) check(v);
    panel[key] = v.raw();
  };
  const auto text = [](const JsonField& v) { v.String(); };
  const auto integer = [](const JsonField& v) { v.Int(); };
  const auto array = [](const JsonField& v) { v.Size(); };
  copy("signal", true, text);
  copy("exit_code", true, integer);
  copy("command", false, array);
  copy("op", true, text);
  copy("op_id", true, text);
  copy("kernel", true, text);
  copy("fault", true, [](const JsonField& v) { v.Object(); });
  copy("wall_s", false, [](const JsonField& v) { v.Number(); });
  copy("device", true, text);
  copy("links", false, array);
  copy("static_findings", false, array);
  copy("notes", false, array);
  copy("sync_points", false, [](const JsonField& v) { v.Bool(); });
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
  // Every refusal is core/json_field's one line, saying what file was expected.
  const auto refuse = [](const Status& st) {
    return InvalidArgumentError(st.message() + "; expected an " + kDiagnosisSchema + " file, as ops-debug diagnose writes");
  };
  StatusOr<json> parsed = ParseJsonText(diagnosis_json, source);
  if (!parsed.ok()) return refuse(parsed.status());
  const json& d = *parsed;
  JsonFields f(source);
  const JsonField root = f.Root(d);
  if (!f.ok()) return refuse(f.status());
  if (const std::string schema = root["schema"].String(); f.ok() && schema != kDiagnosisSchema) {
    root["schema"].Fail("\"" + schema + "\", not \"" + kDiagnosisSchema + "\"");
  }
  if (!f.ok()) return refuse(f.status());
  root["status"].String();
  std::vector<Record> records = ReadTrajectory(root["snapshot"]["trajectory"]);
  json panel = PanelOf(root, records);
  if (!f.ok()) return refuse(f.status());
  // Invalid UTF-8 (a kernel's message) is replaced, never thrown on.
  return DiagnosisTimeline{.trace = JsonText(TraceOf(records)), .panel = JsonText(panel), .title = TitleOf(d)};
}

}  // namespace opscope
