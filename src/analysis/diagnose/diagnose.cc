// Diagnose: supervise the program, read what its flight recorder kept, turn
// it into the snapshot, and let the rules, the static checks and the earlier
// reports speak.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "analysis/diagnose/attribution.h"
#include "analysis/diagnose/links.h"
#include "analysis/diagnose/race_check.h"
#include "analysis/diagnose/run_verdict.h"
#include "analysis/diagnose/snapshot.h"
#include "analysis/diagnose/supervise.h"
#include "analysis/diagnose/symbolize.h"
#include "analysis/static_check/static_check.h"
#include "capture/flight_recorder.h"
#include "core/file_util.h"
#include "core/text_format.h"
#include "opscope/diagnose.h"

#ifndef OPSCOPE_VERSION
#define OPSCOPE_VERSION "dev"
#endif

namespace opscope {
namespace {

namespace fs = std::filesystem;

// What a person calls the function: std::function's invoker names the
// callable it runs (a kernel's lambda), and "(anonymous namespace)::" says nothing.
std::string ReadableFunction(std::string fn) {
  const std::string handler = "std::_Function_handler<";
  if (fn.rfind(handler, 0) == 0) {
    int depth = 0;
    size_t comma = std::string::npos, end = std::string::npos;
    for (size_t i = handler.size(); i < fn.size() && end == std::string::npos; ++i) {
      const char c = fn[i];
      if (c == '<' || c == '(' || c == '{') ++depth;
      else if (c == ')' || c == '}') --depth;
      else if (c == '>') {
        if (depth == 0) end = i;
        else --depth;
      } else if (c == ',' && depth == 0 && comma == std::string::npos) comma = i;
    }
    if (comma != std::string::npos && end != std::string::npos) fn = fn.substr(comma + 2, end - comma - 2);
  }
  for (size_t p; (p = fn.find("(anonymous namespace)::")) != std::string::npos;) fn.erase(p, 23);
  return fn;
}

DiagFrame ToDiagFrame(const StackFrame& f) {
  return {.pc = f.pc, .function = ReadableFunction(f.function), .file = f.file, .module = f.module, .line = f.line};
}

// The variables that change how a kernel or library behaves.
std::map<std::string, std::string> RelevantEnvironment(const std::vector<std::pair<std::string, std::string>>& set) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    for (std::string_view prefix : {"OPSCOPE_", "OMP_", "OPENBLAS_", "CUDA_", "GOTO_", "MKL_"}) {
      if (kv.substr(0, prefix.size()) == prefix) {
        size_t eq = kv.find('=');
        if (eq != std::string_view::npos) env[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
      }
    }
  }
  for (const auto& [k, v] : set) env[k] = v;
  return env;
}

Status CheckOutputDir(const std::string& dir) {
  OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(dir, "output_dir"));
  if (!fs::is_directory(dir)) return InvalidArgumentError("output_dir " + dir + ": not a directory");
  if (access(dir.c_str(), W_OK) != 0) {
    return InvalidArgumentError("output_dir " + dir + ": not writable: " + std::strerror(errno));
  }
  return Status::Ok();
}

void StaticChecks(const DiagnoseRequest& req, Diagnosis& d) {
  std::string failing_kernel_fn;
  std::set<std::pair<std::string, int>> stack_lines;
  for (const DiagThread& t : d.threads) {
    for (const DiagFrame& f : t.frames) {
      if (!f.file.empty()) stack_lines.insert({fs::path(f.file).filename().string(), f.line});
    }
  }
  for (const std::string& src : req.sources) {
    auto r = CheckKernelSource(src, req.source_flags);
    if (!r.ok()) {
      d.static_notes.push_back("--source " + src + ": " + r.status().message() + " (going on with the dynamic evidence)");
      continue;
    }
    for (const std::string& e : r->parse_errors) d.static_notes.push_back(src + ": " + e);
    for (const StaticFinding& f : r->findings) {
      DiagStaticFinding s{.file = f.file, .severity = f.severity, .kernel = f.kernel, .check = f.check,
                          .message = f.message, .line = f.line, .column = f.column};
      // Two clues that agree: the finding lies in a function the failing
      // thread's stack runs through, or in the failing op's kernel.
      for (const DiagThread& t : d.threads) {
        for (const DiagFrame& fr : t.frames) {
          if (!f.kernel.empty() && fr.function.find(f.kernel) != std::string::npos) s.agrees = true;
        }
      }
      if (!d.kernel.empty() && !f.kernel.empty() &&
          (d.kernel.find(f.kernel) != std::string::npos || f.kernel.find(d.op) != std::string::npos)) {
        s.agrees = true;
      }
      d.static_findings.push_back(s);
    }
  }
  // Agreeing findings first; a finding that agrees backs the top cause.
  std::stable_sort(d.static_findings.begin(), d.static_findings.end(),
                   [](const auto& a, const auto& b) { return a.agrees && !b.agrees; });
  for (const DiagStaticFinding& s : d.static_findings) {
    if (!s.agrees || d.causes.empty()) continue;
    d.causes.front().evidence.push_back("static check agrees: " + s.file + ":" + std::to_string(s.line) + ":" +
                                        std::to_string(s.column) + " " + s.message + " [" + s.check + "] in " + s.kernel);
  }
}

}  // namespace

StatusOr<double> ParseDuration(const std::string& text) {
  const std::string bad = "timeout_s '" + text + "': expected a duration such as 10s, 500ms, 2m or 1.5";
  if (text.empty()) return InvalidArgumentError(bad);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || errno != 0 || !std::isfinite(v) || v <= 0) return InvalidArgumentError(bad);
  std::string unit(end);
  if (unit.empty() || unit == "s") return v;
  if (unit == "ms") return v / 1e3;
  if (unit == "m" || unit == "min") return v * 60;
  if (unit == "h") return v * 3600;
  return InvalidArgumentError(bad);
}

StatusOr<Diagnosis> Diagnose(const DiagnoseRequest& req) {
  if (req.argv.empty()) return InvalidArgumentError("diagnose: no program to run");
  OPSCOPE_ASSIGN_OR_RETURN(std::string program, ResolveProgram(req.argv[0]));
  OPSCOPE_RETURN_IF_ERROR(CheckOutputDir(req.output_dir));
  const std::string dir = fs::absolute(req.output_dir).lexically_normal().string();
  const std::string ring_path = dir + "/" + kFlightRingFile;
  std::error_code ec;
  fs::remove(ring_path, ec);  // a ring of an earlier run must not pass for this one's
  if (!req.run_report.empty()) fs::remove(req.run_report, ec);  // nor an earlier run's verdict

  SuperviseOptions sup;
  sup.argv = req.argv;
  sup.argv[0] = program;
  sup.env = {{kDiagnoseEnv, dir},
             {kDiagnoseSlotsEnv, std::to_string(req.slots)},
             {kDiagnoseSyncEnv, req.sync_points ? "1" : "0"},
             {"OPSCOPE_CHECKED_ALLOCATION", req.checked_allocation ? "1" : "0"}};
  // A program built with AddressSanitizer would turn its own faults into an
  // exit code: under diagnose the flight recorder owns the fault signals.
  std::string asan = std::getenv("ASAN_OPTIONS") ? std::getenv("ASAN_OPTIONS") : "";
  asan += std::string(asan.empty() ? "" : ":") + "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0";
  sup.env.emplace_back("ASAN_OPTIONS", asan);
  // UndefinedBehaviorSanitizer's halt_on_error would end the program at its
  // first report, before the fault the recorder is there to catch: the child
  // goes on as its unsanitised build would, and the report stays in its
  // stderr as evidence (the sanitizer-report rule reads it).
  std::string ubsan = std::getenv("UBSAN_OPTIONS") ? std::getenv("UBSAN_OPTIONS") : "";
  ubsan += std::string(ubsan.empty() ? "" : ":") + "halt_on_error=0";
  sup.env.emplace_back("UBSAN_OPTIONS", ubsan);
  sup.pid_env = kDiagnosePidEnv;
  sup.timeout_s = req.timeout_s;
  sup.echo = req.echo_output;
  Diagnosis d;
  std::string hang_stack_error;
  sup.on_timeout = [&](int pid) {
    auto stacks = ThreadStacksOfProcess(pid);
    if (!stacks.ok()) {
      hang_stack_error = stacks.status().message();
      return;
    }
    for (const ThreadStack& t : *stacks) {
      DiagThread dt{.tid = t.tid, .name = t.name};
      for (const StackFrame& f : t.frames) dt.frames.push_back(ToDiagFrame(f));
      d.threads.push_back(std::move(dt));
    }
  };
  OPSCOPE_ASSIGN_OR_RETURN(ChildOutcome child, Supervise(sup));

  d.command = req.argv;
  d.exit_code = child.exit_code;
  d.signal = child.signal;
  d.signal_name = child.signal ? SignalName(child.signal) : "";
  d.wall_s = child.wall_s;
  d.stderr_tail = child.stderr_tail;
  d.sync_points = req.sync_points;
  d.checked_allocation = req.checked_allocation;
  d.version = OPSCOPE_VERSION;
  d.environment = RelevantEnvironment(sup.env);
  if (child.timed_out) d.status = DiagnosisStatus::kHung;
  else if (child.signal) d.status = DiagnosisStatus::kCrashed;
  else if (child.exit_code != 0) d.status = DiagnosisStatus::kError;
  else d.status = DiagnosisStatus::kClean;
  if (!hang_stack_error.empty()) d.notes.push_back("the hung program's thread stacks could not be taken: " + hang_stack_error);
  // A crash or a hang is where stacks are shown: a build that takes none says why.
  if (d.status == DiagnosisStatus::kCrashed || d.status == DiagnosisStatus::kHung) {
    if (const std::string why = StacksOffReason(); !why.empty()) d.notes.push_back(why);
  }

  auto ring = ReadFlightRing(ring_path);
  RaceCheckResult races;
  const CrashRecord* crash = nullptr;
  int failing = -1;
  if (!ring.ok()) {
    // No ring at all: the program never started the recorder (it does not
    // load libopscope, or it ended before), not a recording gone wrong.
    d.notes.push_back(fs::exists(ring_path, ec) ? "no flight recording: " + ring.status().message()
                                                : "no flight recording: the program did not load libopscope (or ended before "
                                                  "it started), so only its exit, signal and stderr were seen");
  } else {
    const RingHeader& h = ring->header;
    d.trajectory = BuildTrajectory(*ring);
    d.launches_recorded = h.launches;
    d.sync_wait_ms = static_cast<double>(h.sync_wait_ns) / 1e6;
    d.summary_ms = static_cast<double>(h.summary_ns) / 1e6;
    d.record_ms = static_cast<double>(h.record_ns) / 1e6;
    d.run_ms = child.wall_s * 1e3;
    const double added = d.sync_wait_ms + d.summary_ms + d.record_ms;
    d.slowdown = d.run_ms > added && added > 0 ? d.run_ms / (d.run_ms - added) : 1;
    if (h.dropped_streams) {
      d.notes.push_back(std::to_string(h.dropped_streams) + " launches on streams past the recorder's " +
                        std::to_string(kFlightMaxStreams) + " were not kept");
    }
    if (h.crash.written) {
      crash = &ring->header.crash;
      d.fault_address = h.crash.fault_address;
      d.fault_message = h.crash.message;
      std::vector<uint64_t> pcs(h.crash.stack.pcs, h.crash.stack.pcs + std::min(h.crash.stack.depth, kFlightMaxStack));
      DiagThread t{.tid = h.crash.tid, .name = "", .faulting = true};
      for (const StackFrame& f : SymbolizeStack(pcs, ring->maps, 1)) t.frames.push_back(ToDiagFrame(f));
      d.threads.insert(d.threads.begin(), std::move(t));
    }
    races = FindRaces(*ring);
    if (d.status != DiagnosisStatus::kClean) failing = FindFailingLaunch(d.trajectory, d.status);
    if (failing >= 0) {
      DiagLaunch& l = d.trajectory[failing];
      l.failing = true;
      d.op = l.op, d.op_id = l.op_id, d.kernel = l.kernel, d.device = l.device;
      d.tensors = l.tensors;
    }
  }
  if (!req.run_report.empty() && d.status == DiagnosisStatus::kError && d.exit_code == 1) ReadRunVerdict(req.run_report, d);
  AttributionInput in{.diagnosis = &d, .crash = crash, .races = &races, .failing = failing};
  d.causes = Attribute(in);
  // A run that exited 0 but raced is not clean: the race is the finding.
  if (d.status == DiagnosisStatus::kClean && !d.causes.empty()) d.status = DiagnosisStatus::kError;
  StaticChecks(req, d);
  std::vector<std::string> history = req.history_dirs;
  history.insert(history.begin(), dir);
  d.links = LinkEarlierReports(d, history);
  return d;
}

}  // namespace opscope
