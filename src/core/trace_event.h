// File: core/trace_event.h
// The events of the Chrome Trace Event Format (what Perfetto and
// chrome://tracing open) as our timelines write them: ops-debug profile's
// timeline.json and a diagnosis' trajectory make every event here, so a
// field is spelled one way everywhere, and JsonText writes them (invalid
// UTF-8 in a name becomes U+FFFD). A run's trace.json (graph/export/
// trace_json.cc) writes the same events byte by byte: a million tasks do
// not go through a JSON document.
//
//   events.push_back(trace_event::Metadata(1, 0, "process_name", "host"));
//   events.push_back(trace_event::Complete(1, 1, "Relu", "api", ts_us, dur_us, args));
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace opscope::trace_event {

// "M": a process's or thread's name ("process_name", "thread_name").
inline nlohmann::json Metadata(int64_t pid, int64_t tid, const std::string& what, const std::string& name) {
  return {{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", what}, {"args", {{"name", name}}}};
}

// "X": a bar from ts for dur (microseconds).
inline nlohmann::json Complete(int64_t pid, int64_t tid, const std::string& name, const std::string& cat, double ts,
                               double dur, nlohmann::json args) {
  return {{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"name", name}, {"cat", cat},
          {"ts", ts},  {"dur", dur}, {"args", std::move(args)}};
}

// "i" on its thread's lane.
inline nlohmann::json Instant(int64_t pid, int64_t tid, const std::string& name, const std::string& cat, double ts,
                              nlohmann::json args) {
  return {{"ph", "i"}, {"s", "t"}, {"pid", pid}, {"tid", tid}, {"ts", ts},
          {"name", name}, {"cat", cat}, {"args", std::move(args)}};
}

// "s" and "f": an arrow from one event to another, joined by `id`; the end
// binds to the enclosing slice ("bp": "e") so it lands on the bar it points at.
inline nlohmann::json FlowStart(int64_t id, int64_t pid, int64_t tid, double ts, const std::string& name,
                                const std::string& cat) {
  return {{"ph", "s"}, {"id", id}, {"pid", pid}, {"tid", tid}, {"ts", ts}, {"name", name}, {"cat", cat}};
}
inline nlohmann::json FlowEnd(int64_t id, int64_t pid, int64_t tid, double ts, const std::string& name,
                              const std::string& cat) {
  return {{"ph", "f"}, {"bp", "e"}, {"id", id}, {"pid", pid}, {"tid", tid}, {"ts", ts}, {"name", name}, {"cat", cat}};
}

}  // namespace opscope::trace_event
