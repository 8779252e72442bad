#include "graph/ort/ort_profile.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <nlohmann/json.hpp>

#include "opscope/npy.h"
#include "core/json_field.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

constexpr std::string_view kKernelSuffix = "_kernel_time";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Microseconds, as onnxruntime writes them (integers); a negative or
// non-finite time is a broken file, not a time.
int64_t Micros(const JsonField& f) {
  const double v = f.Number();
  if (!std::isfinite(v) || v < 0 || v > 9e15) {
    f.Fail("expected a time in microseconds >= 0");
    return 0;
  }
  return static_cast<int64_t>(std::llround(v));
}

// [{"float": [1, 8, 16, 16]}] as outputs; an entry of another form is left out
// (its tensor keeps what the optimized model says of it).
std::vector<OrtKernelEvent::Output> Outputs(const json& args) {
  std::vector<OrtKernelEvent::Output> out;
  const auto it = args.find("output_type_shape");
  if (it == args.end() || !it->is_array()) return out;
  for (const json& o : *it) {
    if (!o.is_object() || o.size() != 1 || !o.begin().value().is_array()) return {};
    OrtKernelEvent::Output x{.type = o.begin().key()};
    for (const json& d : o.begin().value()) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) return {};
      x.dims.push_back(d.get<int64_t>());
    }
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace

StatusOr<OrtProfile> ReadOrtProfile(const std::string& path) {
  OPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  OPSCOPE_ASSIGN_OR_RETURN(json doc, ParseJsonText(text, path));
  // The Chrome trace format's object form as well, should a tool have wrapped it.
  if (doc.is_object() && doc.contains("traceEvents")) doc = std::move(doc["traceEvents"]);
  JsonFields fields(path);
  const JsonField events = fields.RootArray(doc);
  OPSCOPE_RETURN_IF_ERROR(fields.status());
  OrtProfile out;
  out.events = static_cast<int64_t>(events.Size());
  std::vector<OrtKernelEvent> kernels;
  for (size_t i = 0; i < events.Size(); ++i) {
    const JsonField e = events[i];
    const std::string cat = e.Has("cat") ? e["cat"].String() : "";
    const std::string name = e["name"].String();
    if (cat == "Session" && name == "model_run") {
      const int64_t ts = Micros(e["ts"]);
      out.runs.push_back({.start_us = ts, .end_us = ts + Micros(e["dur"])});
    } else if (cat == "Node" && EndsWith(name, kKernelSuffix)) {
      const JsonField args = e["args"];
      OrtKernelEvent k{.node = name.substr(0, name.size() - kKernelSuffix.size()),
                       .op_type = args["op_name"].String(),
                       .provider = args.Has("provider") ? args["provider"].String() : "",
                       .tid = e.Has("tid") ? e["tid"].Int() : 0,
                       .ts_us = Micros(e["ts"]),
                       .dur_us = Micros(e["dur"])};
      if (fields.ok()) k.outputs = Outputs(args.raw());
      kernels.push_back(std::move(k));
    }
    OPSCOPE_RETURN_IF_ERROR(fields.status());
  }
  if (kernels.empty()) {
    return InvalidArgumentError(path + ": no kernel event (cat \"Node\", name \"<node>_kernel_time\"): was the "
                                "session profiled (enable_profiling) while the model ran?");
  }
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const OrtKernelEvent& a, const OrtKernelEvent& b) { return a.ts_us < b.ts_us; });
  std::stable_sort(out.runs.begin(), out.runs.end(),
                   [](const OrtProfileRun& a, const OrtProfileRun& b) { return a.start_us < b.start_us; });
  // A profile written without model_run events (a tool's own trimming) is one run.
  if (out.runs.empty()) {
    out.runs.push_back({.start_us = kernels.front().ts_us, .end_us = kernels.back().ts_us + kernels.back().dur_us});
  }
  size_t r = 0;
  for (OrtKernelEvent& k : kernels) {
    while (r < out.runs.size() && out.runs[r].end_us < k.ts_us) ++r;
    if (r == out.runs.size() || k.ts_us < out.runs[r].start_us) {
      ++out.kernels_outside_runs;
      continue;
    }
    out.runs[r].kernels.push_back(std::move(k));
  }
  // A run that executed nothing (an early failure) tells nothing about the model.
  std::erase_if(out.runs, [](const OrtProfileRun& run) { return run.kernels.empty(); });
  if (out.runs.empty()) {
    return InvalidArgumentError(path + ": no kernel event falls inside a model_run event");
  }
  return out;
}

}  // namespace opscope::graph
