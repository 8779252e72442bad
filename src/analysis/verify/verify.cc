// ops-debug verify: diagnose first (supervised: a crash cannot take the
// verifier down), then, for a clean op instance, run and profile in-process.
#include "opscope/verify.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "analysis/report/report_json.h"
#include "core/json_text.h"
#include "opscope/npy.h"

namespace opscope {
namespace {

std::string Fixed(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

const char* GateStatusName(GateStatus s) {
  switch (s) {
    case GateStatus::kPassed: return "passed";
    case GateStatus::kFailed: return "failed";
    case GateStatus::kNotRun: return "not run";
  }
  return "not run";
}

bool VerifyResult::passed() const {
  for (const VerifyGate& g : gates) {
    if (g.status != GateStatus::kPassed) return false;
  }
  return !gates.empty();
}

const VerifyGate* VerifyResult::first_failed() const {
  for (const VerifyGate& g : gates) {
    if (g.status != GateStatus::kPassed) return &g;
  }
  return nullptr;
}

StatusOr<VerifyResult> VerifyOpInstance(const VerifyRequest& req) {
  VerifyResult v;
  v.max_bound_ratio = req.max_bound_ratio;
  OPSCOPE_ASSIGN_OR_RETURN(v.diagnosis, Diagnose(req.diagnose));
  const Diagnosis& d = v.diagnosis;
  const bool clean = d.status == DiagnosisStatus::kClean;
  VerifyGate run{"run", GateStatus::kNotRun, "", req.run_command};
  VerifyGate profile{"profile", GateStatus::kNotRun, "", req.profile_command};
  VerifyGate diagnose{"diagnose", clean ? GateStatus::kPassed : GateStatus::kFailed, "", req.diagnose_command};
  diagnose.detail = clean ? "clean under sync points and guard pages"
                                        : DiagnosisStatusName(d.status) + (d.causes.empty() ? "" : ": " + d.causes.front().cause);
  // Wrong numbers and nothing else: no crash, race or bad value to name here; run says how.
  if (!d.causes.empty() && d.causes.front().rule == "wrong-result") diagnose.detail = "outputs wrong (see run)";
  if (d.status == DiagnosisStatus::kCrashed || d.status == DiagnosisStatus::kHung) {
    // The op did not survive run: that gate fails first, with the same cause.
    run.status = GateStatus::kFailed;
    run.detail = "the kernel " + std::string(d.status == DiagnosisStatus::kHung ? "hung" : "crashed") + " under run (see diagnose)";
    profile.detail = "not run: the kernel does not finish";
  } else {
    auto report = ProfileOpInstance(req.profile);
    if (!report.ok()) return std::move(report).status();
    v.report = std::move(report).value();
    const OpRunReport& r = *v.report;
    run.status = r.passed() ? GateStatus::kPassed : GateStatus::kFailed;
    run.detail = r.passed() ? "matches its golden (" + r.golden + ")"
                            : r.kernel_error.empty() ? "does not match its golden: " + std::string(RunStatusName(r.status())) : r.kernel_error;
    if (!r.passed() || !r.profile) {
      profile.detail = "not judged: the kernel is wrong";
    } else {
      const RooflinePoint& p = r.profile->roofline;
      v.bound_ratio = p.slowdown();
      if (!p.has_cost || v.bound_ratio <= 0) {
        profile.status = GateStatus::kFailed;
        profile.detail = "the op has no cost model: no lower bound to be within (declare .Cost(...))";
      } else {
        const bool ok = v.bound_ratio <= req.max_bound_ratio;
        profile.status = ok ? GateStatus::kPassed : GateStatus::kFailed;
        profile.detail = "median " + Fixed(p.measured_us, "%.3g") + " us, " + Fixed(v.bound_ratio, "%.2f") +
                         "x its " + BoundName(p.bound) + "-bound lower bound of " + Fixed(p.lower_bound_us, "%.3g") +
                         " us (the gate: " + Fixed(req.max_bound_ratio, "%.2g") + "x)";
      }
    }
  }
  v.gates = {run, profile, diagnose};
  return v;
}

std::string VerifyReportJson(const VerifyResult& v) {
  nlohmann::json j = v.report ? OpReportJsonValue(*v.report) : nlohmann::json::object();
  if (!v.report) {
    j["schema"] = "opscope.report/1";
    j["op"] = v.diagnosis.op.empty() ? nlohmann::json() : nlohmann::json(v.diagnosis.op);
  }
  j["status"] = v.passed() ? "passed" : "failed";
  nlohmann::json diag = nlohmann::json::parse(DiagnosisJson(v.diagnosis));
  diag.erase("schema");
  // The child's op_id is another process's; the op instance key ties them.
  diag["linked_on"] = "instance key";
  j["diagnosis"] = diag;
  nlohmann::json gates = nlohmann::json::array();
  for (const VerifyGate& g : v.gates) {
    gates.push_back({{"gate", g.name}, {"status", GateStatusName(g.status)}, {"detail", g.detail}, {"repro", g.repro}});
  }
  const VerifyGate* first = v.first_failed();
  j["verify"] = {{"passed", v.passed()}, {"gates", gates},
                 {"first_failed", first ? nlohmann::json(first->name) : nlohmann::json()},
                 {"bound_ratio", v.bound_ratio > 0 ? nlohmann::json(v.bound_ratio) : nlohmann::json()},
                 {"max_bound_ratio", v.max_bound_ratio}};
  return JsonText(j, 2) + "\n";
}

Status WriteVerifyReport(const std::string& path, const VerifyResult& v) {
  return WriteFileAtomic(path, VerifyReportJson(v));
}

std::string FormatVerify(const VerifyResult& v) {
  std::string out;
  for (const VerifyGate& g : v.gates) {
    char line[64];
    std::snprintf(line, sizeof line, "%-9s %-8s ", g.name.c_str(), GateStatusName(g.status));
    out += std::string("gate ") + line + g.detail + "\n";
  }
  if (const VerifyGate* f = v.first_failed()) {
    out += "verify FAILED at the " + f->name + " gate; to reproduce it:\n  " + f->repro + "\n";
  } else {
    out += "verify PASSED: correct, within " + Fixed(v.max_bound_ratio, "%.2g") + "x of its lower bound, clean under diagnose\n";
  }
  return out;
}

}  // namespace opscope
