// File: analysis/diagnose/diagnosis_timeline.h
// diagnosis.json ("opscope.diagnosis/1") turned into what the web UI draws:
// the snapshot's trajectory as a Chrome trace (the same timeline view that
// shows trace.json and ops-debug profile's timeline.json), and the rest of
// the diagnosis as a small panel document. The page only draws them; every
// decision (lanes, extents, which launch a cause names) is made here.
//
//   OPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadFile("diag/diagnosis.json"));
//   OPSCOPE_ASSIGN_OR_RETURN(DiagnosisTimeline t, DiagnosisTimelineFromJson(text, "diag/diagnosis.json"));
//   // t.trace: {"schema": "opscope.diagnosis_timeline/1", "traceEvents": [...]}
//   // t.panel: {"schema": "opscope.diagnosis_panel/1", "status": ..., "causes": [...], ...}
//
// The trace: one process per device (pid), one thread per stream (tid = the
// stream id; records outside any stream, -1, on a "no stream" lane). A launch
// is an X event from start_us to end_us; one that started and never finished
// runs to the end of the recording (the latest time any record holds) and
// has args.unfinished; a launch whose end the recorder inferred from stream
// order (end_us null, state finished) runs to the next record on its stream,
// with args.end_inferred. The failing launch has args.failing = true. Sync
// records (record, wait, stream/event/device sync) and copies without an end
// are instant events ("ph": "i") on their stream; a wait is joined to the
// record of its event by a flow arrow. Every event's args carry seq, kind,
// state and what the record holds (op, op_id, kernel, launch config, tensors
// with their stats, error).
#pragma once

#include <string>
#include <string_view>

#include "opscope/status.h"

namespace opscope {

struct DiagnosisTimeline {
  std::string trace;  // Chrome Trace Event Format, "opscope.diagnosis_timeline/1"
  std::string panel;  // "opscope.diagnosis_panel/1": status, causes (with the launches they name), stack, links
  std::string title;  // "my_pool: crashed (SIGSEGV)"
};

// `source` names the file in errors. InvalidArgument, naming the file and the
// field, when the text is not JSON or not an "opscope.diagnosis/1" document.
StatusOr<DiagnosisTimeline> DiagnosisTimelineFromJson(std::string_view diagnosis_json, const std::string& source);

}  // namespace opscope
