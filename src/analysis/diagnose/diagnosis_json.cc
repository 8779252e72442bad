// diagnosis.json: "opscope.diagnosis/1".
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/json_text.h"
#include "core/text_format.h"
#include "opscope/diagnose.h"
#include "opscope/npy.h"

namespace opscope {

const char* DiagnosisStatusName(DiagnosisStatus s) {
  switch (s) {
    case DiagnosisStatus::kClean: return "clean";
    case DiagnosisStatus::kCrashed: return "crashed";
    case DiagnosisStatus::kHung: return "hung";
    case DiagnosisStatus::kError: return "error";
  }
  return "error";
}
namespace {

using nlohmann::json;

json FiniteOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json TensorJson(const DiagTensor& t) {
  json j = {{"role", t.role}, {"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape},
            {"address", Hex(t.address)}, {"bytes", t.bytes}};
  if (!t.fingerprint.empty()) j["fingerprint"] = t.fingerprint;
  if (t.has_stats) {
    j["stats"] = {{"count", t.count}, {"nan", t.nan}, {"inf", t.inf},
                  {"min", FiniteOrNull(t.min)}, {"max", FiniteOrNull(t.max)}, {"mean", FiniteOrNull(t.mean)}};
  } else {
    j["stats"] = nullptr;
  }
  if (!t.first_bad.empty()) j["first_non_finite"] = t.first_bad;
  if (t.row >= 0) j["row"] = t.row;
  if (t.row >= 0 && t.role == "input") j["row_range"] = {FiniteOrNull(t.row_min), FiniteOrNull(t.row_max)};
  return j;
}

json FrameJson(const DiagFrame& f) {
  return {{"pc", Hex(f.pc)}, {"function", f.function}, {"file", f.file}, {"line", f.line}, {"module", f.module}};
}

}  // namespace

std::string DiagnosisJson(const Diagnosis& d) {
  json j;
  j["schema"] = "opscope.diagnosis/1";
  j["status"] = DiagnosisStatusName(d.status);
  j["signal"] = d.signal ? json(d.signal_name) : json(nullptr);
  j["signal_number"] = d.signal;
  j["exit_code"] = d.exit_code >= 0 ? json(d.exit_code) : json(nullptr);
  j["command"] = d.command;
  j["op"] = d.op.empty() ? json(nullptr) : json(d.op);
  j["op_id"] = d.op_id.empty() ? json(nullptr) : json(d.op_id);
  j["kernel"] = d.kernel.empty() ? json(nullptr) : json(d.kernel);
  j["wall_s"] = d.wall_s;
  j["fault"] = d.fault_address || !d.fault_message.empty()
                   ? json{{"address", Hex(d.fault_address)}, {"message", d.fault_message}}
                   : json(nullptr);
  json snapshot;
  snapshot["tensors"] = json::array();
  for (const DiagTensor& t : d.tensors) snapshot["tensors"].push_back(TensorJson(t));
  snapshot["trajectory"] = json::array();
  for (const DiagLaunch& l : d.trajectory) {
    json e = {{"seq", l.seq}, {"kind", l.kind}, {"device", l.device}, {"stream", l.stream_id}, {"state", l.state},
              {"start_us", l.start_us}, {"end_us", l.end_us >= 0 ? json(l.end_us) : json(nullptr)},
              {"failing", l.failing}};
    if (l.kind == "launch") {
      e["op"] = l.op, e["kernel"] = l.kernel, e["op_id"] = l.op_id, e["attrs"] = l.attrs;
      e["instance_key"] = l.instance_key, e["input_fingerprint"] = l.input_fingerprint;
      if (!l.grid.empty()) e["launch"] = {{"grid", l.grid}, {"block", l.block}, {"vector_width", l.vector_width}};
      if (!l.error.empty()) e["error"] = l.error;
    } else {
      if (l.event) e["event"] = Hex(l.event);
      if (!l.op.empty()) e["issued_by"] = {{"op", l.op}, {"op_id", l.op_id}};
    }
    e["tensors"] = json::array();
    for (const DiagTensor& t : l.tensors) e["tensors"].push_back(TensorJson(t));
    // The address ranges it reads and writes, as the race check used them.
    e["reads"] = json::array();
    e["writes"] = json::array();
    for (const DiagTensor& t : l.tensors) {
      (t.role == "input" ? e["reads"] : e["writes"]).push_back({{"begin", Hex(t.address)}, {"bytes", t.bytes}});
    }
    snapshot["trajectory"].push_back(e);
  }
  snapshot["stack"] = json::array();
  snapshot["threads"] = json::array();
  for (const DiagThread& t : d.threads) {
    json frames = json::array();
    for (const DiagFrame& f : t.frames) frames.push_back(FrameJson(f));
    if (t.faulting) snapshot["stack"] = frames;
    snapshot["threads"].push_back({{"tid", t.tid}, {"name", t.name}, {"faulting", t.faulting}, {"frames", frames}});
  }
  snapshot["environment"] = d.environment;
  snapshot["stderr_tail"] = d.stderr_tail;
  j["snapshot"] = snapshot;
  j["device"] = d.device.empty() ? json(nullptr) : json(d.device);
  j["version"] = d.version;
  j["causes"] = json::array();
  for (const DiagCause& c : d.causes) {
    j["causes"].push_back({{"cause", c.cause}, {"confidence", c.confidence}, {"rule", c.rule},
                           {"evidence", c.evidence}, {"fix", c.fix}});
  }
  j["static_findings"] = json::array();
  for (const DiagStaticFinding& f : d.static_findings) {
    j["static_findings"].push_back({{"file", f.file}, {"line", f.line}, {"column", f.column}, {"severity", f.severity},
                                    {"kernel", f.kernel}, {"check", f.check}, {"message", f.message},
                                    {"agrees_with_dynamic_evidence", f.agrees}});
  }
  j["static_notes"] = d.static_notes;
  j["links"] = json::array();
  for (const DiagLink& l : d.links) {
    j["links"].push_back({{"report", l.report}, {"kind", l.kind}, {"status", l.status}, {"op", l.op},
                          {"op_id_then", l.op_id}, {"instance_key", l.instance_key},
                          {"input_fingerprint_then", l.fingerprint_then}, {"input_fingerprint_now", l.fingerprint_now},
                          {"same_data", l.same_data}, {"text", l.text}, {"linked_on", "instance key"}});
  }
  j["sync_points"] = d.sync_points;
  j["checked_allocation"] = d.checked_allocation;
  j["slowdown"] = {{"factor", d.slowdown}, {"run_ms", d.run_ms}, {"sync_wait_ms", d.sync_wait_ms},
                   {"tensor_summaries_ms", d.summary_ms}, {"recording_ms", d.record_ms},
                   {"note", "timings under diagnose are slow by design: sync points after every launch, tensor "
                            "summaries, guard pages; the factor is the run over the run less what diagnose added, "
                            "each part a measured span (an upper bound: some waits would have happened anyway)"}};
  j["launches_recorded"] = d.launches_recorded;
  j["notes"] = d.notes;
  if (!d.run_status.empty()) j["run_verdict"] = {{"status", d.run_status}, {"lines", d.run_verdict}};
  // Invalid UTF-8 (a path, a kernel's message) is replaced, never thrown on.
  return JsonText(j, 2) + "\n";
}

Status WriteDiagnosisJson(const Diagnosis& d, const std::string& path) {
  return WriteFileAtomic(path, DiagnosisJson(d));
}

}  // namespace opscope
