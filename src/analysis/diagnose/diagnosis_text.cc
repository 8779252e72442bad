// The summary ops-debug diagnose prints: the verdict, the causes with their
// evidence, then the snapshot a person reads to check them.
#include <algorithm>
#include <cstdio>

#include "analysis/diagnose/attribution.h"
#include "core/text_format.h"
#include "opscope/diagnose.h"

namespace opscope {
namespace {

std::string TensorLine(const DiagTensor& t) {
  std::string s = t.role + " " + t.name + "  " + ShapeText(t);
  if (t.has_stats) {
    s += "  min " + ShortNum(t.min) + "  max " + ShortNum(t.max) + "  mean " + ShortNum(t.mean) + "  NaN " +
         std::to_string(t.nan) + "  Inf " + std::to_string(t.inf);
  } else {
    s += "  (no summary)";
  }
  if (!t.fingerprint.empty()) s += "  fingerprint " + t.fingerprint.substr(0, 8);
  return s;
}

std::string FrameLine(const DiagFrame& f) {
  std::string s = f.function.empty() ? "??" : f.function;
  if (s.size() > 90) s = s.substr(0, 87) + "...";
  if (!f.file.empty()) s += "  at " + f.file + ":" + std::to_string(f.line);
  else if (!f.module.empty()) s += "  (" + f.module.substr(f.module.rfind('/') + 1) + ")";
  return s;
}

// Times and ratios to three significant digits: "0.0724 s", "1.07x".
std::string Sig3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

std::string FormatDiagnosis(const Diagnosis& d) {
  std::string out = std::string("diagnose  ") + DiagnosisStatusName(d.status);
  if (d.signal) out += "  " + d.signal_name;
  else if (d.exit_code >= 0) out += "  exit " + std::to_string(d.exit_code);
  out += "  after " + Sig3(d.wall_s) + " s\n";
  if (!d.op.empty()) {
    out += "  in op " + d.op + "  kernel " + d.kernel + "  op_id " + d.op_id + "  on " + d.device + "\n";
  }
  if (!d.fault_message.empty()) out += "  fault  " + d.fault_message + "\n";
  if (d.causes.empty()) {
    out += d.status == DiagnosisStatus::kClean ? "no cause: the run is clean\n" : "no rule fired: see the snapshot below\n";
  } else {
    out += "causes, most likely first\n";
    for (size_t i = 0; i < d.causes.size(); ++i) {
      const DiagCause& c = d.causes[i];
      out += "  " + std::to_string(i + 1) + ". [" + c.confidence + "] " + c.cause + "\n";
      for (const std::string& e : c.evidence) out += "       - " + e + "\n";
      out += "       fix: " + c.fix + "\n";
    }
  }
  for (const DiagThread& t : d.threads) {
    if (!t.faulting && d.status != DiagnosisStatus::kHung) continue;
    out += std::string(t.faulting ? "stack of the faulting thread " : "stack of thread ") + std::to_string(t.tid) +
           (t.name.empty() ? "" : " (" + t.name + ")") + "\n";
    const size_t shown = std::min<size_t>(t.frames.size(), 12);
    for (size_t i = 0; i < shown; ++i) out += "  #" + std::to_string(i) + " " + FrameLine(t.frames[i]) + "\n";
    if (t.frames.size() > shown) out += "  ... " + std::to_string(t.frames.size() - shown) + " more frames\n";
  }
  if (!d.tensors.empty()) {
    out += "tensors of " + d.op + "\n";
    for (const DiagTensor& t : d.tensors) out += "  " + TensorLine(t) + "\n";
  }
  if (!d.trajectory.empty()) {
    const size_t first = d.trajectory.size() > 12 ? d.trajectory.size() - 12 : 0;
    out += "trajectory (" + std::to_string(d.trajectory.size() - first) + " of " + std::to_string(d.trajectory.size()) +
           " records kept, enqueue order)\n";
    for (size_t i = first; i < d.trajectory.size(); ++i) {
      const DiagLaunch& l = d.trajectory[i];
      std::string what = l.kind == "launch" ? l.op + "  " + l.kernel : l.kind + (l.op.empty() ? "" : " by " + l.op);
      out += std::string(l.failing ? "  > " : "    ") + "#" + std::to_string(l.seq) + "  " + l.device + "/" +
             std::to_string(l.stream_id) + "  " + what + "  " + l.state + (l.failing ? "   <- here" : "") + "\n";
    }
  }
  for (const DiagStaticFinding& f : d.static_findings) {
    out += std::string(f.agrees ? "static (agrees) " : "static ") + f.file + ":" + std::to_string(f.line) + ":" +
           std::to_string(f.column) + ": " + f.severity + ": " + f.message + " [" + f.check + "] in " + f.kernel + "\n";
  }
  for (const std::string& n : d.static_notes) out += "static: " + n + "\n";
  for (const DiagLink& l : d.links) out += "link  " + l.text + "\n";
  for (const std::string& n : d.notes) out += "note  " + n + "\n";
  if (d.launches_recorded == 0) return out;  // nothing was timed: a program not on libopscope
  out += "timings under diagnose are slow by design (" + std::string(d.sync_points ? "sync points on" : "sync points off") +
         (d.checked_allocation ? ", guard pages" : "") + ", tensor summaries): at most " + Sig3(d.slowdown) +
         "x slower, diagnose added " + Sig3(d.sync_wait_ms + d.summary_ms + d.record_ms) + " ms to a " +
         Sig3(d.run_ms) + " ms run\n";
  return out;
}

}  // namespace opscope
