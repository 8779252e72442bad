// File: opscope/verify.h
// ops-debug verify: the three modes on one op instance, in the order a
// team's acceptance of a new operator uses them, as one CI gate:
//   run       correct against its golden
//   profile   its median time within --max-bound-ratio (2x) of its lower bound
//   diagnose  clean under sync points and guard pages
//
//   VerifyRequest req{.profile = profile_request, .diagnose = diagnose_request};
//   OPSCOPE_ASSIGN_OR_RETURN(VerifyResult v, VerifyOpInstance(req));
//   if (const VerifyGate* g = v.first_failed()) std::cout << g->name << " failed: " << g->repro;
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "opscope/diagnose.h"
#include "opscope/profile.h"
#include "opscope/report.h"

namespace opscope {

struct VerifyRequest {
  ProfileRequest profile;    // the op instance (every flag of run) and how to time it
  DiagnoseRequest diagnose;  // argv: the same op instance as an `ops-debug run` child
  double max_bound_ratio = 2;
  // The commands that show each gate alone (printed when it fails).
  std::string run_command, profile_command, diagnose_command;
};

// A gate's verdict, as report.json writes it: "passed", "failed", "not run".
enum class GateStatus { kPassed, kFailed, kNotRun };
const char* GateStatusName(GateStatus s);

struct VerifyGate {
  std::string name;    // "run" | "profile" | "diagnose"
  GateStatus status = GateStatus::kNotRun;
  std::string detail;  // one line: why
  std::string repro;
};

struct VerifyResult {
  std::vector<VerifyGate> gates;     // run, profile, diagnose
  Diagnosis diagnosis;
  std::optional<OpRunReport> report;  // run and profile, when the op ran in-process
  double bound_ratio = -1;           // median device time over the lower bound; -1 unknown
  double max_bound_ratio = 2;
  bool passed() const;
  const VerifyGate* first_failed() const;
};

// The supervised diagnose gate runs first, so a kernel that crashes or hangs
// fails without taking the verifier down; only a clean one is then run and
// profiled in this process. An op without a cost model cannot pass the
// profile gate: it has no lower bound to be within.
StatusOr<VerifyResult> VerifyOpInstance(const VerifyRequest& request);

// report.json (opscope.report/1) with the run and profile sections, plus
// "diagnosis" and "verify" (the gates), written atomically.
std::string VerifyReportJson(const VerifyResult& result);
Status WriteVerifyReport(const std::string& path, const VerifyResult& result);
std::string FormatVerify(const VerifyResult& result);

}  // namespace opscope
