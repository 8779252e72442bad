// File: opscope/diagnose.h
// ops-debug diagnose as a library: run a program on libopscope under
// supervision, with the flight recorder, sync points and guard pages on, and
// say why it crashed, hung, failed or raced, from what it recorded before.
//
//   DiagnoseRequest req;
//   req.argv = {"/usr/bin/inspector-cli", "run", "model.onnx", "--plugin", "libx.so"};
//   req.output_dir = "diag";
//   OPSCOPE_ASSIGN_OR_RETURN(Diagnosis d, Diagnose(req));
//   // d.status: "clean" | "crashed" | "hung" | "error"; d.causes ranked, most likely first.
//   OPSCOPE_RETURN_IF_ERROR(WriteDiagnosisJson(d, "diag/diagnosis.json"));
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "opscope/status.h"

namespace opscope {

struct DiagnoseRequest {
  std::vector<std::string> argv;   // the program and its arguments; argv[0] a path or a name on PATH
  std::string output_dir = "diagnose";
  double timeout_s = 10;           // a run past it is hung: its threads' stacks are taken, then it is killed
  bool sync_points = true;
  bool checked_allocation = true;
  uint32_t slots = 64;             // launches kept per stream
  std::vector<std::string> history_dirs;  // earlier run/profile reports to link op instances with
  std::vector<std::string> sources;       // kernel sources for the static checks (--source)
  std::vector<std::string> source_flags;  // their compile flags
  bool echo_output = true;         // pass the program's stdout/stderr through while keeping their tail
  // Where an `ops-debug run` child writes its report.json: a run that fails
  // without crashing is explained from its verdict, pattern and findings.
  std::string run_report;
};

struct DiagTensor {
  std::string role;  // "input" | "output"
  std::string name, dtype;
  std::vector<int64_t> shape;
  uint64_t address = 0, bytes = 0;
  std::string fingerprint;  // hex; "" when not host-readable
  bool has_stats = false;
  int64_t count = 0, nan = 0, inf = 0;
  double min = 0, max = 0, mean = 0;
  std::vector<int64_t> first_bad;  // an output's first NaN/Inf, as coordinates; empty if none located
  int64_t row = -1;                // the row (all dims but the last) that element lies in
  double row_min = 0, row_max = 0; // an input's range over that row
};

struct DiagLaunch {
  uint64_t seq = 0;          // the process-wide enqueue order
  std::string kind;          // "launch" | "record" | "wait" | "memcpy" | "stream sync" | "event sync" | "device sync"
  std::string op, kernel, device, op_id, instance_key, input_fingerprint, attrs, error;
  int stream_id = -1;
  std::string state;         // "finished" | "failed" | "started, never finished" | "rejected" |
                             // "side launch (buffers: the op's tensors and its allocations before it)"
  double start_us = 0, end_us = -1;  // since the recorder started; end -1: never
  std::vector<int64_t> grid, block;
  int vector_width = 0;
  std::vector<DiagTensor> tensors;
  uint64_t event = 0;        // record/wait/event sync
  bool failing = false;      // the launch the diagnosis is about
};

struct DiagFrame {
  uint64_t pc = 0;
  std::string function, file, module;
  int line = 0;
};

struct DiagThread {
  int tid = 0;
  std::string name;
  bool faulting = false;
  std::vector<DiagFrame> frames;
};

struct DiagCause {
  std::string cause;       // one line: what went wrong, naming the op, tensor, kernel
  std::string confidence;  // "high" | "medium" | "low"
  std::string rule;        // "out-of-bounds" | "hang" | "nan-origin" | "upstream-values" | "shape" | "race" | ...
  std::vector<std::string> evidence;  // the facts and numbers that fired the rule
  std::string fix;         // the direction of a fix
  double score = 0;        // ranks the list
};

struct DiagStaticFinding {
  std::string file, severity, kernel, check, message;
  int line = 0, column = 0;
  bool agrees = false;  // lies in the kernel the dynamic evidence names
};

struct DiagLink {
  std::string report;        // the earlier report file
  std::string kind;          // "run" | "profile"
  std::string status;        // its status ("passed", ...)
  std::string op, op_id, instance_key;
  std::string fingerprint_then, fingerprint_now;
  bool same_data = false;
  std::string text;          // "this op instance passed ops-debug run with input fingerprint X; ..."
};

// How the supervised program ended, as diagnosis.json writes it:
// "clean", "crashed" (a signal), "hung" (past the timeout), "error" (a
// nonzero exit, or a clean exit with a cause found).
enum class DiagnosisStatus { kClean, kCrashed, kHung, kError };
const char* DiagnosisStatusName(DiagnosisStatus s);

struct Diagnosis {
  DiagnosisStatus status = DiagnosisStatus::kClean;
  int signal = 0;      // the signal that ended the program, 0 if none
  std::string signal_name;
  int exit_code = -1;  // -1 when it died of a signal
  std::vector<std::string> command;
  std::string op, op_id, kernel;  // the failing launch, "" when none
  double wall_s = 0;
  // The child's fault, when one was caught.
  uint64_t fault_address = 0;
  std::string fault_message;
  std::string stderr_tail;
  // The snapshot.
  std::vector<DiagTensor> tensors;      // of the failing launch
  std::vector<DiagLaunch> trajectory;   // every stream's last records, enqueue order
  std::vector<DiagThread> threads;      // the faulting thread (crash), every thread (hang)
  std::map<std::string, std::string> environment;  // OPSCOPE_*, OMP_*, OPENBLAS_*, CUDA_*
  std::string device, version;
  std::vector<DiagCause> causes;
  std::vector<DiagStaticFinding> static_findings;
  std::vector<std::string> static_notes;  // a source libclang could not parse, ...
  std::vector<DiagLink> links;
  bool sync_points = true, checked_allocation = true;
  // Measured cost of diagnosing, in the child: each part a span.
  double sync_wait_ms = 0, summary_ms = 0, record_ms = 0, run_ms = 0;
  double slowdown = 1;  // run / (run - what diagnose added): an upper bound
  uint64_t launches_recorded = 0;
  std::vector<std::string> notes;  // what the diagnosis could not see, said once
  // An `ops-debug run` child's own verdict, read from its report.json when it
  // exited 1: "failed" / "nondeterministic", and a line per failing output
  // (its numbers, pattern and findings) or per difference between repeats.
  std::string run_status;
  std::vector<std::string> run_verdict;
};

// Runs req.argv under supervision; the error is for what stops it before the
// program runs (a missing program, an unwritable folder): the program's own
// failure is the Diagnosis.
StatusOr<Diagnosis> Diagnose(const DiagnoseRequest& req);

// "opscope.diagnosis/1", written atomically.
Status WriteDiagnosisJson(const Diagnosis& d, const std::string& path);
std::string DiagnosisJson(const Diagnosis& d);
// The human summary ops-debug diagnose prints.
std::string FormatDiagnosis(const Diagnosis& d);

// Parses "10s", "500ms", "2m", "1.5" (seconds); the error names the value.
StatusOr<double> ParseDuration(const std::string& text);

}  // namespace opscope
